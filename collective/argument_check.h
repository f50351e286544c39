// The executor's argument check: every rank of a schedule sends its call's
// fingerprint to each peer the schedule talks to and compares what it receives,
// before its data moves (or with a first round that writes nothing the caller
// sees). Private to collective/.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collective/op.h"
#include "collective/schedule.h"
#include "common/wait.h"
#include "transport/connection.h"

namespace cohort::collective {

/// The fingerprint exchange with every peer the schedule talks to. Reused by
/// one thread's calls (cleared by the caller), so that a call allocates nothing.
struct ArgumentCheck {
  std::vector<int> peers;
  std::vector<transport::Connection*> conns;
  std::array<std::uint64_t, 4> mine{};
  std::vector<std::array<std::uint64_t, 4>> theirs;
  std::vector<std::uint64_t> recvNumber;  // the connection's count once it arrived
  std::vector<std::uint64_t> sendNumber;  // the connection's count once ours left
};

/// Adds the peers of `round` that `check` does not have yet (in step order).
void addNewPeers(const std::vector<Step>& round, ArgumentCheck* check);
/// Posts the fingerprint exchange with check->peers[from...]; check->mine is set.
Status postCheckFrom(std::size_t from, const std::vector<transport::Connection*>& conns,
                     ArgumentCheck* check);
/// Every peer of `schedule`, then the exchange with them.
Status postCheck(const Schedule& schedule, const std::vector<transport::Connection*>& conns,
                 const OpDesc& op, ArgumentCheck* check);
/// The first peer whose fingerprint arrived and differs from ours, or -1.
int firstDifference(const ArgumentCheck& check);
/// Once the check's wait ended (`waited`): kMismatch (mismatchError) naming the
/// first difference, or ok. After a failed wait without a difference, the
/// fingerprints still in flight are awaited first; on a difference, this
/// rank's own are sent first (each for a short grace).
Status checkResult(const ArgumentCheck& check, const Status& waited, int rank, const OpDesc& op,
                   Deadline deadline, const std::atomic<bool>* abort);

}  // namespace cohort::collective
