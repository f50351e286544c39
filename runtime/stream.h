// A stream: an in-order task queue run by its own worker thread, and by a thread
// that synchronizes it (see synchronize()).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "cohort/runtime.h"
#include "common/ring_queue.h"
#include "common/wait.h"
#include "runtime/capture.h"
#include "runtime/event.h"

namespace cohort::runtime {

class Device;

/// Thread-safe: any thread may enqueue, query or synchronize. Owned by the
/// DeviceManager's stream registry; the destructor drains the queue. Its tasks
/// run one at a time in queueing order, each on the worker or on a thread that
/// synchronizes the stream (host kernels only: synchronize()).
class Stream {
 public:
  Stream(Device* device, int id, bool isDefault);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// Queues a task. A task that fails makes the stream's error sticky; later
  /// tasks are skipped unless `runAfterError` (event records use it so that
  /// waiters on other streams are released and see the error). Returns the
  /// task's position on the stream (0, 1, 2, ... in queueing order).
  /// While the stream captures, the task is recorded into the capture instead
  /// (`kind` names it in the model) and the position returned is the next one.
  /// What a task is to the emulated device. kTransfer (a copy, a set) and kKernel (a
  /// kernel's blocks) run to their end without waiting for anything off the device:
  /// settle() waits for them, and abort() kills a kernel as a device would.
  enum class Work : std::uint8_t { kHost, kTransfer, kKernel };
  std::uint64_t enqueue(std::function<Status()> task, bool runAfterError = false,
                        const char* kind = "task", Work work = Work::kHost);
  /// enqueue() of a kernel, run as compute (ComputeScope) and handed the stream
  /// that runs it. The task holds the kernel itself: a function wrapping it would
  /// cost an allocation at every launch.
  std::uint64_t enqueueKernel(Kernel kernel, const char* kind, Work work);
  /// Waits until the device work that leads the queue (the running task and those
  /// behind it, up to the first that may wait for something else: an event wait, a
  /// callback, a host kernel, a collective) has run. A real device runs such work
  /// in microseconds, before a synchronous memory call of the host reaches it;
  /// settle() gives the host's synchronous calls that view. It never waits for an
  /// event, a callback or another rank, and returns at once on a stopped stream or
  /// on its own worker.
  void settle();
  /// enqueue (after errors too) of a task whose first act is to wait for `generation`
  /// of `event` (a model's lane): if that is not done yet, a sleeping worker is left
  /// asleep and woken by the event's completion, which it would wait for anyway,
  /// sparing the caller the wake-up.
  void enqueueAfter(std::function<Status()> task, const char* kind,
                    const std::shared_ptr<EventState>& event, std::uint64_t generation);
  /// From a task running on this stream (a model's lane): waits for `generation` of
  /// `event` as an event wait task does (timeout, abort, the event's error).
  Status waitInTask(const std::shared_ptr<EventState>& event, std::uint64_t generation);
  /// The capture this stream records into (null: none), and its lane there.
  std::shared_ptr<CaptureState> capture(int* lane = nullptr) const;
  /// Joins (or, null, leaves) a capture on `lane`.
  void setCapture(std::shared_ptr<CaptureState> capture, int lane);
  /// Later tasks run after a failure too (streamSetFailureMode).
  void setContinueAfterError(bool on) { continueAfterError_.store(on, std::memory_order_relaxed); }
  bool continueAfterError() const { return continueAfterError_.load(std::memory_order_relaxed); }
  /// From a task that runs after errors (runAfterError): whether it runs only for
  /// that reason, the stream having failed (and not continuing after errors) or
  /// abort() having dropped it. The running task's thread only.
  bool runningOnlyAfterError() const { return runningOnlyAfterError_; }
  /// streamAbort(): drops what is queued, ends a running wait, then clears the error;
  /// a kernel that was running, or about to (first in the queue), leaves kKernelFault,
  /// as a kernel the device killed would.
  Status abort();
  /// streamStop(): fails the stream with kAborted, ends a running wait, and holds the
  /// worker (what is queued stays) until abort() or destruction.
  void stop();
  bool stopped() const { return paused_.load(std::memory_order_acquire); }
  /// streamDestroyForce(): what is queued still runs, but every wait of the stream,
  /// running now or later, ends with kAborted (and, the stream failing, drops what
  /// is queued behind it). The stream takes no new work: its handle is gone.
  void retire();
  bool retiring() const { return retiring_.load(std::memory_order_acquire); }
  /// Every queued task has completed (or was dropped).
  bool idle() const {
    return completed_.load(std::memory_order_acquire) >= enqueued_.load(std::memory_order_acquire);
  }
  /// Grows when abort() or stop() begins: a wait that saw another value ends.
  std::uint64_t interruptions() const { return interrupts_.load(std::memory_order_acquire); }
  /// Whether the calling thread is running one of this stream's tasks (on the
  /// worker, or helping in a synchronize).
  bool onWorker() const;
  /// Queues a wait for an event's record `generation`. Such a wait is "lazy": a
  /// host thread synchronizing the stream counts it as done as soon as the event
  /// is, without waiting for this stream's worker to wake up and run it.
  void enqueueWait(std::shared_ptr<EventState> event, std::uint64_t generation);
  /// Called by an event this stream waits on when it completes.
  void dependencyDone();
  /// Waits for the work queued before the call. Without a deadline, the calling
  /// thread runs the host kernels (launchKernel) that lead the queue itself while
  /// the worker has not taken them: a thread that would only wait does the work,
  /// instead of waiting for the worker to be woken and scheduled (on a loaded
  /// node, tens of microseconds). What the program sees is the same: the tasks
  /// run in order, one at a time, on the stream's device, and the synchronize
  /// returns when they have. A deadline must be kept, which a task running on
  /// the caller cannot promise: then it only waits.
  Status synchronize(Deadline deadline);
  Status query();
  Status error() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  void clearError();

  /// The tasks queued so far, and those that ran.
  std::uint64_t enqueued() const { return enqueued_.load(std::memory_order_acquire); }
  std::uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  /// streamProgress(): completed read first (it never exceeds enqueued).
  void progress(std::uint64_t* enqueued, std::uint64_t* completed) const {
    *completed = this->completed();
    *enqueued = this->enqueued();
  }
  Device* device() const { return device_; }
  int id() const { return id_; }
  bool isDefault() const { return isDefault_; }
  /// "device 2 stream 5" for messages.
  /// "device 0 stream 1" (made once: errors, logs and events use it often).
  const std::string& name() const { return name_; }

 private:
  struct Task {
    std::function<Status()> fn;
    Kernel kernel;  // enqueueKernel(): runs instead of fn
    bool runAfterError = false;
    std::shared_ptr<EventState> waitOn;  // set for event waits
    std::shared_ptr<EventState> wakeOn;  // enqueueAfter: this stream listens to it until run
    std::uint64_t waitGeneration = 0;
    std::uint32_t launcher = 0;  // Linux thread id of the thread that queued it
    Work work = Work::kHost;     // see enqueue()
  };
  void workerLoop();
  /// Takes the queue's front to run (mu_ held): false while another thread runs
  /// a task, the stream is stopped or nothing is queued. `number` is its 1-based
  /// position on the stream.
  bool takeLocked(Task* task, std::uint64_t* number);
  /// Runs (or skips, as the stream's state says) a task takeLocked() gave, and
  /// completes it. On whichever thread took it.
  void runTaken(Task& task, std::uint64_t number);
  /// synchronize()'s help: runs the host kernels at the queue's front, up to the
  /// task numbered `target`, while the worker has not taken them.
  void help(std::uint64_t target);
  /// Queues `t` (its work fields set), or records it into the capture.
  std::uint64_t enqueueTask(Task t, const char* kind);
  /// Records a task into capture_ (mu_ held, capture_ set).
  void recordLocked(std::function<Status()> fn, bool runAfterError, const char* kind);
  /// kCaptured, invalidating the capture, if the stream captures (`what` it was asked).
  Status refuseIfCapturing(const char* what) const;
  void fail(Status status);
  Status waitForEvent(const std::shared_ptr<EventState>& event, std::uint64_t generation);
  /// With mu_ held: ok if every task before `target` not yet completed is an
  /// event wait whose event is done; kNotReady if not; the event's error if one
  /// carries it.
  Status lazyDone(std::uint64_t target) const;
  Status progressTo(std::uint64_t target) const;
  /// A host thread waiting on doneWord_ until `target` tasks completed, for the
  /// scope it lives in: the worker wakes it when its task count reaches the
  /// smallest such target (or a task fails), not after every task.
  class DoneWaiter {
   public:
    DoneWaiter(Stream& s, std::uint64_t target);
    ~DoneWaiter();
   private:
    Stream& s_;
  };
  /// After a task completed (`failed`: it failed): wakes the host threads waiting
  /// for it.
  void taskDone(std::uint64_t completed, bool failed);
  /// Whether a task was taken and has not completed (running_). mu_ held.
  bool holdsTaskLocked() const {
    return completed_.load(std::memory_order_acquire) <
           enqueued_.load(std::memory_order_acquire) - queue_.size();
  }

  Device* const device_;
  const int id_;
  const bool isDefault_;
  std::atomic<bool> continueAfterError_{false};
  const std::string name_;

  mutable std::mutex mu_;
  RingQueue<Task> queue_;
  Task running_;  // the task running now (its wait fields only)
  bool runningOnlyAfterError_ = false;  // the running task's thread only
  // Tasks taken from the queue so far, and whether one taken has not completed
  // (then nobody else takes one): changed under mu_, read by the worker's wait.
  std::atomic<std::uint64_t> taken_{0};
  std::atomic<bool> busy_{false};
  std::atomic<int> workerTid_{0};  // the worker's Linux thread id (its timeline track)
  Status error_;
  std::atomic<std::uint64_t> enqueued_{0};
  std::atomic<std::uint64_t> completed_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> stopping_{false};
  // abort(): tasks numbered up to this (1-based, in queue order) are dropped.
  std::atomic<std::uint64_t> dropThrough_{0};
  std::atomic<std::uint64_t> interrupts_{0};
  std::atomic<bool> retiring_{false};
  std::atomic<bool> paused_{false};  // stop(): the worker takes no task
  std::shared_ptr<CaptureState> capture_;  // guarded by mu_
  int captureLane_ = 0;
  WaitWord workWord_;
  WaitWord doneWord_;
  // The smallest target of the DoneWaiters (kNoWaiter: none), and how many there
  // are; both changed under waitersMu_, wakeAt_ read by the worker without it.
  static constexpr std::uint64_t kNoWaiter = ~std::uint64_t(0);
  std::atomic<std::uint64_t> wakeAt_{kNoWaiter};
  std::mutex waitersMu_;
  int waiters_ = 0;
  std::thread worker_;
};

}  // namespace cohort::runtime
