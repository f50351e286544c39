// Which ranks are still alive during a check: each rank beats (adds to its key
// "beat/R" in the store) from a thread of its own, and a rank that waits for a
// peer asks whether the peer still beats. A stopped or dead process stops
// beating; one that is only late (waiting, itself, for a dead peer) does not,
// so waits on it go on and only the dead rank's links are reported.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/wait.h"
#include "transport/store.h"

namespace cohort::linkcheck {

/// Owns its thread (stopped and joined by the destructor). alive() is not
/// thread-safe: the check's thread asks, the beating thread never does.
class Heartbeat {
 public:
  /// A rank is alive while its count advanced within the last `silentS` seconds;
  /// this rank beats several times in that time.
  Heartbeat(std::shared_ptr<transport::Store> store, int rank, double silentS);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  /// Whether `rank` beat within the last silentS seconds since this rank first
  /// asked about it (the first question starts its clock). Unknown (the store
  /// does not answer): alive.
  bool alive(int rank);
  double silentS() const { return silentS_; }

 private:
  void beat();

  const std::shared_ptr<transport::Store> store_;
  const int rank_;
  const double silentS_;
  struct Seen {
    std::int64_t count = -1;
    Clock::time_point at;
  };
  std::map<int, Seen> seen_;  // by rank: its last count and when it changed
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace cohort::linkcheck
