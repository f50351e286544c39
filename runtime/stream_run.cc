// Who runs a stream's tasks, and how host threads wait for them: the worker
// takes them one at a time; a thread that synchronizes without a deadline runs
// the host kernels the worker has not taken (runtime/stream.h). The queueing,
// the event waits and the stream's error are stream.cc's.
#include "runtime/stream.h"

#include <exception>
#include <thread>

#include "common/error.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "common/trace.h"
#include "runtime/device.h"
#include "runtime/task_reports.h"

namespace cohort::runtime {

namespace {
// The stream whose task this thread runs now (null: none), on its worker or helping.
thread_local const Stream* tRunning = nullptr;
}  // namespace

bool Stream::onWorker() const { return tRunning == this; }

bool Stream::takeLocked(Task* task, std::uint64_t* number) {
  if (busy_.load(std::memory_order_relaxed) || queue_.empty() ||
      paused_.load(std::memory_order_acquire)) {
    return false;
  }
  *task = std::move(queue_.front());
  queue_.pop_front();
  running_.waitOn = task->waitOn;
  running_.waitGeneration = task->waitGeneration;
  running_.work = task->work;
  busy_.store(true, std::memory_order_relaxed);
  *number = taken_.load(std::memory_order_relaxed) + 1;
  taken_.store(*number, std::memory_order_release);
  return true;
}

void Stream::workerLoop() {
  workerTid_.store(static_cast<int>(currentThreadId()), std::memory_order_relaxed);
  setCurrentDeviceId(device_->id());
  log::setThreadDevice(device_->id());
  trace::nameThread(name());
  nameThisThread(fmt::format("cohort d{} s{}", device_->id(), id_));
  const WaitPolicy idle = WaitPolicy::idleFromConfig();
  for (;;) {
    workWord_.waitUntil(
        [&] {
          return (enqueued_.load(std::memory_order_acquire) >
                      taken_.load(std::memory_order_acquire) &&
                  !busy_.load(std::memory_order_acquire) &&
                  !paused_.load(std::memory_order_acquire)) ||
                 (stopping_.load(std::memory_order_acquire) &&
                  !busy_.load(std::memory_order_acquire));
        },
        Deadline::never(), idle);
    Task task;
    std::uint64_t number = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!takeLocked(&task, &number)) {
        // Stopping, drained (a helping thread has completed what it took).
        if (stopping_.load(std::memory_order_acquire) && queue_.empty() &&
            !busy_.load(std::memory_order_relaxed)) {
          return;
        }
        continue;  // a helping thread runs one, or took the last
      }
    }
    runTaken(task, number);
  }
}

void Stream::runTaken(Task& task, std::uint64_t number) {
  const Stream* const outer = tRunning;
  tRunning = this;
  // Tasks abort() dropped do not run, except records: their events must complete.
  const bool dropped = number <= dropThrough_.load(std::memory_order_acquire);
  // A stream destroyed by force runs nothing after a failure, whatever its mode.
  const bool runs =
      !dropped &&
      (!failed() || (continueAfterError_.load(std::memory_order_relaxed) && !retiring()));
  runningOnlyAfterError_ = !runs;
  if (task.runAfterError || runs) {
    trace::Span span("stream", task.waitOn ? "event wait" : "task");
    Status status;
    try {
      if (task.kernel) {
        // Waits of this process that lose their processor to it keep yielding.
        ComputeScope computing;
        status = task.kernel(this);
      } else {
        status = task.fn();
      }
    } catch (const std::exception& e) {
      status = makeError(ErrorCode::kTaskFailed, "a task on {} threw: {}", name(), e.what());
    } catch (...) {
      status = makeError(ErrorCode::kTaskFailed, "a task on {} threw a non-standard exception",
                         name());
    }
    if (!status.ok()) {
      reportTaskFailure(*this, number - 1, task.launcher, status);
      fail(std::move(status));
    }
  }
  tRunning = outer;
  const bool taskFailed = failed();
  task.fn = nullptr;  // release captures before reporting completion
  task.kernel = nullptr;
  if (task.waitOn) task.waitOn->removeListener(this);  // run or skipped alike
  if (task.wakeOn) task.wakeOn->removeListener(this);
  task.wakeOn.reset();
  task.waitOn.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.waitOn.reset();
    busy_.store(false, std::memory_order_relaxed);
    completed_.store(number, std::memory_order_seq_cst);  // before taskDone's look at wakeAt_
  }
  taskDone(number, taskFailed);
}

void Stream::help(std::uint64_t target) {
  // Most synchronizes find their tasks taken already: then no lock, no track.
  if (taken_.load(std::memory_order_acquire) >= target) return;
  const int device = currentDeviceId();
  bool switched = false;
  // On the timeline the tasks stay on the stream's track.
  const trace::TrackScope track(workerTid_.load(std::memory_order_relaxed));
  for (;;) {
    Task task;
    std::uint64_t number = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (taken_.load(std::memory_order_relaxed) >= target || queue_.empty()) break;
      // Only host kernels: an event wait, a callback or a model's lane keeps the
      // worker's (they may need a thread of their own, or wait on other streams).
      const Task& front = queue_.front();
      if (!front.kernel || front.work != Work::kHost || front.waitOn || front.wakeOn) break;
      if (!takeLocked(&task, &number)) break;
    }
    if (!switched && device != device_->id()) {
      setCurrentDeviceId(device_->id());  // as on the worker
      switched = true;
    }
    runTaken(task, number);
  }
  // The worker, if it slept while this thread held a task, takes what is left.
  // Once, not after each task: a sleeping worker's wake-up is a system call.
  workWord_.notifyIfSleeping();
  if (switched) setCurrentDeviceId(device);
}

Stream::DoneWaiter::DoneWaiter(Stream& s, std::uint64_t target) : s_(s) {
  std::lock_guard<std::mutex> lock(s_.waitersMu_);
  ++s_.waiters_;
  // seq_cst, like the worker's store of completed_ and its load of wakeAt_: either
  // the waiter sees the count or the worker sees the target.
  if (target < s_.wakeAt_.load(std::memory_order_relaxed)) {
    s_.wakeAt_.store(target, std::memory_order_seq_cst);
  }
}

Stream::DoneWaiter::~DoneWaiter() {
  std::lock_guard<std::mutex> lock(s_.waitersMu_);
  if (--s_.waiters_ == 0) s_.wakeAt_.store(kNoWaiter, std::memory_order_relaxed);
}

void Stream::taskDone(std::uint64_t completed, bool failed) {
  // Waking a sleeping synchronize after every task cost a system call on this
  // thread and a context switch on the waiter per task (a queue of small
  // collectives: 5 us per call instead of 1). With several waiters, all wake at
  // the smallest target and wait on.
  if (failed || completed >= wakeAt_.load(std::memory_order_seq_cst)) doneWord_.notifyAll();
}

Status Stream::synchronize(Deadline deadline) {
  COHORT_RETURN_IF_ERROR(refuseIfCapturing("was synchronized"));
  const std::uint64_t target = enqueued_.load(std::memory_order_acquire);
  const std::uint64_t interruptions = this->interruptions();
  if (deadline.isNever()) help(target);
  const DoneWaiter waiter(*this, target);
  Status result;
  const bool done = doneWord_.waitUntil(
      [&] {
        if (this->interruptions() != interruptions) {
          result = makeError(ErrorCode::kAborted, "{} was aborted during the synchronize",
                             name());
          return true;
        }
        result = progressTo(target);
        return result.code() != ErrorCode::kNotReady;
      },
      deadline);
  if (!done) {
    return makeError(ErrorCode::kTimeout, "synchronize of {} timed out with {} task(s) pending",
                     name(), target - completed_.load());
  }
  if (!result.ok() && continueAfterError_.load(std::memory_order_relaxed) &&
      !paused_.load(std::memory_order_acquire)) {
    // A stream that runs on after a failure reports the failure once (CANN's
    // ACL_CONTINUE_ON_FAILURE): the synchronize that saw it clears it.
    std::lock_guard<std::mutex> lock(mu_);
    if (failed() && error_.code() == result.code() && error_.message() == result.message()) {
      error_ = Status();
      failed_.store(false, std::memory_order_release);
    }
  }
  return result;
}

void Stream::settle() {
  if (onWorker() || paused_.load(std::memory_order_acquire)) return;
  std::uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = completed_.load(std::memory_order_acquire);
    if (holdsTaskLocked()) {
      if (running_.work == Work::kHost) return;
      ++target;
    }
    for (const Task& t : queue_) {
      if (t.work == Work::kHost) break;
      ++target;
    }
  }
  if (completed() >= target) return;
  const std::uint64_t interruptions = this->interruptions();
  const DoneWaiter waiter(*this, target);
  doneWord_.waitUntil(
      [&] {
        return completed() >= target || this->interruptions() != interruptions ||
               paused_.load(std::memory_order_acquire);
      },
      Deadline::never());
}

}  // namespace cohort::runtime
