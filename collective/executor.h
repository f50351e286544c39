// Runs a Schedule on this rank's buffers with its connections.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "collective/op.h"
#include "collective/schedule.h"
#include "collective/tuning.h"
#include "transport/connection.h"

namespace cohort::collective {

struct ExecBuffers {
  const char* input = nullptr;
  char* output = nullptr;
  char* scratch = nullptr;
};

/// `conns[p]` is the connection to group rank p (null for self). This rank and
/// every peer of the schedule exchange the operation's fingerprint: before the
/// first round (a small first round travels with it, its receives held aside
/// until it passed), or, when the rounds before the last new partner write
/// scratch only (recursive doubling), with the first round that meets each
/// peer. A difference fails the operation on both sides with kMismatch naming
/// the parameter and both values, and no buffer is touched. Errors name
/// the operation (op.describe()); the timeout error also names the round and the
/// peer(s) still pending. Once `*abort` reads true, the wait in progress returns
/// kAborted within about 50 ms. `tuning`: the communicator's (whether the node
/// is crowded, transport::WaitControl::crowded; what a fused first round holds).
Status execute(const Schedule& schedule, const ExecBuffers& buffers,
               const std::vector<transport::Connection*>& conns,
               const transport::Reduction& reduction, const OpDesc& op, int rank, Deadline deadline,
               const std::atomic<bool>* abort, const Tuning& tuning);

/// The controls of a collective's waits: `abort`, slow waits noted in the
/// running operation's history (noteWait), and `crowded`.
transport::WaitControl waitControl(const std::atomic<bool>* abort, bool crowded = true);

}  // namespace cohort::collective
