// The c10d Work of one Cohort operation.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cohort/runtime.h"
#include "cohort/status.h"

namespace cohort::torch_cohort {

/// One operation queued on a process group's stream. It is complete once the
/// stream's progress (runtime::streamProgress, which counts the mesh's posted calls
/// too) reaches its target; a failure of the stream fails it with Cohort's message.
/// `finishHost` (optional) runs once, on the thread that first sees it complete and
/// before anyone else can: copies from a flat buffer into the caller's list of
/// tensors. It holds the tensors the operation reads and writes, and its
/// destructor waits for an operation still running, so dropping a Work early never
/// frees memory in use.
/// Thread-safe: wait(), isCompleted() and getFuture() from any thread. The stream
/// belongs to the process group, which must outlive its Works (as with every c10d
/// backend); the group's destructor waits for the stream first.
class CohortWork : public c10d::Work {
 public:
  CohortWork(int rank, c10d::OpType type, std::string what, runtime::Stream* stream,
             std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep,
             std::function<void()> finishHost);
  /// A Work that failed already (an operation Cohort refused after starting it).
  static c10::intrusive_ptr<CohortWork> failed(int rank, c10d::OpType type, std::string what,
                                               const Status& s);
  ~CohortWork() override;

  /// Where the operation ends on the stream: what the stream holds now (called once
  /// it is queued; for a Work of a coalesced group, when the group is launched).
  /// Returns the error of reading the stream's position (the Work then ends
  /// when the stream's synchronize does).
  Status setTargetHere();

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  /// Concludes with the stream's state (ok or its sticky error); for the thread
  /// that completes futures.
  void concludeFromStream(const Status& s);

 private:
  /// Whether the stream's progress passed target_ (set: targetSet_).
  bool targetReached() const;
  void conclude(const Status& s);
  std::exception_ptr errorOf(const Status& s) const;

  const std::string what_;
  runtime::Stream* const stream_;
  std::vector<at::Tensor> outputs_;
  std::vector<at::Tensor> keep_;
  std::function<void()> finishHost_;
  std::uint64_t target_ = 0;
  bool targetSet_ = false;
  std::mutex concludeMu_;  // one conclusion (and finishHost) at a time
  c10::intrusive_ptr<c10::ivalue::Future> future_;  // under concludeMu_
};

/// Completes the futures of Works (getFuture(), which DDP uses) on a thread of its
/// own that waits for their streams, so that a future completes without anyone
/// calling wait(). One per process; thread-safe; lives until the process exits.
class FutureCompleter {
 public:
  static FutureCompleter& instance();
  void watch(c10::intrusive_ptr<CohortWork> work, runtime::Stream* stream);

 private:
  FutureCompleter() = default;
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<c10::intrusive_ptr<CohortWork>, runtime::Stream*>> queue_;
  bool started_ = false;
};

}  // namespace cohort::torch_cohort
