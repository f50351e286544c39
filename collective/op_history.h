// The last operations of a communicator, for hang reports: what each one was,
// how it ran, when, how it ended, and what a running one is waiting for (the step
// and the peer ranks). The communicator logs its history when an operation fails
// (a timeout, a dead peer, ...); SIGUSR1 prints every live history to stderr.
//
//   kill -USR1 <pid>   ->   rank 1 of 3, communicator 'env' (device 1, pid 4242):
//                              last 16 operations, oldest first:
//                             [41] allreduce #41 (16777216 x float32, sum, root 0) ...
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "collective/op.h"

namespace cohort::collective {

enum class OpState { kQueued, kRunning, kDone, kFailed };
const char* opStateName(OpState state);

/// One operation as the history shows it. A plain value.
struct OpRecord {
  using Time = std::chrono::system_clock::time_point;
  std::uint64_t id = 0;   ///< position in its history: 1, 2, ...
  OpDesc op;              ///< as called (its seq included); buffers are never read
  std::string algorithm;  ///< "allreduce=ring tcp", once it runs
  OpState state = OpState::kQueued;
  Time queued{}, started{}, ended{};
  std::string waitingFor;  ///< while running, once a wait got slow: step and peer(s)
  std::string error;       ///< when failed
};

/// Keeps the last `capacity` operations. When full, the oldest finished record
/// makes room, else the oldest queued one: the running operation always stays (it
/// is what a hang report needs), and one evicted while queued comes back when it
/// starts.
/// Thread-safe (one mutex): the caller's thread records queued operations, the
/// stream worker their start, waits and end, any thread formats. While it lives,
/// the history is listed for SIGUSR1 reports (the first history installs the
/// handler, which chains to any previous one). Owned by its communicator.
class OpHistory {
 public:
  static constexpr std::size_t kCapacity = 16;

  /// `label` heads every report, e.g. "rank 1 of 3, communicator 'env' (device 1)".
  explicit OpHistory(std::string label, std::size_t capacity = kCapacity);
  ~OpHistory();
  OpHistory(const OpHistory&) = delete;
  OpHistory& operator=(const OpHistory&) = delete;

  /// Records a queued operation; returns its id for the calls below.
  std::uint64_t queued(const OpDesc& op);
  /// An id for an operation that starts at once (no queued record: started()
  /// makes it), without taking the lock.
  std::uint64_t reserve() { return nextId_.fetch_add(1, std::memory_order_relaxed); }
  void started(std::uint64_t id, const OpDesc& op, const std::string& algorithm);
  /// What the running operation waits for now ("... (ring round 3): waiting for rank 1").
  void waiting(std::uint64_t id, std::string what);
  void finished(std::uint64_t id, const Status& status);

  /// The records, oldest first.
  std::vector<OpRecord> snapshot() const;
  /// The label, then one line per operation, oldest first.
  std::string format() const;

  /// Makes `history`/`id` the operation running on this thread while it lives, so
  /// that noteWait() from the algorithms reaches its record. Not nestable.
  class RunScope {
   public:
    RunScope(OpHistory* history, std::uint64_t id);
    ~RunScope();
    RunScope(const RunScope&) = delete;
    RunScope& operator=(const RunScope&) = delete;
  };

 private:
  // All need mu_ held.
  std::size_t indexOf(std::uint64_t id) const;  // records_.size() once evicted
  std::size_t slotFor(std::uint64_t id, const OpDesc& op, OpRecord::Time now);
  void setState(std::size_t index, OpState state);
  std::size_t homeOf(std::uint64_t id) const;

  const std::string label_;
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::vector<OpRecord> records_;  // in no particular order; at most capacity_
  // keys_[i] describes records_[i]: its eviction class (0 finished, 1 queued,
  // 2 running) in the top bits, its id below. Every call looks records up and
  // chooses victims here: 16 keys are two cache lines, 16 records some 80.
  std::vector<std::uint64_t> keys_;
  std::uint64_t newest_ = 0;  // the largest id ever recorded (a reserved one may be larger)
  std::atomic<std::uint64_t> nextId_{1};
};

/// Records what this thread's running operation waits for. Cheap to skip: callers
/// note only waits that already lasted a while. No-op outside a RunScope.
void noteWait(std::string what);

/// Every live history, formatted one after the other (what SIGUSR1 prints).
std::string formatAllHistories();

}  // namespace cohort::collective
