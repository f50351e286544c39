// Stream control beyond queueing work (cohort/runtime.h): abort and stop, the stream
// observer, wait tasks that poll memory, timed event waits, stream descriptions.
#include "runtime/stream_control.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <utility>

#include "runtime/api.h"
#include "runtime/ipc_event.h"

namespace cohort::runtime {

namespace {

std::mutex gStreamObserverMu;
StreamObserver gStreamObserver;  // guarded by gStreamObserverMu
std::atomic<bool> gHasObserver{false};

// How long a wait task's condition may block per look, once past spinning: growing
// from kFirstSleepUs so short waits stay quick, capped so aborts are seen promptly.
constexpr long kFirstSleepUs = 50;
constexpr long kMaxSleepUs = 20'000;
// Its stages before that: 20 us of spinning, then yields up to 1 ms.
constexpr WaitPolicy kTaskWait{20'000, 980'000};

// WaitTask::timeoutMs: < 0 the task wait timeout, 0 never, > 0 that.
long effectiveMs(long timeoutMs) { return timeoutMs < 0 ? taskWaitTimeoutMs() : timeoutMs; }

Deadline waitDeadline(long timeoutMs) {
  const long ms = effectiveMs(timeoutMs);
  return ms == 0 ? Deadline::never() : Deadline::afterMs(ms);
}

std::string timeoutText(long timeoutMs) {
  if (timeoutMs > 0) return fmt::format("its timeout of {} ms", timeoutMs);
  return fmt::format("the task wait timeout ({} ms; COHORT_EXEC_TIMEOUT by default)",
                     effectiveMs(timeoutMs));
}

// Runs on the stream's worker: spin, then yield, then sleep in growing slices.
Status runWait(Stream* s, const WaitTask& task) {
  const std::uint64_t interruptions = s->interruptions();
  const Deadline deadline = waitDeadline(task.timeoutMs);
  const WaitStages stages(kTaskWait, Clock::now());
  long sleepUs = 0;
  for (;;) {
    if (task.ready(sleepUs)) return task.then ? task.then() : Status::Ok();
    if (s->interruptions() != interruptions || s->retiring()) {
      return makeError(ErrorCode::kAborted, "{} on {} was aborted", task.what, s->name());
    }
    const auto now = Clock::now();
    if (!deadline.isNever() && now >= deadline.at()) {
      return makeError(ErrorCode::kTimeout, "{} on {} did not complete within {}", task.what,
                       s->name(), timeoutText(task.timeoutMs));
    }
    const WaitStages::Stage stage = stages.at(now);
    if (stage == WaitStages::Stage::kSpin) {
      sleepUs = 0;
    } else if (stage == WaitStages::Stage::kYield) {
      sleepUs = 0;
      stages.yield();
    } else {
      sleepUs = std::min(kMaxSleepUs, std::max(kFirstSleepUs, sleepUs * 2));
      if (!deadline.isNever()) {
        const long leftUs = static_cast<long>(
            std::chrono::duration_cast<std::chrono::microseconds>(deadline.at() - now).count());
        sleepUs = std::max(1L, std::min(sleepUs, leftUs));
      }
    }
  }
}

// Keeps EventState::timedWaits counted while the task that holds it exists.
struct TimedWaitCount {
  explicit TimedWaitCount(std::shared_ptr<EventState> s) : state(std::move(s)) {
    state->timedWaits.fetch_add(1, std::memory_order_acq_rel);
  }
  ~TimedWaitCount() { state->timedWaits.fetch_sub(1, std::memory_order_acq_rel); }
  std::shared_ptr<EventState> state;
};

}  // namespace

bool hasStreamObserver() { return gHasObserver.load(std::memory_order_acquire); }

void notifyStreamObserver(Stream* stream, bool created) {
  if (!hasStreamObserver()) return;
  StreamObserver observer;
  {
    std::lock_guard<std::mutex> lock(gStreamObserverMu);
    observer = gStreamObserver;
  }
  if (observer) observer(stream, created);
}

void setStreamObserver(StreamObserver observer) {
  std::lock_guard<std::mutex> lock(gStreamObserverMu);
  gHasObserver.store(static_cast<bool>(observer), std::memory_order_release);
  gStreamObserver = std::move(observer);
}

void enqueueWaitTask(Stream* stream, WaitTask task) {
  stream->enqueue([stream, task = std::move(task)] { return runWait(stream, task); });
}

Status launchWait(Stream* stream, WaitTask task) {
  return apiCall([&](DeviceManager& m) {
    if (!task.ready) return Status(ErrorCode::kInvalidArgument, "launchWait: no condition");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    enqueueWaitTask(s, std::move(task));
    return Status::Ok();
  });
}

Status streamDescribe(Stream* stream, StreamDescription* description) {
  return apiCall([&](DeviceManager& m) {
    if (description == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "streamDescribe: null output");
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    description->device = s->device()->id();
    description->id = s->id();
    description->isDefault = s->isDefault();
    description->continueAfterError = s->continueAfterError();
    description->stopped = s->stopped();
    description->failed = s->failed();
    s->progress(&description->enqueued, &description->completed);
    return Status::Ok();
  });
}

Status Stream::abort() {
  if (onWorker()) {
    return makeError(ErrorCode::kInvalidUsage, "{}: a task of the stream cannot abort it", name());
  }
  interrupts_.fetch_add(1, std::memory_order_acq_rel);
  // A kernel running now (or first in the queue: a device has started it) is killed
  // on a device: it ends as an AI Core exception that the next synchronize reports.
  // Here a running kernel's blocks run to their end.
  bool killsAKernel = false;
  {
    // Failed while the abort runs: tasks queued meanwhile are skipped, and records
    // among the dropped tasks tell their waiters.
    std::lock_guard<std::mutex> lock(mu_);
    killsAKernel = holdsTaskLocked() ? running_.work == Work::kKernel
                           : !queue_.empty() && queue_.front().work == Work::kKernel;
    if (!failed()) {
      error_ = makeError(ErrorCode::kAborted, "{}: its queued tasks were aborted", name());
      failed_.store(true, std::memory_order_release);
    }
  }
  const long timeoutMs = taskWaitTimeoutMs();
  const Deadline deadline = timeoutMs == 0 ? Deadline::never() : Deadline::afterMs(timeoutMs);
  for (;;) {
    std::uint64_t target = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      target = enqueued_.load(std::memory_order_acquire);
      dropThrough_.store(target, std::memory_order_release);
      paused_.store(false, std::memory_order_release);
    }
    workWord_.notifyAll();
    doneWord_.notifyAll();
    const DoneWaiter waiter(*this, target);
    if (!doneWord_.waitUntil([&] { return completed() >= target; }, deadline)) {
      return makeError(ErrorCode::kTimeout,
                       "abort of {}: its running task did not end within the task wait timeout "
                       "({} ms; COHORT_EXEC_TIMEOUT by default)",
                       name(), timeoutMs);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (enqueued_.load(std::memory_order_acquire) == target) {
      error_ = Status();
      failed_.store(false, std::memory_order_release);
      if (killsAKernel) {
        error_ = makeError(ErrorCode::kKernelFault,
                           "{}: the kernel running when the stream was aborted was stopped "
                           "(its writes may be partial)",
                           name());
        failed_.store(true, std::memory_order_release);
      }
      return Status::Ok();
    }
  }
}

void Stream::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    paused_.store(true, std::memory_order_release);
    if (!failed()) {
      error_ = makeError(ErrorCode::kAborted,
                         "{} was stopped; its queued tasks are held until it is aborted or "
                         "destroyed",
                         name());
      failed_.store(true, std::memory_order_release);
    }
  }
  interrupts_.fetch_add(1, std::memory_order_acq_rel);
  workWord_.notifyAll();
  doneWord_.notifyAll();
}

void Stream::retire() {
  retiring_.store(true, std::memory_order_release);
  interrupts_.fetch_add(1, std::memory_order_acq_rel);
  workWord_.notifyAll();
  doneWord_.notifyAll();
}

Status streamAbort(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    return s->abort();
  });
}

Status streamStop(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    if (s->isDefault()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "streamStop: {} is a default stream, which cannot be stopped", s->name());
    }
    s->stop();
    return Status::Ok();
  });
}

Status streamWaitEventFor(Stream* stream, Event* event, long timeoutMs) {
  return apiCall([&](DeviceManager& m) {
    if (event == nullptr || !m.isLiveEvent(event)) {
      return makeError(ErrorCode::kInvalidHandle, "streamWaitEventFor: {} is not a live event",
                       static_cast<void*>(event));
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<EventState> state = event->state();
    if (captureActive()) {  // recorded for each launch; its timeout is the default one then
      Status captured = captureEventWait(s, state);
      if (captured.code() != ErrorCode::kNotReady) return captured;
    }
    if (state->ipc) return ipcEventWait(s, state, timeoutMs);
    const std::uint64_t generation = state->recorded.load();
    // Never recorded: nothing to wait for (an external event waits to be set).
    if (generation == 0 && !state->external) return Status::Ok();
    auto count = std::make_shared<TimedWaitCount>(state);
    WaitTask task;
    task.ready = [state, generation](long sleepUs) {
      if (state->reached(generation)) return true;
      if (sleepUs <= 0) return false;
      const std::uint32_t seen = state->word.snapshot();
      if (!state->reached(generation)) {
        state->word.sleep(seen, Deadline::after(std::chrono::microseconds(sleepUs)));
      }
      return state->reached(generation);
    };
    task.then = [state, count, waiter = s->name()]() -> Status {
      if (!state->failed.load(std::memory_order_acquire)) return Status::Ok();
      std::lock_guard<std::mutex> lock(state->mu);
      return makeError(state->error.code(),
                       "{} waited on an event recorded on {}, which had failed: {}", waiter,
                       state->recordedOn, state->error.message());
    };
    task.what = "a wait for an event";
    task.timeoutMs = timeoutMs > 0 ? timeoutMs : eventWaitTimeoutMs();
    enqueueWaitTask(s, std::move(task));
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
