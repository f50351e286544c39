// Public stream and event functions (cohort/runtime.h).
#include "common/config.h"
#include "common/log.h"
#include "common/wait.h"
#include "runtime/api.h"
#include "runtime/core_pool.h"
#include "runtime/ipc_event.h"
#include "runtime/stream_control.h"

namespace cohort::runtime {

namespace {
Status needEvent(DeviceManager& m, Event* event, const char* fn) {
  if (event == nullptr || !m.isLiveEvent(event)) {
    return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live event", fn,
                     static_cast<void*>(event));
  }
  return Status::Ok();
}

// Queues a record of the event's next generation on s.
void recordOn(Stream* s, const std::shared_ptr<EventState>& state) {
  const std::uint64_t generation = state->recorded.fetch_add(1) + 1;
  s->enqueue([s, state, generation] {
    state->complete(generation, s->failed() ? s->error() : Status::Ok(), s->name());
    return Status::Ok();
  }, /*runAfterError=*/true, "event record");
}

// Queues on s a wait for the event's latest record, if it has one.
void waitOn(Stream* s, const std::shared_ptr<EventState>& state) {
  const std::uint64_t generation = state->recorded.load();
  // Never recorded: nothing to wait for (an external event waits to be set).
  if (generation != 0 || state->external) s->enqueueWait(state, generation);
}

}  // namespace

Status captureEventRecord(Stream* s, const std::shared_ptr<EventState>& state, bool external) {
  if (state->ipc && s->capture() != nullptr) {
    return makeError(ErrorCode::kNotSupported,
                     "eventRecord: {} captures; an IPC event cannot be recorded in a model",
                     s->name());
  }
  int lane = 0;
  std::shared_ptr<CaptureState> c = s->capture(&lane);
  if (c == nullptr) {
    std::lock_guard<std::mutex> lock(state->mu);  // a real record supersedes a captured one
    state->captured = CapturedRecord{};
    return Status(ErrorCode::kNotReady, "no capture");
  }
  std::size_t laneTask = 0;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    c->recordLocked(lane, ModelTask::ofEvent(ModelTask::Op::kRecord, state));
    laneTask = c->laneTasks[static_cast<std::size_t>(lane)];
  }
  std::lock_guard<std::mutex> lock(state->mu);
  state->captured =
      external || state->external ? CapturedRecord{} : CapturedRecord{c, lane, laneTask};
  return Status::Ok();
}

Status captureEventWait(Stream* s, const std::shared_ptr<EventState>& state) {
  if (state->ipc && s->capture() != nullptr) {
    return makeError(ErrorCode::kNotSupported,
                     "streamWaitEvent: {} captures; a wait on an IPC event cannot be recorded in "
                     "a model",
                     s->name());
  }
  std::shared_ptr<CaptureState> recordedIn;
  int recordLane = 0;
  std::size_t recordTask = 0;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    recordedIn = state->captured.capture.lock();
    recordLane = state->captured.lane;
    recordTask = state->captured.laneTask;
  }
  if (recordedIn != nullptr && !recordedIn->active.load()) recordedIn.reset();
  int lane = 0;
  std::shared_ptr<CaptureState> c = s->capture(&lane);
  if (c == nullptr && recordedIn == nullptr) return Status(ErrorCode::kNotReady, "no capture");
  if (c != nullptr && recordedIn != nullptr && c != recordedIn) {
    c->invalidate(fmt::format("{} waited on an event recorded in another capture", s->name()));
    return makeError(ErrorCode::kCaptured,
                     "streamWaitEvent: {} captures, and the event was recorded in another capture",
                     s->name());
  }
  if (c == nullptr) {  // join the capture the event was recorded in
    c = recordedIn;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      lane = static_cast<int>(c->lanes.size());
      c->lanes.push_back(s);
      c->laneTasks.push_back(0);
      c->joined.push_back(true);
    }
    s->setCapture(c, lane);
  }
  std::lock_guard<std::mutex> lock(c->mu);
  c->recordLocked(lane, ModelTask::ofEvent(ModelTask::Op::kWait, state));
  const auto from = static_cast<std::size_t>(recordLane);
  if (recordedIn == c && lane == 0 && recordLane != 0 && c->laneTasks[from] == recordTask) {
    c->joined[from] = true;  // lane 0 now waits for everything that lane recorded
  }
  return Status::Ok();
}

namespace {

Status recordEvent(Event* event, Stream* stream, bool external) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needEvent(m, event, "eventRecord"));
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<EventState> state = event->state();
    if (captureActive()) {
      Status captured = captureEventRecord(s, state, external);
      if (captured.code() != ErrorCode::kNotReady) return captured;
    }
    if (state->ipc) return ipcEventRecord(s, state->ipc);
    recordOn(s, state);
    return Status::Ok();
  });
}

}  // namespace

Status streamCreate(Stream** stream) {
  return apiCall([&](DeviceManager& m) {
    if (stream == nullptr) return Status(ErrorCode::kInvalidArgument, "streamCreate: null output");
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(currentDevice(m, &d));
    COHORT_RETURN_IF_ERROR(m.createStream(d, stream));
    notifyStreamObserver(*stream, /*created=*/true);
    return Status::Ok();
  });
}

namespace {

// Tells the stream observer that `stream` goes (a live, non-default stream only).
void announceDestruction(DeviceManager& m, Stream* stream) {
  Stream* s = nullptr;
  if (stream != nullptr && hasStreamObserver() && m.resolveStream(stream, &s).ok() &&
      !s->isDefault()) {
    notifyStreamObserver(s, /*created=*/false);
  }
}

}  // namespace

Status streamDestroy(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    announceDestruction(m, stream);
    return m.destroyStream(stream);
  });
}

Status streamDestroyForce(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    announceDestruction(m, stream);
    return m.destroyStreamForce(stream);
  });
}

Status streamSynchronize(Stream* stream, long timeoutMs) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    return s->synchronize(Deadline::afterMs(timeoutMs));
  });
}

Status streamQuery(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    return s->query();
  });
}

Status streamClearError(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    s->clearError();
    return Status::Ok();
  });
}

Status streamGetDevice(Stream* stream, int* device) {
  return apiCall([&](DeviceManager& m) {
    if (device == nullptr) return Status(ErrorCode::kInvalidArgument, "streamGetDevice: null output");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    *device = s->device()->id();
    return Status::Ok();
  });
}

Status streamSetFailureMode(Stream* stream, bool continueAfterError) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    s->setContinueAfterError(continueAfterError);
    return Status::Ok();
  });
}

Status streamProgress(Stream* stream, std::uint64_t* enqueued, std::uint64_t* completed) {
  return apiCall([&](DeviceManager& m) {
    if (enqueued == nullptr || completed == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "streamProgress: null output");
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    s->progress(enqueued, completed);
    return Status::Ok();
  });
}

namespace {
// launchKernel (kHost), and launchBlocks (kKernel).
Status launchTask(Stream* stream, Kernel kernel, TaskPlace* place, Stream::Work work);
}  // namespace

Status launchKernel(Stream* stream, Kernel kernel) {
  return launchKernel(stream, std::move(kernel), nullptr);
}

Status launchBlocks(Stream* stream, std::uint32_t blocks, std::uint32_t cores,
                    BlockFunction block, std::string name) {
  if (!block) return Status(ErrorCode::kInvalidArgument, "launchBlocks: empty block function");
  if (blocks == 0 || cores == 0) {
    return makeError(ErrorCode::kInvalidArgument, "launchBlocks: {} is 0",
                     blocks == 0 ? "blocks" : "cores");
  }
  return launchTask(stream, [blocks, cores, b = std::move(block), n = std::move(name)](Stream* s) {
    // The running stream itself, not its handle: a stream destroyed by force runs on.
    return CorePool::of(s->device()->id()).run(blocks, cores, b, n);
  }, nullptr, Stream::Work::kKernel);
}

Status launchKernel(Stream* stream, Kernel kernel, TaskPlace* place) {
  return launchTask(stream, std::move(kernel), place, Stream::Work::kHost);
}

namespace {
Status launchTask(Stream* stream, Kernel kernel, TaskPlace* place, Stream::Work work) {
  return apiCall([&](DeviceManager& m) {
    if (!kernel) return Status(ErrorCode::kInvalidArgument, "launchKernel: empty kernel");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    // While the stream captures, the kernel goes into the model (enqueueKernel).
    const std::uint64_t position = s->enqueueKernel(std::move(kernel), "kernel", work);
    if (place != nullptr) *place = TaskPlace{s->device()->id(), s->id(), position};
    return Status::Ok();
  });
}
}  // namespace

Status launchCallback(Stream* stream, std::function<void()> callback, CallbackMode mode) {
  return apiCall([&](DeviceManager& m) {
    if (!callback) return Status(ErrorCode::kInvalidArgument, "launchCallback: empty callback");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    if (mode == CallbackMode::kBlocking) {
      s->enqueue([cb = std::move(callback)] {
        cb();
        return Status::Ok();
      }, false, "callback");
      return Status::Ok();
    }
    Device* d = s->device();
    CallbackRunner* runner = nullptr;
    {
      std::lock_guard<std::mutex> lock(d->mu);
      if (!d->callbacks) d->callbacks = std::make_unique<CallbackRunner>();
      runner = d->callbacks.get();
    }
    s->enqueue([runner, cb = std::move(callback)]() {
      runner->post(cb);
      return Status::Ok();
    }, false, "callback");
    return Status::Ok();
  });
}

Status eventCreate(Event** event) {
  return apiCall([&](DeviceManager& m) {
    if (event == nullptr) return Status(ErrorCode::kInvalidArgument, "eventCreate: null output");
    return m.createEvent(event);
  });
}

Status eventCreateExternal(Event** event) {
  return apiCall([&](DeviceManager& m) {
    if (event == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "eventCreateExternal: null output");
    }
    COHORT_RETURN_IF_ERROR(m.createEvent(event));
    (*event)->state()->external = true;  // before anyone else sees it
    return Status::Ok();
  });
}

Status eventDestroy(Event* event) {
  return apiCall([&](DeviceManager& m) { return m.destroyEvent(event); });
}

Status eventRecord(Event* event, Stream* stream) { return recordEvent(event, stream, false); }

Status eventRecordExternal(Event* event, Stream* stream) {
  return recordEvent(event, stream, true);
}

Status streamWaitEvent(Stream* stream, Event* event) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needEvent(m, event, "streamWaitEvent"));
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<EventState> state = event->state();
    if (captureActive()) {
      Status captured = captureEventWait(s, state);
      if (captured.code() != ErrorCode::kNotReady) return captured;
    }
    if (state->ipc) return ipcEventWait(s, state, -1);
    waitOn(s, state);
    return Status::Ok();
  });
}

Status eventQuery(Event* event) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needEvent(m, event, "eventQuery"));
    const auto& state = event->state();
    if (state->ipc) return ipcEventQuery(*state->ipc);
    if (state->done(state->recorded.load())) return Status::Ok();
    return Status(ErrorCode::kNotReady, "the event's latest record has not run yet");
  });
}

Status eventSynchronize(Event* event, long timeoutMs) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needEvent(m, event, "eventSynchronize"));
    std::shared_ptr<EventState> state = event->state();
    if (state->ipc) return ipcEventSynchronize(*state->ipc, timeoutMs);
    const std::uint64_t generation = state->recorded.load();
    if (!state->word.waitUntil([&] { return state->done(generation); },
                               Deadline::afterMs(timeoutMs))) {
      return makeError(ErrorCode::kTimeout, "eventSynchronize timed out after {} ms", timeoutMs);
    }
    return Status::Ok();
  });
}

Status eventElapsedTime(float* ms, Event* start, Event* end) {
  return apiCall([&](DeviceManager& m) {
    if (ms == nullptr) return Status(ErrorCode::kInvalidArgument, "eventElapsedTime: ms is null");
    COHORT_RETURN_IF_ERROR(needEvent(m, start, "eventElapsedTime(start)"));
    COHORT_RETURN_IF_ERROR(needEvent(m, end, "eventElapsedTime(end)"));
    Clock::time_point times[2];
    Event* events[2] = {start, end};
    for (int i = 0; i < 2; ++i) {
      const auto& state = events[i]->state();
      if (state->ipc) return ipcEventUnsupported("eventElapsedTime");
      const std::uint64_t generation = state->recorded.load();
      if (generation == 0) {
        return makeError(ErrorCode::kInvalidUsage, "eventElapsedTime: the {} event was never "
                         "recorded", i == 0 ? "start" : "end");
      }
      if (!state->done(generation)) {
        return makeError(ErrorCode::kNotReady, "eventElapsedTime: the {} event has not "
                         "completed", i == 0 ? "start" : "end");
      }
      std::lock_guard<std::mutex> lock(state->mu);
      times[i] = state->time;
    }
    *ms = std::chrono::duration<float, std::milli>(times[1] - times[0]).count();
    return Status::Ok();
  });
}

Status eventReset(Event* event) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needEvent(m, event, "eventReset"));
    const auto& state = event->state();
    if (state->ipc) return ipcEventUnsupported("eventReset");
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->external) {  // a flag: cleared, its records kept
      state->floor.store(state->completed.load());
      return Status::Ok();
    }
    state->recorded.store(0);
    state->completed.store(0);
    state->error = Status();
    state->failed.store(false);
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
