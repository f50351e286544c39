// Real rank processes for the fault-injection tests: a Job starts N workers with
// a job environment (torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT on
// 127.0.0.1, plus per-rank overrides), lets the test signal them and wait for
// them with deadlines, and guarantees that none outlives the test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cohort/status.h"

namespace cohort::testing {

/// A fault worker exits with the code of the error its rank failed with.
constexpr int kOutOfMemory = static_cast<int>(ErrorCode::kOutOfMemory);
constexpr int kTimeout = static_cast<int>(ErrorCode::kTimeout);
constexpr int kVersionMismatch = static_cast<int>(ErrorCode::kVersionMismatch);
constexpr int kRemoteError = static_cast<int>(ErrorCode::kRemoteError);
constexpr int kMismatch = static_cast<int>(ErrorCode::kMismatch);

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

struct JobSpec {
  int ranks = 0;
  std::vector<std::string> args;                     ///< worker arguments (the mode first)
  std::map<int, std::vector<std::string>> rankArgs;  ///< per rank (replaces args)
  std::string transport = "auto";
  std::vector<std::string> env;  ///< "NAME=value" for every rank (overrides the defaults)
  std::map<int, std::vector<std::string>> rankEnv;  ///< per rank (overrides env)
  std::vector<int> notStarted;                      ///< ranks that never start
  /// Appends "RANK" to the arguments of each rank (rank-table jobs).
  bool rankArgument = false;
};

/// One worker process.
struct RankProcess {
  int rank = -1;
  pid_t pid = -1;       ///< -1: never started
  std::string logPath;  ///< stdout and stderr
  int exitCode = -2;    ///< -2 running; exit status; 128 + signal; -1 killed at a deadline
  Clock::time_point exitedAt{};
};

/// Owns its processes: the destructor SIGKILLs and reaps any still running.
/// Not thread-safe.
class Job {
 public:
  /// Starts every rank of `spec` (except notStarted) with `worker`.
  Job(const std::string& worker, JobSpec spec);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  int port() const { return port_; }
  RankProcess& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  /// The rank's output so far.
  std::string log(int r) const;
  /// Waits until the rank's output contains `needle` (false past `limit` or once
  /// the process has exited without printing it).
  bool waitFor(int r, const std::string& needle, std::chrono::milliseconds limit);
  void signal(int r, int sig);
  /// Reaps the rank, SIGKILLing it past `limit`; returns its exit code (-1 if
  /// it had to be killed).
  int wait(int r, std::chrono::milliseconds limit);
  /// Reaps every started rank, each within `limit`.
  void waitAll(std::chrono::milliseconds limit);
  /// "" when every started process was reaped and no pid is alive; else which.
  std::string leftBehind() const;

 private:
  std::vector<RankProcess> ranks_;
  int port_ = 0;
};

/// The code N of a worker's "FAILED code=N" line, or -1.
int failureCode(const std::string& log);
/// A worker's "FAILED" line, or "".
std::string failureLine(const std::string& log);
/// The first line of `log` that holds `needle`, or "".
std::string lineWith(const std::string& log, const std::string& needle);
/// Seconds from `since` to the rank's exit.
double secondsSince(const RankProcess& p, Clock::time_point since);

}  // namespace cohort::testing
