// Watches the ranks of one job until every one has ended: relays their output,
// reaps them, and stops the job (stop signal, then SIGKILL after the grace time)
// when a rank fails, cohortrun is signalled, or the --timeout runs out.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launcher/job_outcome.h"
#include "launcher/output_relay.h"
#include "launcher/rank_process.h"
#include "launcher/signal_channel.h"

namespace cohort::launcher {

struct SupervisorOptions {
  double graceS = 5;
  double timeoutS = 0;  ///< 0 = none
  bool keepGoing = false;  ///< a failed rank stops no other (JobOutcome::keepGoing)
  /// Called when a rank ended with a failure (non-zero exit or a signal), with its
  /// wait status, before the others are told to stop.
  std::function<void(int rank, pid_t pid, int waitStatus)> onRankFailed;
};

/// Owns the ranks' pipe and log descriptors (closed by the destructor) and reaps
/// every rank it was given. Runs on the thread that spawned the ranks. Not
/// thread-safe.
class Supervisor {
 public:
  Supervisor(const SupervisorOptions& options, SignalChannel* signals);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  /// A started rank; `logFd` < 0 for none (owned from here on).
  void addRank(int rank, const RankProcess& process, int logFd);
  /// A rank that could not be started: the job stops.
  void spawnFailed(int rank, const std::string& why);
  /// Until every rank has ended and its output is relayed; returns the job's
  /// exit code.
  int run();

 private:
  using Clock = std::chrono::steady_clock;
  struct Stream {
    int fd;
    LineRelay relay;
  };
  struct Rank {
    int rank;
    pid_t pid;
    bool running;
    int logFd;
    std::vector<Stream> streams;  // stdout, stderr
  };

  void handleSignals();
  void reap();
  void onExit(Rank& rank, int waitStatus);
  /// Reads once (or, with drain, until nothing is left); closes the stream at EOF.
  void readStream(Stream& stream, bool drain);
  void closeStream(Stream& stream);
  void apply(const JobOutcome::Decision& decision);
  void signalRunning(int sig);
  void checkTimers();
  int pollTimeoutMs() const;
  std::vector<int> runningRanks() const;
  bool anyStreamOpen() const;

  SupervisorOptions options_;
  SignalChannel* signals_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  JobOutcome outcome_;
  Clock::time_point start_;
  bool childEvent_ = true;  // SIGCHLD seen since the last reap (true: reap once at start)
  std::optional<Clock::time_point> killAt_;      // SIGKILL the rest then
  std::optional<Clock::time_point> drainUntil_;  // stop waiting for output then
};

}  // namespace cohort::launcher
