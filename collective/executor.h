// Runs a Schedule on this rank's buffers with its connections.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "collective/op.h"
#include "collective/schedule.h"
#include "collective/tuning.h"
#include "transport/connection.h"

namespace cohort::collective {

class SharedGroup;

struct ExecBuffers {
  const char* input = nullptr;
  char* output = nullptr;
  char* scratch = nullptr;
  /// A shared schedule's group (the members' buffers and barriers); null otherwise.
  SharedGroup* group = nullptr;
};

/// The ranks of one node that map each other's buffers (the mesh): the
/// barriers of a shared schedule (its signal and wait steps) and the members'
/// buffers. Implemented by whoever owns the mapping; used by one thread at a time.
class SharedGroup {
 public:
  virtual ~SharedGroup() = default;
  /// Arrives at the group's next barrier. The call's first signal (`first`)
  /// publishes its fingerprint and this rank's buffers (`own`) with it.
  virtual Status signal(const OpDesc& op, const char* phase, bool first, const ExecBuffers& own,
                        Deadline deadline, const std::atomic<bool>& aborted) = 0;
  /// Waits until every member arrived at this rank's last signal. After the
  /// first, checks that every member made the same call (kMismatch naming the
  /// difference) and maps the buffers that `schedule` names
  /// (Schedule::memberInputs, memberOutputs).
  virtual Status wait(const OpDesc& op, const char* phase, bool first, const Schedule& schedule,
                      Deadline deadline, const std::atomic<bool>& aborted) = 0;
  /// Every member's buffers by member, mapped here (null: none published or
  /// not mapped): arrays the group owns, valid from the first wait of a call
  /// to the next call.
  virtual const char* const* inputs() const = 0;
  virtual char* const* outputs() const = 0;
};

/// `conns[p]` is the connection to group rank p (null for self). This rank and
/// every peer of the schedule exchange the operation's fingerprint: before the
/// first round (a small first round travels with it, its receives held aside
/// until it passed), or, when the rounds before the last new partner write
/// scratch only (recursive doubling), with the first round that meets each
/// peer. A difference fails the operation on both sides with kMismatch naming
/// the parameter and both values, and no buffer is touched. A shared schedule
/// (Schedule::shared) runs with buffers.group instead of connections
/// (executeShared); its first signal and wait are the argument check. Errors name
/// the operation (op.describe()); the timeout error also names the round and the
/// peer(s) still pending. `control`: the waits' (waitControl below; once its
/// abort flag reads true, the wait in progress returns kAborted within about 50
/// ms). `tuning`: the communicator's (what a fused first round holds).
Status execute(const Schedule& schedule, const ExecBuffers& buffers,
               const std::vector<transport::Connection*>& conns,
               const transport::Reduction& reduction, const OpDesc& op, int rank, Deadline deadline,
               const transport::WaitControl& control, const Tuning& tuning);

/// execute() for a shared schedule over `size` ranks: its steps in order,
/// members' ranges through buffers.group. Rounds [from, to) only: a caller may
/// run its own work between two parts of one schedule (the first signal and
/// wait are those of round 0).
Status executeShared(const Schedule& schedule, const ExecBuffers& buffers,
                     const transport::Reduction& reduction, const OpDesc& op, int size,
                     Deadline deadline, const std::atomic<bool>& abort, std::size_t from = 0,
                     std::size_t to = ~std::size_t(0));

/// The controls of a collective's waits: `abort`, slow waits noted in the
/// running operation's history (noteWait), `crowded` and `checkPeers`.
transport::WaitControl waitControl(const std::atomic<bool>* abort, bool crowded = true,
                                   std::function<Status()> checkPeers = nullptr);

}  // namespace cohort::collective
