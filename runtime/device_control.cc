// Forced device reset, device-wide abort, task reports and the task wait timeouts
// (the "Device control and task reports" section of cohort/runtime.h).
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "common/config.h"
#include "common/log.h"
#include "runtime/api.h"
#include "runtime/task_reports.h"

namespace cohort::runtime {

namespace {

thread_local bool tQueuedAny = false;
thread_local std::uint64_t tLastTask = 0;

// The observer is replaced rarely and read on every failure: a shared_ptr swapped
// under a mutex, copied out before the call so it may run without the lock.
std::mutex gObserverMu;
std::shared_ptr<const TaskFailureObserver>& observerSlot() {
  static auto* slot = new std::shared_ptr<const TaskFailureObserver>();  // used at exit too
  return *slot;
}

constexpr long kUnset = -2;
std::atomic<long> gTaskWaitMs{kUnset};   // -2: COHORT_EXEC_TIMEOUT
std::atomic<long> gEventWaitMs{kUnset};  // -2: the task wait timeout

}  // namespace

Status DeviceManager::resetDeviceForce(int id) {
  Device* device = nullptr;
  COHORT_RETURN_IF_ERROR(this->device(id, &device));
  std::unique_lock<std::mutex> lock(device->mu);
  if (device->refCount == 0) {
    return makeError(ErrorCode::kInvalidDevice, "resetDeviceForce({}): the device is not set", id);
  }
  // As the last resetDevice does.
  announceStreamRemovals(device, &lock, [device] { return device->refCount > 0; });
  if (device->refCount == 0) return Status::Ok();  // another thread reset it meanwhile
  COHORT_LOG(kInfo, "runtime", "device {} reset by force ({} reference(s) dropped)", id,
             device->refCount);
  device->refCount = 0;
  tearDown(device);
  if (currentDeviceId() == id) {
    setCurrentDeviceId(-1);
    log::setThreadDevice(-1);
  }
  return Status::Ok();
}

Status resetDeviceForce(int device) {
  return apiCall([&](DeviceManager& m) { return m.resetDeviceForce(device); });
}

Status deviceAbort(int device) {
  std::vector<Stream*> streams;
  Status found = apiCall([&](DeviceManager& m) {
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(m.device(device, &d));
    std::lock_guard<std::mutex> lock(d->mu);
    streams.assign(d->streams.begin(), d->streams.end());
    return Status::Ok();
  });
  COHORT_RETURN_IF_ERROR(found);
  Status first;
  for (Stream* s : streams) {
    Status st = streamAbort(s);
    // A stream destroyed since the list was taken has nothing left to abort.
    if (!st.ok() && st.code() != ErrorCode::kInvalidHandle && first.ok()) first = st;
  }
  return first;
}

Status defaultStream(Stream** out) {
  return apiCall([&](DeviceManager& m) {
    if (out == nullptr) return Status(ErrorCode::kInvalidArgument, "defaultStream: out is null");
    return m.resolveStream(nullptr, out);
  });
}

namespace {
thread_local std::uint32_t tThreadId = 0;
}  // namespace

// Cached: a system call for every queued task showed in the time of a small
// collective (system calls are slow on virtual machines).
std::uint32_t currentThreadId() {
  if (tThreadId == 0) tThreadId = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return tThreadId;
}

void forgetThreadId() { tThreadId = 0; }

void noteTaskQueued(const Stream& stream, std::uint64_t index) {
  if (stream.isDefault()) return;
  tQueuedAny = true;
  tLastTask = index;
}

void reportTaskFailure(const Stream& stream, std::uint64_t index, std::uint32_t launcher,
                       const Status& status) {
  std::shared_ptr<const TaskFailureObserver> observer;
  {
    std::lock_guard<std::mutex> lock(gObserverMu);
    observer = observerSlot();
  }
  if (!observer) return;
  TaskFailure failure;
  failure.device = stream.device()->id();
  failure.streamId = stream.id();
  failure.taskIndex = index;
  failure.threadId = launcher;
  failure.status = status;
  try {
    (*observer)(failure);
  } catch (const std::exception& e) {
    COHORT_LOG(kError, "runtime", "the task-failure observer threw: {}", e.what());
  }
}

void setTaskFailureObserver(TaskFailureObserver observer) {
  auto next = observer ? std::make_shared<const TaskFailureObserver>(std::move(observer))
                       : std::shared_ptr<const TaskFailureObserver>();
  std::lock_guard<std::mutex> lock(gObserverMu);
  observerSlot() = std::move(next);
}

Status threadLastTask(std::uint64_t* taskIndex) {
  if (taskIndex == nullptr) {
    return recordError(Status(ErrorCode::kInvalidArgument, "threadLastTask: taskIndex is null"));
  }
  if (!tQueuedAny) {
    return recordError(
        Status(ErrorCode::kInvalidUsage, "this thread has queued no task on a stream it created"));
  }
  *taskIndex = tLastTask;
  return Status::Ok();
}

void setTaskWaitTimeout(long timeoutMs) { gTaskWaitMs.store(timeoutMs < 0 ? kUnset : timeoutMs); }
void setEventWaitTimeout(long timeoutMs) { gEventWaitMs.store(timeoutMs < 0 ? kUnset : timeoutMs); }

long taskWaitTimeoutMs() {
  const long set = gTaskWaitMs.load();
  return set == kUnset ? 1000L * Config::global().execTimeoutS : set;
}

long eventWaitTimeoutMs() {
  const long set = gEventWaitMs.load();
  return set == kUnset ? taskWaitTimeoutMs() : set;
}

}  // namespace cohort::runtime
