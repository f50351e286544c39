// A stream's queue: enqueueing (or recording into a capture), event waits and
// their lazy completion, the stream's error, and the events it completes. Who
// runs the tasks and how threads wait for them: stream_run.cc.
#include "runtime/stream.h"

#include <optional>
#include <thread>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "runtime/device.h"
#include "runtime/task_reports.h"

namespace cohort::runtime {

Stream::Stream(Device* device, int id, bool isDefault)
    : device_(device),
      id_(id),
      isDefault_(isDefault),
      name_(fmt::format("device {} stream {}{}", device->id(), id, isDefault ? " (default)" : "")) {
  worker_ = std::thread([this] { workerLoop(); });
}

Stream::~Stream() {
  int lane = 0;
  if (std::shared_ptr<CaptureState> c = capture(&lane)) {
    {
      std::lock_guard<std::mutex> lock(c->mu);
      for (Stream*& s : c->lanes) {
        if (s == this) s = nullptr;
      }
      if (c->problem.empty()) c->problem = name_ + " was destroyed while it captured";
    }
    if (lane == 0 && !c->building) abandonCapture(c);  // nobody can end it now
  }
  if (paused_.load(std::memory_order_acquire)) {
    // Stopped: what it holds is dropped, not run.
    std::lock_guard<std::mutex> lock(mu_);
    dropThrough_.store(enqueued_.load(std::memory_order_acquire), std::memory_order_release);
    paused_.store(false, std::memory_order_release);
  }
  stopping_.store(true, std::memory_order_release);
  workWord_.notifyAll();
  worker_.join();
}


std::uint64_t Stream::enqueue(std::function<Status()> task, bool runAfterError,
                              const char* kind, Work work) {
  Task t;
  t.fn = std::move(task);
  t.runAfterError = runAfterError;
  t.work = work;
  return enqueueTask(std::move(t), kind);
}

std::uint64_t Stream::enqueueKernel(Kernel kernel, const char* kind, Work work) {
  Task t;
  t.kernel = std::move(kernel);
  t.work = work;
  return enqueueTask(std::move(t), kind);
}

std::uint64_t Stream::enqueueTask(Task t, const char* kind) {
  std::uint64_t position = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (capture_ != nullptr) {
      if (t.kernel) {  // a launch of the model hands the kernel the stream it runs on
        ModelTask recorded;
        recorded.op = ModelTask::Op::kKernel;
        recorded.kernel = std::move(t.kernel);
        recorded.kind = kind;
        capture_->record(captureLane_, std::move(recorded));
      } else {
        recordLocked(std::move(t.fn), t.runAfterError, kind);
      }
      return enqueued_.load(std::memory_order_relaxed);
    }
    t.launcher = currentThreadId();
    position = enqueued_.load(std::memory_order_relaxed);
    noteTaskQueued(*this, position);
    queue_.push_back(std::move(t));
    enqueued_.fetch_add(1, std::memory_order_release);
  }
  workWord_.notifyAll();
  return position;
}

void Stream::recordLocked(std::function<Status()> fn, bool runAfterError, const char* kind) {
  ModelTask recorded;
  recorded.fn = std::move(fn);
  recorded.runAfterError = runAfterError;
  recorded.kind = kind;
  capture_->record(captureLane_, std::move(recorded));
}

std::shared_ptr<CaptureState> Stream::capture(int* lane) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (lane != nullptr) *lane = captureLane_;
  return capture_;
}

void Stream::setCapture(std::shared_ptr<CaptureState> capture, int lane) {
  std::lock_guard<std::mutex> lock(mu_);
  capture_ = std::move(capture);
  captureLane_ = lane;
}

void Stream::enqueueWait(std::shared_ptr<EventState> event, std::uint64_t generation) {
  event->addListener(this);
  {
    std::lock_guard<std::mutex> lock(mu_);
    Task t;
    t.waitOn = event;
    t.waitGeneration = generation;
    t.fn = [this, event, generation] { return waitForEvent(event, generation); };
    t.launcher = currentThreadId();
    noteTaskQueued(*this, enqueued_.load(std::memory_order_relaxed));
    queue_.push_back(std::move(t));
    enqueued_.fetch_add(1, std::memory_order_release);
  }
  workWord_.notifyAll();
}

void Stream::enqueueAfter(std::function<Status()> task, const char* kind,
                          const std::shared_ptr<EventState>& event, std::uint64_t generation) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (capture_ != nullptr) {  // not expected (a model's own stream), but kept correct
      recordLocked(std::move(task), true, kind);
      return;
    }
    Task t;
    t.fn = std::move(task);
    t.runAfterError = true;
    t.wakeOn = event;
    t.launcher = currentThreadId();
    noteTaskQueued(*this, enqueued_.load(std::memory_order_relaxed));
    queue_.push_back(std::move(t));
    enqueued_.fetch_add(1, std::memory_order_release);
  }
  // Under the event's lock: either its completion comes later and finds this stream
  // among its listeners (and the task queued), or it came before and is seen here.
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(event->mu);
    ++event->listeners[this];
    done = event->reached(generation);
  }
  if (done) workWord_.notifyAll();
}

Status Stream::waitInTask(const std::shared_ptr<EventState>& event, std::uint64_t generation) {
  event->addListener(this);  // its completion wakes this worker, as for a wait task
  Status s = waitForEvent(event, generation);
  event->removeListener(this);
  return s;
}

void Stream::dependencyDone() {
  doneWord_.notifyAll();
  workWord_.notifyAll();
}

namespace {
// With state.mu held, or once state.failed was seen set.
Status eventError(const EventState& state, const std::string& waiter) {
  if (state.error.ok()) return Status::Ok();
  // Keep the original code: the caller wants "remote error", not "task failed".
  return makeError(state.error.code(), "{} waited on an event recorded on {}, which had failed: {}",
                   waiter, state.recordedOn, state.error.message());
}
}  // namespace

// How often an event wait looks at its stream's aborts and at its timeout.
constexpr auto kEventWaitSlice = std::chrono::milliseconds(100);

Status Stream::waitForEvent(const std::shared_ptr<EventState>& event, std::uint64_t generation) {
  // COHORT_EXEC_TIMEOUT unless aclrtSetOpWaitTimeout / aclrtSetOpExecuteTimeOut set one.
  const long timeoutMs = eventWaitTimeoutMs();
  const Deadline deadline =
      timeoutMs == 0 ? Deadline::never() : Deadline::after(std::chrono::milliseconds(timeoutMs));
  auto ready = [&] { return event->reached(generation); };
  const std::uint64_t interruptions = this->interruptions();
  auto queuedBehind = [&] {
    return enqueued_.load(std::memory_order_acquire) > completed_.load(std::memory_order_acquire) + 1;
  };
  // An abort that counted its interruption before this wait began still drops
  // the running task (number completed_ + 1) through dropThrough_.
  auto dropped = [&] {
    return dropThrough_.load(std::memory_order_acquire) >
           completed_.load(std::memory_order_acquire);
  };
  auto between = [&]() -> std::optional<Status> {
    if (this->interruptions() != interruptions || retiring() || dropped()) {
      return makeError(ErrorCode::kAborted, "{}: a wait for an event was aborted", name());
    }
    if (deadline.expired()) {
      return makeError(ErrorCode::kTimeout,
                       "{} waited longer than the event wait timeout ({} ms; "
                       "COHORT_EXEC_TIMEOUT by default) for an event",
                       name(), timeoutMs);
    }
    return std::nullopt;
  };
  if (!ready() && !queuedBehind()) {
    // Nobody needs this worker soon (host waiters see lazy waits through the
    // event): it sleeps until the event completes or work arrives behind it
    // (either wakes workWord_).
    static constexpr WaitPolicy kSleepAtOnce{0, 0};
    COHORT_RETURN_IF_ERROR(workWord_.waitChecked([&] { return ready() || queuedBehind(); },
                                                 deadline, kSleepAtOnce, kEventWaitSlice, between));
  }
  if (!ready()) {
    // Work is waiting behind this: follow the event closely, but yield only
    // briefly (a long yield stage hands the processor to the compute the
    // event waits for, or that runs beside it, for a whole time slice).
    static thread_local const WaitPolicy close = WaitPolicy::idleFromConfig();
    COHORT_RETURN_IF_ERROR(
        event->word.waitChecked(ready, deadline, close, kEventWaitSlice, between));
  }
  if (!event->failed.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lock(event->mu);
  return eventError(*event, name());
}

Status Stream::lazyDone(std::uint64_t target) const {
  // Tasks [completed_, target): the running one, then the queue's front.
  std::uint64_t index = completed_.load(std::memory_order_acquire);
  // The worker may have finished (and failed) since the caller looked: mu_ is
  // held, so error_ is read directly. After a failure the later tasks are skipped,
  // unless they run anyway (continueAfterError_): then they are waited for.
  const bool skipping = !continueAfterError_.load(std::memory_order_relaxed);
  if (failed() && skipping) return error_;
  if (index >= target) return failed() ? error_ : Status::Ok();
  auto check = [&](const Task& t) -> Status {
    if (!t.waitOn || !t.waitOn->reached(t.waitGeneration)) return Status(ErrorCode::kNotReady, "");
    if (!t.waitOn->failed.load(std::memory_order_acquire)) return Status::Ok();
    // Running on after errors, the stream reports each once: its worker records this
    // one, which the synchronize that returns it then clears.
    if (!skipping) return Status(ErrorCode::kNotReady, "");
    std::lock_guard<std::mutex> lock(t.waitOn->mu);
    return eventError(*t.waitOn, name());
  };
  if (holdsTaskLocked()) {
    COHORT_RETURN_IF_ERROR(check(running_));
    ++index;
  }
  for (std::size_t i = 0; index < target && i < queue_.size(); ++i, ++index) {
    COHORT_RETURN_IF_ERROR(check(queue_[i]));
  }
  return failed() ? error_ : Status::Ok();
}

Status Stream::progressTo(std::uint64_t target) const {
  if (completed_.load(std::memory_order_seq_cst) >= target) return error();
  // A stopped stream holds its queue until abort(): waiting for it would never end.
  if (failed() && (!continueAfterError_.load(std::memory_order_relaxed) ||
                   paused_.load(std::memory_order_acquire))) {
    return error();
  }
  std::lock_guard<std::mutex> lock(mu_);
  return lazyDone(target);
}

void Stream::fail(Status status) {
  COHORT_LOG(kError, "runtime", "{}: task failed: {}", name(), status.toString());
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed()) {
    error_ = std::move(status);
    failed_.store(true, std::memory_order_release);
  }
}

Status Stream::refuseIfCapturing(const char* what) const {
  if (!captureActive()) return Status::Ok();
  std::shared_ptr<CaptureState> c = capture();
  // A stream bound to a model being built holds its work for the model: what it runs
  // (what was queued before it was bound) may be waited for.
  if (c == nullptr || c->building) return Status::Ok();
  const std::string why = fmt::format("{} {} while it captured", name(), what);
  c->invalidate(why);
  return makeError(ErrorCode::kCaptured,
                   "{}: its work is recorded, not run, until the capture ends (the capture is "
                   "now invalidated)", why);
}

Status Stream::query() {
  COHORT_RETURN_IF_ERROR(refuseIfCapturing("was queried"));
  Status s = progressTo(enqueued_.load(std::memory_order_acquire));
  if (s.code() == ErrorCode::kNotReady) return Status(ErrorCode::kNotReady, name() + " has pending work");
  return s;
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

void EventState::complete(std::uint64_t generation, Status streamError,
                          const std::string& streamName) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (completed.load(std::memory_order_relaxed) < generation) {
      error = std::move(streamError);
      time = Clock::now();
      if (!error.ok()) recordedOn = streamName;  // only errors name it
      failed.store(!error.ok(), std::memory_order_release);
      completed.store(generation, std::memory_order_release);
    }
    word.notifyAll();
    // A listener removes itself under mu before it can be destroyed, so the
    // pointers stay valid while mu is held. Each stream is told once, however
    // many of its waits are queued.
    for (const auto& [s, count] : listeners) s->dependencyDone();
  }
}

void EventState::addListener(Stream* s) {
  std::lock_guard<std::mutex> lock(mu);
  ++listeners[s];
}

void EventState::removeListener(Stream* s) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = listeners.find(s);
  if (it != listeners.end() && --it->second == 0) listeners.erase(it);
}

}  // namespace cohort::runtime
