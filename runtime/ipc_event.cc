// IPC events (ipc_event.h) and event descriptions.
#include "runtime/ipc_event.h"

#include <unistd.h>

#include <new>
#include <utility>

#include "runtime/api.h"
#include "runtime/stream_control.h"

namespace cohort::runtime {

namespace {

constexpr std::uint32_t kIpcEventMagic = 0xC0E7E1FCu;
constexpr std::uint32_t kIpcEventVersion = 1;

bool doneUpTo(const IpcEventBlock& b, std::uint64_t generation) {
  return b.completed.load(std::memory_order_acquire) >= generation;
}

Status needEvent(DeviceManager& m, Event* event, const char* fn) {
  if (event == nullptr || !m.isLiveEvent(event)) {
    return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live event", fn,
                     static_cast<void*>(event));
  }
  return Status::Ok();
}

// Keeps EventState::timedWaits counted while the wait task holding it exists.
struct PendingWait {
  explicit PendingWait(std::shared_ptr<EventState> s) : state(std::move(s)) {
    state->timedWaits.fetch_add(1, std::memory_order_acq_rel);
  }
  ~PendingWait() { state->timedWaits.fetch_sub(1, std::memory_order_acq_rel); }
  std::shared_ptr<EventState> state;
};

}  // namespace

IpcEvent::~IpcEvent() {
  // Failures only mean the mapping is already gone (the runtime shut down).
  if (creator_) {
    (void)sharedFree(block_);
  } else {
    (void)memClose(block_);
  }
}

Status ipcEventRecord(Stream* stream, const std::shared_ptr<IpcEvent>& ipc) {
  const std::uint64_t generation = ipc->block()->recorded.fetch_add(1) + 1;
  stream->enqueue(
      [stream, ipc, generation] {
        IpcEventBlock* b = ipc->block();
        const bool failed = stream->failed();
        std::uint64_t seen = b->completed.load(std::memory_order_acquire);
        if (seen < generation) {
          // The flag describes the latest completion; it is set before that is published.
          if (failed) b->failedPid.store(static_cast<std::int32_t>(getpid()));
          b->failed.store(failed ? 1 : 0, std::memory_order_release);
          while (seen < generation &&
                 !b->completed.compare_exchange_weak(seen, generation, std::memory_order_acq_rel)) {
          }
        }
        b->word.notifyAll();
        return Status::Ok();
      },
      /*runAfterError=*/true);
  return Status::Ok();
}

Status ipcEventWait(Stream* stream, const std::shared_ptr<EventState>& state, long timeoutMs) {
  std::shared_ptr<IpcEvent> ipc = state->ipc;
  const std::uint64_t generation = ipc->block()->recorded.load(std::memory_order_acquire);
  if (generation == 0) return Status::Ok();  // never recorded: nothing to wait for
  auto pending = std::make_shared<PendingWait>(state);
  WaitTask task;
  task.ready = [ipc, generation](long sleepUs) {
    IpcEventBlock* b = ipc->block();
    if (doneUpTo(*b, generation)) return true;
    if (sleepUs <= 0) return false;
    const std::uint32_t seen = b->word.snapshot();
    if (!doneUpTo(*b, generation)) {
      b->word.sleep(seen, Deadline::after(std::chrono::microseconds(sleepUs)));
    }
    return doneUpTo(*b, generation);
  };
  task.then = [ipc, pending]() -> Status {
    IpcEventBlock* b = ipc->block();
    if (b->failed.load(std::memory_order_acquire) == 0) return Status::Ok();
    return makeError(ErrorCode::kRemoteError,
                     "an IPC event this stream waited on was recorded on a stream that had "
                     "failed (in process {})",
                     b->failedPid.load());
  };
  task.what = "a wait for an IPC event";
  task.timeoutMs = timeoutMs > 0 ? timeoutMs : eventWaitTimeoutMs();
  enqueueWaitTask(stream, std::move(task));
  return Status::Ok();
}

Status ipcEventQuery(const IpcEvent& ipc) {
  const IpcEventBlock& b = *ipc.block();
  if (doneUpTo(b, b.recorded.load(std::memory_order_acquire))) return Status::Ok();
  return Status(ErrorCode::kNotReady, "the IPC event's latest record has not run yet");
}

Status ipcEventSynchronize(const IpcEvent& ipc, long timeoutMs) {
  IpcEventBlock* b = ipc.block();
  const std::uint64_t generation = b->recorded.load(std::memory_order_acquire);
  if (!b->word.waitUntil([&] { return doneUpTo(*b, generation); }, Deadline::afterMs(timeoutMs))) {
    return makeError(ErrorCode::kTimeout, "eventSynchronize of an IPC event timed out after {} ms",
                     timeoutMs);
  }
  return Status::Ok();
}

Status ipcEventUnsupported(const char* function) {
  return makeError(ErrorCode::kNotSupported, "{}: not supported for IPC events", function);
}

Status eventCreateIpc(Event** event) {
  return apiCall([&](DeviceManager& m) {
    if (event == nullptr) return Status(ErrorCode::kInvalidArgument, "eventCreateIpc: null output");
    void* memory = nullptr;
    MemHandle handle{};
    COHORT_RETURN_IF_ERROR(sharedAlloc(sizeof(IpcEventBlock), &memory, &handle));
    auto* block = new (memory) IpcEventBlock{};
    block->magic = kIpcEventMagic;
    block->version = kIpcEventVersion;
    Event* created = nullptr;
    Status st = m.createEvent(&created);
    if (!st.ok()) {
      (void)sharedFree(memory);
      return st;
    }
    created->state()->ipc = std::make_shared<IpcEvent>(block, handle, /*creator=*/true);
    *event = created;
    return Status::Ok();
  });
}

Status eventIpcHandle(Event* event, MemHandle* handle) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needEvent(m, event, "eventIpcHandle"));
    if (handle == nullptr)
      return Status(ErrorCode::kInvalidArgument, "eventIpcHandle: null output");
    const auto& ipc = event->state()->ipc;
    if (!ipc) {
      return makeError(ErrorCode::kInvalidArgument,
                       "eventIpcHandle: {} is not an IPC event (eventCreateIpc)",
                       static_cast<void*>(event));
    }
    *handle = ipc->handle();
    return Status::Ok();
  });
}

Status eventOpenIpc(const MemHandle& handle, Event** event) {
  return apiCall([&](DeviceManager& m) {
    if (event == nullptr) return Status(ErrorCode::kInvalidArgument, "eventOpenIpc: null output");
    void* memory = nullptr;
    Status st = memImport(handle, &memory);
    if (!st.ok()) {
      return makeError(st.code(), "eventOpenIpc: the handle does not open an IPC event: {}",
                       st.message());
    }
    PointerAttributes attributes;
    const bool fits = pointerGetAttributes(memory, &attributes).ok() &&
                      attributes.allocationSize >= sizeof(IpcEventBlock);
    auto* block = static_cast<IpcEventBlock*>(memory);
    if (!fits || block->magic != kIpcEventMagic || block->version != kIpcEventVersion) {
      (void)memClose(memory);
      return Status(ErrorCode::kInvalidArgument,
                    "eventOpenIpc: the handle is not an IPC event's (of this runtime version)");
    }
    Event* opened = nullptr;
    st = m.createEvent(&opened);
    if (!st.ok()) {
      (void)memClose(memory);
      return st;
    }
    opened->state()->ipc = std::make_shared<IpcEvent>(block, handle, /*creator=*/false);
    *event = opened;
    return Status::Ok();
  });
}

Status eventDescribe(Event* event, EventDescription* description) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needEvent(m, event, "eventDescribe"));
    if (description == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "eventDescribe: null output");
    }
    const auto& state = event->state();
    EventDescription d;
    d.id = state->id;
    d.ipc = static_cast<bool>(state->ipc);
    bool listening = false;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      listening = !state->listeners.empty();
      if (!d.ipc) {
        const std::uint64_t generation = state->recorded.load();
        d.recorded = generation > 0;
        d.completed = state->done(generation);
        if (d.recorded && d.completed) {
          d.timestampUs = static_cast<std::uint64_t>(
              std::chrono::duration_cast<std::chrono::microseconds>(state->time.time_since_epoch())
                  .count());
        }
      }
    }
    if (d.ipc) {
      const IpcEventBlock& b = *state->ipc->block();
      const std::uint64_t generation = b.recorded.load(std::memory_order_acquire);
      d.recorded = generation > 0;
      d.completed = doneUpTo(b, generation);
    }
    // A queued wait is for a record made before it: once the latest record has run,
    // every wait is satisfied, whether or not its stream got to it yet.
    d.waitsPending =
        !d.completed && (listening || state->timedWaits.load(std::memory_order_acquire) > 0);
    *description = d;
    return Status::Ok();
  });
}

Status eventCount(std::size_t* live) {
  return apiCall([&](DeviceManager&) {
    if (live == nullptr) return Status(ErrorCode::kInvalidArgument, "eventCount: null output");
    *live = Event::liveCount();
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
