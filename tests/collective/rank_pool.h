// Ranks as threads: one persistent thread per rank, each with its device set and
// its own stream, running the same function and reporting its failures.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cohort/communicator.h"

namespace cohort::testing {

class RankPool {
 public:
  /// Creates `n` communicator ranks on devices 0..n-1 (initAll) and one thread each.
  explicit RankPool(int n);
  ~RankPool();

  int size() const { return n_; }
  Communicator& comm(int r) { return *comms_[static_cast<std::size_t>(r)]; }
  runtime::Stream* stream(int r) { return streams_[static_cast<std::size_t>(r)]; }
  /// Runs fn(rank) on every rank's thread at once; returns when all are done.
  /// fn returns "" on success or a description of what went wrong.
  std::vector<std::string> run(const std::function<std::string(int)>& fn);
  /// The status of init (tests ASSERT it).
  const Status& initStatus() const { return init_; }

  /// A pool per rank count, created on first use and kept for the process.
  static RankPool& shared(int n);

 private:
  void loop(int r);
  int n_;
  Status init_;
  std::vector<std::unique_ptr<Communicator>> comms_;
  std::vector<runtime::Stream*> streams_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<std::string(int)>* job_ = nullptr;
  std::uint64_t generation_ = 0;
  int done_ = 0;
  bool stopping_ = false;
  std::vector<std::string> results_;
};

/// The failures among run()'s results, one line per failed rank ("" if none).
inline std::string joinFailures(const std::vector<std::string>& results) {
  std::string out;
  for (std::size_t r = 0; r < results.size(); ++r) {
    if (!results[r].empty()) out += "\n rank " + std::to_string(r) + ": " + results[r];
  }
  return out;
}

}  // namespace cohort::testing
