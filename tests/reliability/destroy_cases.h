// The destroy-race cases: one rank (the leaver) destroys its communicator right
// after synchronizing its stream, while the others are still delayed (they issue
// late and synchronize late). Nothing the leaver owned may be missing for them:
// every rank's result is checked element by element, and every destroy must
// succeed. Shared by the thread test (destroy_race_test.cc) and the process
// worker (destroy_worker.cc).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "reliability/soak_ops.h"

namespace cohort::testing {

/// One case; a plain value.
struct DestroyCase {
  SoakOp op;
  int leaver = 0;
  std::string describe() const;
};

/// Every kind of operation (collectives, barrier, send/recv) at each of `counts`,
/// every root of the rooted ones, with the root and a non-root as leaver in turn (the
/// first and last rank for the others); data types and reduce ops vary from case to case.
std::vector<DestroyCase> destroyCases(int ranks, const std::vector<std::size_t>& counts);

/// What one rank does in a case: the operation once with everyone, then again: the
/// leaver synchronizes, then destroys `comm` at
/// once (or, with `leaverExits`, keeps it and returns, for the caller to exit the
/// process); the others sleep `delay` before issuing and again before synchronizing,
/// then destroy it. Returns "" or what went wrong (a wrong element, a failed call or
/// destroy).
/// Each case has a stream of its own (a failure is sticky on a stream).
/// Leaves `comm` to the process's exit without destroying it (a broken or a leaving
/// communicator), reachable from a global so that LeakSanitizer does not report what
/// is left on purpose.
void keepUntilExit(std::unique_ptr<Communicator> comm);

std::string runDestroyCase(const DestroyCase& c, std::unique_ptr<Communicator> comm,
                           std::chrono::milliseconds delay, bool leaverExits = false);

}  // namespace cohort::testing
