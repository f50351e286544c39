// Work completion by the stream's progress: a finished operation is noticed
// without a thread of ours, and waiting is the runtime's stream synchronize
// (which also runs the completion the mesh leaves for a host thread).
#include "torch_cohort/cohort_work.h"

#include <c10/util/Exception.h>

#include <thread>

namespace cohort::torch_cohort {

CohortWork::CohortWork(int rank, c10d::OpType type, std::string what, runtime::Stream* stream,
                       std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep,
                       std::function<void()> finishHost)
    : c10d::Work(rank, type),
      what_(std::move(what)),
      stream_(stream),
      outputs_(std::move(outputs)),
      keep_(std::move(keep)),
      finishHost_(std::move(finishHost)) {}

CohortWork::~CohortWork() {
  // A Work dropped before its operation finished (async_op=True, never waited)
  // still owns the flat buffers Cohort reads and writes: keep them until then.
  if (stream_ == nullptr) return;
  bool finished = false;
  {
    std::lock_guard<std::mutex> base(mutex_);
    finished = completed_;
  }
  if (!finished && targetSet_ && targetReached()) finished = true;
  if (!finished) (void)runtime::streamSynchronize(stream_, -1);
}

c10::intrusive_ptr<CohortWork> CohortWork::failed(int rank, c10d::OpType type, std::string what,
                                                  const Status& s) {
  auto work = c10::make_intrusive<CohortWork>(rank, type, std::move(what), nullptr,
                                              std::vector<at::Tensor>{}, std::vector<at::Tensor>{},
                                              nullptr);
  work->targetSet_ = true;
  work->conclude(s);
  return work;
}

Status CohortWork::setTargetHere() {
  std::uint64_t enqueued = 0, completed = 0;
  const Status s = runtime::streamProgress(stream_, &enqueued, &completed);
  std::lock_guard<std::mutex> lock(concludeMu_);
  // Unknown: never reached, so the Work ends with the stream's query or synchronize.
  target_ = s.ok() ? enqueued : UINT64_MAX;
  targetSet_ = true;
  return s;
}

bool CohortWork::targetReached() const {
  std::uint64_t enqueued = 0, done = 0;
  return runtime::streamProgress(stream_, &enqueued, &done).ok() && done >= target_;
}

std::exception_ptr CohortWork::errorOf(const Status& s) const {
  // Cohort's message names the rank and the operation; the prefix says which
  // torch call it was (c10::Error is RuntimeError in Python).
  return std::make_exception_ptr(
      c10::Error("cohort " + what_ + " failed: " + s.toString(), /*backtrace=*/""));
}

void CohortWork::conclude(const Status& s) {
  std::unique_lock<std::mutex> lock(concludeMu_);
  {
    std::lock_guard<std::mutex> base(mutex_);
    if (completed_) return;
  }
  std::exception_ptr error = s.ok() ? nullptr : errorOf(s);
  if (!error && finishHost_) {
    try {
      finishHost_();
    } catch (...) {
      error = std::current_exception();
    }
  }
  finishHost_ = nullptr;
  finish(error);  // completed_, exception_, and the waiters of the base class
  if (future_) {
    if (error) {
      future_->setError(error);
    } else {
      future_->markCompleted(c10::IValue(outputs_));
    }
  }
}

void CohortWork::concludeFromStream(const Status& s) { conclude(s); }

bool CohortWork::isCompleted() {
  {
    std::lock_guard<std::mutex> base(mutex_);
    if (completed_) return true;
  }
  {
    std::lock_guard<std::mutex> lock(concludeMu_);
    if (!targetSet_) return false;  // in a coalesced group not launched yet
  }
  // Done when the stream has run everything queued (the query never waits).
  const Status q = runtime::streamQuery(stream_);
  if (q.code() != ErrorCode::kNotReady) {
    conclude(q);
    return true;
  }
  if (targetReached()) {
    conclude(Status::Ok());
    return true;
  }
  return false;
}

bool CohortWork::isSuccess() const {
  std::lock_guard<std::mutex> base(mutex_);
  return completed_ && !exception_;
}

std::exception_ptr CohortWork::exception() const {
  std::lock_guard<std::mutex> base(mutex_);
  return exception_;
}

bool CohortWork::wait(std::chrono::milliseconds timeout) {
  if (!isCompleted()) {
    const long ms = timeout == kNoTimeout ? -1 : static_cast<long>(timeout.count());
    const Status s = runtime::streamSynchronize(stream_, ms);
    // kTimeout is this wait's when the stream still runs; otherwise it is the
    // operation's own failure (its exec timeout), sticky on the stream.
    if (s.code() == ErrorCode::kTimeout && ms >= 0 &&
        runtime::streamQuery(stream_).code() == ErrorCode::kNotReady) {
      TORCH_CHECK(false, "cohort ", what_, ": Work.wait timed out after ", timeout.count(),
                  " ms (the operation goes on)");
    }
    conclude(s);
  }
  std::lock_guard<std::mutex> base(mutex_);
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

std::vector<at::Tensor> CohortWork::result() { return outputs_; }

c10::intrusive_ptr<c10::ivalue::Future> CohortWork::getFuture() {
  bool watch = false;
  c10::intrusive_ptr<c10::ivalue::Future> future;
  {
    std::lock_guard<std::mutex> lock(concludeMu_);
    if (!future_) {
      future_ = c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()));
      std::lock_guard<std::mutex> base(mutex_);
      if (completed_) {
        if (exception_) {
          future_->setError(exception_);
        } else {
          future_->markCompleted(c10::IValue(outputs_));
        }
      } else {
        watch = true;
      }
    }
    future = future_;
  }
  if (watch) {
    FutureCompleter::instance().watch(c10::intrusive_ptr<CohortWork>::reclaim_copy(this),
                                      stream_);
  }
  return future;
}

FutureCompleter& FutureCompleter::instance() {
  // Never destroyed: its thread may still wait when static destructors run.
  static FutureCompleter* completer = new FutureCompleter();
  return *completer;
}

void FutureCompleter::watch(c10::intrusive_ptr<CohortWork> work, runtime::Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.emplace_back(std::move(work), stream);
  if (!started_) {
    started_ = true;
    std::thread([this] { run(); }).detach();
  }
  cv_.notify_one();
}

void FutureCompleter::run() {
  for (;;) {
    std::pair<c10::intrusive_ptr<CohortWork>, runtime::Stream*> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty(); });
      next = std::move(queue_.front());
      queue_.erase(queue_.begin());
    }
    // In queue order, which is each stream's order: one wait covers the Works
    // queued before it on that stream.
    if (!next.first->isCompleted()) {
      next.first->concludeFromStream(runtime::streamSynchronize(next.second, -1));
    }
  }
}

}  // namespace cohort::torch_cohort
