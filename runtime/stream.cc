#include "runtime/stream.h"

#include <exception>

#include "common/error.h"
#include "common/log.h"
#include "runtime/device.h"

namespace cohort::runtime {

Stream::Stream(Device* device, int id, bool isDefault)
    : device_(device), id_(id), isDefault_(isDefault) {
  worker_ = std::thread([this] { workerLoop(); });
}

Stream::~Stream() {
  stopping_.store(true, std::memory_order_release);
  workWord_.notifyAll();
  worker_.join();
}

std::string Stream::name() const {
  return fmt::format("device {} stream {}{}", device_->id(), id_, isDefault_ ? " (default)" : "");
}

void Stream::enqueue(std::function<Status()> task, bool runAfterError) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Task{std::move(task), runAfterError});
    enqueued_.fetch_add(1, std::memory_order_release);
  }
  workWord_.notifyAll();
}

void Stream::workerLoop() {
  setCurrentDeviceId(device_->id());
  log::setThreadDevice(device_->id());
  std::uint64_t taken = 0;
  for (;;) {
    workWord_.waitUntil([&] {
      return enqueued_.load(std::memory_order_acquire) > taken ||
             stopping_.load(std::memory_order_acquire);
    });
    if (enqueued_.load(std::memory_order_acquire) == taken) return;  // stopping, drained
    Task task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    ++taken;
    if (!failed() || task.runAfterError) {
      Status status;
      try {
        status = task.fn();
      } catch (const std::exception& e) {
        status = makeError(ErrorCode::kTaskFailed, "a task on {} threw: {}", name(), e.what());
      } catch (...) {
        status = makeError(ErrorCode::kTaskFailed, "a task on {} threw a non-standard exception",
                           name());
      }
      if (!status.ok()) fail(std::move(status));
    }
    task.fn = nullptr;  // release captures before reporting completion
    completed_.store(taken, std::memory_order_release);
    doneWord_.notifyAll();
  }
}

void Stream::fail(Status status) {
  COHORT_LOG(kError, "runtime", "{}: task failed: {}", name(), status.toString());
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed()) {
    error_ = std::move(status);
    failed_.store(true, std::memory_order_release);
  }
}

Status Stream::synchronize(Deadline deadline) {
  const std::uint64_t target = enqueued_.load(std::memory_order_acquire);
  const bool done = doneWord_.waitUntil(
      [&] { return completed_.load(std::memory_order_acquire) >= target; }, deadline);
  if (!done) {
    return makeError(ErrorCode::kTimeout, "synchronize of {} timed out with {} task(s) pending",
                     name(), target - completed_.load());
  }
  return error();
}

Status Stream::query() const {
  if (failed()) return error();
  if (completed_.load(std::memory_order_acquire) < enqueued_.load(std::memory_order_acquire)) {
    return Status(ErrorCode::kNotReady, name() + " has pending work");
  }
  return Status::Ok();
}

Status Stream::error() const {
  if (!failed()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void Stream::clearError() {
  std::lock_guard<std::mutex> lock(mu_);
  error_ = Status();
  failed_.store(false, std::memory_order_release);
}

void EventState::complete(std::uint64_t generation, Status streamError, std::string streamName) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (completed.load(std::memory_order_relaxed) < generation) {
      error = std::move(streamError);
      time = Clock::now();
      recordedOn = std::move(streamName);
      completed.store(generation, std::memory_order_release);
    }
  }
  word.notifyAll();
}

}  // namespace cohort::runtime
