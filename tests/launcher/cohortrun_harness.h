// Runs the real cohortrun binary (COHORTRUN_PATH) with launcher_test_rank
// (TEST_RANK_PATH) as its program, collects its output and exit status, and
// finds processes of a job left behind (by the job's marker argument in /proc).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cohort::launcher::testing {

struct RunResult {
  int exitCode = -1;   ///< -1 when killed by a signal
  int termSignal = 0;  ///< the signal that killed cohortrun, 0 if it exited
  std::string out;     ///< cohortrun's stdout
  std::string err;     ///< cohortrun's stderr
  double seconds = 0;  ///< from start to exit
  bool hung = false;   ///< cohortrun did not end within 30 s (then SIGKILLed)
};

/// A running cohortrun. Not thread-safe.
class Cohortrun {
 public:
  /// Starts cohortrun with `args`, and this process's environment plus
  /// COHORT_IF_IP=127.0.0.1, COHORT_IF_BASE_PORT=47500 and `extraEnv` ("NAME=value").
  explicit Cohortrun(const std::vector<std::string>& args,
                     const std::vector<std::string>& extraEnv = {});
  ~Cohortrun();

  pid_t pid() const { return pid_; }
  /// Reads output until `count` lines containing "ready pid=" have arrived on
  /// stdout (false after 10 s), then sends `sig` to cohortrun if it is not 0.
  bool waitReadyThenSignal(int count, int sig);
  /// Reads everything and reaps cohortrun.
  RunResult finish();

 private:
  bool readSome(int timeoutMs);

  pid_t pid_ = -1;
  int outFd_ = -1;
  int errFd_ = -1;
  RunResult result_;
  double startS_ = 0;
};

/// `options` + "--" + the test rank program + `marker` + `specs`: cohortrun's
/// arguments for a job of launcher_test_rank.
std::vector<std::string> rankJob(std::vector<std::string> options, const std::string& marker,
                                 const std::vector<std::string>& specs);
/// A marker unique to this call, to pass as the test rank's first argument.
std::string uniqueMarker(const char* test);
/// Pids of live (not zombie) processes whose command line holds `marker`, after
/// waiting up to `waitMs` for them to go away.
std::vector<pid_t> processesLeft(const std::string& marker, int waitMs = 3000);
/// Whether `pid` is a live (not zombie) process whose command line holds `marker`.
bool isLiveJobProcess(pid_t pid, const std::string& marker);
/// The pids in "pid=P" and "child=C" fields of the output.
std::vector<pid_t> reportedPids(const std::string& output);
/// Lines of `text` that start with `prefix`.
std::vector<std::string> linesStartingWith(const std::string& text, const std::string& prefix);

/// Whether `part` occurs in `text`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Expects that no process of the job marked `marker` is alive (cohortrun has
/// ended), including every pid the ranks reported; kills any it finds.
void expectNothingLeft(const std::string& marker, const RunResult& r);

}  // namespace cohort::launcher::testing

#define EXPECT_CONTAINS(text, part)                              \
  EXPECT_TRUE(::cohort::launcher::testing::contains(text, part)) \
      << "missing '" << (part) << "' in:\n"                      \
      << (text)
