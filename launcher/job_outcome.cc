// The messages are the user's first clue after a failure: each names the rank,
// its pid and what happened, in one line.
#include "launcher/job_outcome.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

namespace cohort::launcher {

std::string signalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : fmt::format("signal {}", sig);
}

std::string describeWaitStatus(int waitStatus) {
  if (WIFEXITED(waitStatus)) return fmt::format("exited with code {}", WEXITSTATUS(waitStatus));
  if (WIFSIGNALED(waitStatus)) {
    const int sig = WTERMSIG(waitStatus);
    return fmt::format("was killed by signal {} ({}){}", sig, signalName(sig),
                       WCOREDUMP(waitStatus) ? ", core dumped" : "");
  }
  return fmt::format("ended with wait status 0x{:x}", waitStatus);
}

JobOutcome::Decision JobOutcome::stopWith(int exitCode, std::string message, int signal) {
  exitCode_ = exitCode;
  return {Action::kSignal, signal, std::move(message)};
}

JobOutcome::Decision JobOutcome::rankEnded(int rank, pid_t pid, int waitStatus, int stillRunning) {
  const bool success = WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0;
  if (success || stopping()) return {};
  const int code = WIFSIGNALED(waitStatus) ? 128 + WTERMSIG(waitStatus)
                   : WIFEXITED(waitStatus) ? WEXITSTATUS(waitStatus)
                                           : 1;
  if (keepGoing_) {
    if (toleratedCode_ == 0) toleratedCode_ = code;
    return {Action::kNone, 0,
            fmt::format("cohortrun: rank {} (pid {}) {}{}", rank, pid,
                        describeWaitStatus(waitStatus),
                        stillRunning > 0 ? "; the others go on (--keep-going)" : "")};
  }
  return stopWith(
      code,
      fmt::format("cohortrun: rank {} (pid {}) {}{}", rank, pid, describeWaitStatus(waitStatus),
                  stillRunning > 0 ? "; stopping the others" : ""),
      SIGTERM);
}

JobOutcome::Decision JobOutcome::spawnFailed(int rank, const std::string& why, int stillRunning) {
  if (stopping()) return {};
  return stopWith(127,
                  fmt::format("cohortrun: rank {} could not be started: {}{}", rank, why,
                              stillRunning > 0 ? "; stopping the others" : ""),
                  SIGTERM);
}

JobOutcome::Decision JobOutcome::signalReceived(int sig) {
  if (stopping()) {
    return {Action::kKill, SIGKILL,
            fmt::format("cohortrun: received {} while stopping; killing every rank (SIGKILL)",
                        signalName(sig))};
  }
  return stopWith(
      128 + sig,
      fmt::format("cohortrun: received {}; forwarding it to every rank", signalName(sig)), sig);
}

JobOutcome::Decision JobOutcome::timedOut(double timeoutS) {
  if (stopping()) return {};
  return stopWith(124,
                  fmt::format("cohortrun: the job ran longer than --timeout {} s; stopping every "
                              "rank",
                              timeoutS),
                  SIGTERM);
}

JobOutcome::Decision JobOutcome::graceExpired(const std::vector<int>& ranksLeft, double graceS) {
  if (ranksLeft.empty()) return {};
  return {Action::kKill, SIGKILL,
          fmt::format("cohortrun: rank{} {} still running {} s after the stop signal; sending "
                      "SIGKILL",
                      ranksLeft.size() > 1 ? "s" : "", fmt::join(ranksLeft, ", "), graceS)};
}

}  // namespace cohort::launcher
