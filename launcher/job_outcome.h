// Why a job ends and with which exit code: the first cause wins (a failed rank,
// a signal to cohortrun, the --timeout), later ones only escalate the stopping.
// Pure bookkeeping, so tests can drive every path without processes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cohort::launcher {

/// "SIGSEGV" (or "signal 77" for a number without a name).
std::string signalName(int sig);
/// "exited with code 3", "was killed by signal 11 (SIGSEGV)[, core dumped]".
std::string describeWaitStatus(int waitStatus);

/// Not thread-safe; one per job.
class JobOutcome {
 public:
  /// What to do to the ranks still running.
  enum class Action { kNone, kSignal, kKill };
  struct Decision {
    Action action = Action::kNone;
    int signal = 0;       ///< for kSignal: sent now, then SIGKILL after the grace time
    std::string message;  ///< one line for stderr ("" = nothing to say)
  };

  /// A failed rank stops no other (cohortrun --keep-going): the job ends when every
  /// rank has, with the first failed rank's code still.
  void keepGoing(bool on) { keepGoing_ = on; }
  /// A rank ended (wait status as from waitpid).
  Decision rankEnded(int rank, pid_t pid, int waitStatus, int stillRunning);
  /// A rank could not be started.
  Decision spawnFailed(int rank, const std::string& why, int stillRunning);
  /// cohortrun received SIGINT, SIGTERM or SIGHUP: forwarded the first time,
  /// SIGKILL for every rank the second time.
  Decision signalReceived(int sig);
  Decision timedOut(double timeoutS);
  /// The grace time after the stop signal ran out with these ranks still running.
  Decision graceExpired(const std::vector<int>& ranksLeft, double graceS);

  bool stopping() const { return exitCode_ != 0; }
  /// 0 while nothing failed; else the first cause's code: the rank's exit code,
  /// 128 + signal, 127 (cannot start), 124 (timeout).
  int exitCode() const { return exitCode_ != 0 ? exitCode_ : toleratedCode_; }

 private:
  Decision stopWith(int exitCode, std::string message, int signal);

  int exitCode_ = 0;
  bool keepGoing_ = false;
  int toleratedCode_ = 0;  // --keep-going: the first failed rank's code
};

}  // namespace cohort::launcher
