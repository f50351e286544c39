// Starting cohort-perf as a real multi-process job in tests: N processes with the
// torchrun-style environment initFromEnvironment reads (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT), each one's
// stdout and stderr captured separately; or any shell command line (cohortrun,
// mpirun).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cohort::perf::test {

/// What the processes printed and how they ended. A plain value.
struct JobResult {
  std::vector<int> exitCodes;    ///< per process; 128+signal if killed, -1 on timeout
  std::vector<std::string> out;  ///< stdout per process
  std::vector<std::string> err;  ///< stderr per process
  /// The first non-zero exit code, else 0.
  int exitCode() const;
  /// Everything printed on stderr, for failure messages.
  std::string allErrors() const;
};

/// Runs `nranks` processes of `program args...` on this machine (devices 0..n-1),
/// waiting at most `timeoutS` seconds (then kills them).
JobResult runRanks(const std::string& program, int nranks, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& extraEnv = {}, int timeoutS = 90);

/// Runs `nranks` processes of the cohort-perf under test with `args`.
inline JobResult runPerf(int nranks, const std::vector<std::string>& args) {
  return runRanks(COHORT_PERF_BIN, nranks, args);
}

/// Runs `/bin/sh -c command`, capturing stdout and stderr.
JobResult runShell(const std::string& command, int timeoutS = 90);

/// The whole file at `path` ("" when it cannot be read).
std::string readFile(const std::string& path);

/// The lines of `text` (without the newlines).
std::vector<std::string> splitLines(const std::string& text);

}  // namespace cohort::perf::test
