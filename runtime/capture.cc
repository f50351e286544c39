// Stream capture and models (cohort/runtime_capture.h). A capture is a CaptureState that
// its member streams point at: Stream::enqueue records into it, the event calls
// (stream_api.cc) record issuers of their own and join streams to it. Ending it moves
// the record into the Model made when it began.
#include "runtime/capture.h"

#include <algorithm>
#include <set>

#include "common/error.h"
#include "common/wait.h"
#include "runtime/api.h"
#include "runtime/stream.h"

namespace cohort::runtime {

namespace {

// The captures that run (their member streams point at them too) and the models that
// exist. Both guarded by gMu; gActive mirrors the number of captures for hot paths.
std::mutex gMu;
std::set<std::shared_ptr<CaptureState>>& activeCaptures() {
  static auto* captures = new std::set<std::shared_ptr<CaptureState>>();  // used until exit
  return *captures;
}
std::set<Model*>& liveModels() {
  static auto* models = new std::set<Model*>();  // used until exit
  return *models;
}
std::atomic<int> gActive{0};
std::atomic<std::uint32_t> gNextModelId{0};
thread_local CaptureMode tMode = CaptureMode::kGlobal;

bool isCaptureMode(CaptureMode mode) {
  return mode == CaptureMode::kGlobal || mode == CaptureMode::kThreadLocal ||
         mode == CaptureMode::kRelaxed;
}

const char* modeName(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kGlobal: return "global";
    case CaptureMode::kThreadLocal: return "thread-local";
    case CaptureMode::kRelaxed: return "relaxed";
  }
  return "unknown";
}

// Takes the capture out of the running ones and its streams out of it.
void endCapture(const std::shared_ptr<CaptureState>& c) {
  std::vector<Stream*> lanes;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (!c->active.exchange(false)) return;
    lanes = c->lanes;
  }
  {
    std::lock_guard<std::mutex> lock(gMu);
    activeCaptures().erase(c);
    gActive.fetch_sub(1, std::memory_order_release);
  }
  for (Stream* s : lanes) {
    if (s != nullptr) s->setCapture(nullptr, 0);
  }
}

}  // namespace

void abandonCapture(const std::shared_ptr<CaptureState>& c) {
  endCapture(c);
  if (c->model != nullptr) c->model->setCapturing(nullptr);
}

namespace {

Status needModel(Model* model, const char* fn) {
  std::lock_guard<std::mutex> lock(gMu);
  if (model == nullptr || liveModels().count(model) == 0) {
    return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live model", fn,
                     static_cast<void*>(model));
  }
  return Status::Ok();
}

}  // namespace

void CaptureState::recordLocked(int lane, ModelTask task) {
  task.lane = lane;
  tasks.push_back(std::move(task));
  laneTasks[static_cast<std::size_t>(lane)] += 1;
  if (lane != 0) joined[static_cast<std::size_t>(lane)] = false;
}

void CaptureState::invalidate(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu);
  if (problem.empty()) problem = why;
}

int CaptureState::unjoinedLanesLocked() const {
  return static_cast<int>(std::count(joined.begin() + 1, joined.end(), false));
}

Model::~Model() {
  std::map<int, LaneStreams> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams.swap(laneStreams_);
  }
  DeviceManager& m = DeviceManager::get();
  for (auto& [id, lanes] : streams) {
    Device* d = nullptr;
    if (!m.device(id, &d).ok() || d->resetCount.load(std::memory_order_acquire) != lanes.resets) {
      continue;  // gone with a teardown of their device
    }
    for (Stream* s : lanes.streams) (void)m.destroyStream(s);
  }
}

std::shared_ptr<CaptureState> Model::capturing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return capturing_;
}

void Model::setCapturing(std::shared_ptr<CaptureState> capture) {
  std::lock_guard<std::mutex> lock(mu_);
  capturing_ = std::move(capture);
}

void Model::finish(int lanes, std::vector<ModelTask> tasks) {
  std::lock_guard<std::mutex> lock(mu_);
  capturing_.reset();
  complete_ = true;
  lanes_ = lanes;
  tasks_ = std::move(tasks);
}

bool Model::complete() const {
  std::lock_guard<std::mutex> lock(mu_);
  return complete_;
}

int Model::lanes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lanes_;
}

std::vector<ModelTask> Model::tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_;
}

Status Model::laneStreamsLocked(Stream* stream, std::vector<Stream*>* out) {
  DeviceManager& m = DeviceManager::get();
  Device* device = stream->device();
  LaneStreams& lanes = laneStreams_[device->id()];
  // A teardown of the device destroyed the streams made on it before: make them again.
  const std::uint64_t resets = device->resetCount.load(std::memory_order_acquire);
  if (lanes.resets != resets) {
    lanes.streams.clear();
    lanes.resets = resets;
  }
  lanes.streams.resize(static_cast<std::size_t>(lanes_ - 1), nullptr);
  for (Stream*& s : lanes.streams) {
    if (s == nullptr) COHORT_RETURN_IF_ERROR(m.createStream(device, &s));
  }
  out->assign(1, stream);
  out->insert(out->end(), lanes.streams.begin(), lanes.streams.end());
  return Status::Ok();
}

Status Model::launch(Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!complete_) {
    return makeError(ErrorCode::kInvalidUsage, "model {} {}", id_,
                     capturing_ != nullptr ? "is still being captured"
                                           : "was never completed: its capturing stream was "
                                             "destroyed before the capture ended");
  }
  std::vector<Stream*> lanes;
  COHORT_RETURN_IF_ERROR(laneStreamsLocked(stream, &lanes));
  // Runs of plain tasks on one stream go in at once; an issuer queues its own.
  std::vector<Stream::Queued> run;
  Stream* runOn = nullptr;
  for (const ModelTask& t : tasks_) {
    Stream* r = lanes[static_cast<std::size_t>(t.lane)];
    if (r != runOn || t.issue) {
      if (runOn != nullptr) runOn->enqueueAll(&run);
      runOn = r;
    }
    if (t.issue) {
      COHORT_RETURN_IF_ERROR(t.issue(r));
    } else if (t.kernel) {
      run.push_back(Stream::Queued{[r, k = t.kernel] {
                                     ComputeScope computing;  // as launchKernel's tasks do
                                     return k(r);
                                   },
                                   false, t.kind});
    } else {
      run.push_back(Stream::Queued{t.fn, t.runAfterError, t.kind});
    }
  }
  if (runOn != nullptr) runOn->enqueueAll(&run);
  return Status::Ok();
}

bool captureActive() { return gActive.load(std::memory_order_acquire) > 0; }

Status captureBegin(Stream* stream, CaptureMode mode) {
  return apiCall([&](DeviceManager& m) {
    if (!isCaptureMode(mode)) {
      return makeError(ErrorCode::kInvalidArgument, "captureBegin: mode {} is not a capture mode",
                       static_cast<int>(mode));
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    if (s->capture() != nullptr) {
      return makeError(ErrorCode::kCaptured, "captureBegin: {} captures already", s->name());
    }
    auto c = std::make_shared<CaptureState>();
    c->mode = mode;
    c->thread = std::this_thread::get_id();
    c->modelId = gNextModelId.fetch_add(1, std::memory_order_relaxed) + 1;
    c->lanes = {s};
    c->laneTasks = {0};
    c->joined = {true};
    auto model = std::make_unique<Model>(c->modelId);
    model->setCapturing(c);
    c->model = model.get();
    {
      std::lock_guard<std::mutex> lock(gMu);
      liveModels().insert(model.release());
      activeCaptures().insert(c);
      gActive.fetch_add(1, std::memory_order_release);
    }
    s->setCapture(c, 0);
    return Status::Ok();
  });
}

Status captureEnd(Stream* stream, Model** model) {
  return apiCall([&](DeviceManager& m) {
    if (model == nullptr) return Status(ErrorCode::kInvalidArgument, "captureEnd: null output");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    int lane = 0;
    std::shared_ptr<CaptureState> c = s->capture(&lane);
    if (c == nullptr) {
      return makeError(ErrorCode::kInvalidUsage, "captureEnd: {} does not capture", s->name());
    }
    if (lane != 0) {
      return makeError(ErrorCode::kInvalidUsage,
                       "captureEnd: {} joined a capture through an event; end it on the stream "
                       "that began it",
                       s->name());
    }
    std::string problem;
    int unjoined = 0;
    int lanes = 1;
    std::vector<ModelTask> tasks;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      if (c->mode != CaptureMode::kRelaxed && c->thread != std::this_thread::get_id()) {
        return makeError(ErrorCode::kInvalidUsage,
                         "captureEnd: the capture on {} began on another thread ({} mode: only a "
                         "relaxed capture may end elsewhere)",
                         s->name(), modeName(c->mode));
      }
      problem = c->problem;
      unjoined = c->unjoinedLanesLocked();
      lanes = static_cast<int>(c->lanes.size());
      tasks.swap(c->tasks);
    }
    endCapture(c);
    Model* made = c->model;
    if (problem.empty() && unjoined == 0) {
      made->finish(lanes, std::move(tasks));
      *model = made;
      return Status::Ok();
    }
    {
      std::lock_guard<std::mutex> lock(gMu);
      liveModels().erase(made);
    }
    delete made;
    *model = nullptr;
    if (!problem.empty()) {
      return makeError(ErrorCode::kCaptured, "captureEnd: the capture on {} broke: {}", s->name(),
                       problem);
    }
    return makeError(ErrorCode::kCaptured,
                     "captureEnd: {} stream(s) joined the capture on {} and were not joined back "
                     "(the capturing stream must wait on an event recorded after their last task)",
                     unjoined, s->name());
  });
}

Status captureDescribe(Stream* stream, CaptureDescription* out) {
  return apiCall([&](DeviceManager& m) {
    if (out == nullptr) return Status(ErrorCode::kInvalidArgument, "captureDescribe: null output");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    int lane = 0;
    std::shared_ptr<CaptureState> c = s->capture(&lane);
    *out = CaptureDescription{};
    if (c == nullptr) return Status::Ok();
    std::lock_guard<std::mutex> lock(c->mu);
    out->status = c->problem.empty() ? CaptureStatus::kActive : CaptureStatus::kInvalidated;
    out->origin = lane == 0;
    out->beganHere = c->thread == std::this_thread::get_id();
    out->mode = c->mode;
    out->unjoinedLanes = c->unjoinedLanesLocked();
    out->tasks = c->tasks.size();
    out->modelId = c->modelId;
    out->problem = c->problem;
    return Status::Ok();
  });
}

Status captureModel(Stream* stream, Model** model) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<CaptureState> c = s->capture();
    *model = c != nullptr ? c->model : nullptr;
    return Status::Ok();
  });
}

Status captureExchangeMode(CaptureMode* mode) {
  if (mode == nullptr) {
    return recordError(Status(ErrorCode::kInvalidArgument, "captureExchangeMode: null mode"));
  }
  if (!isCaptureMode(*mode)) {
    return recordError(makeError(ErrorCode::kInvalidArgument,
                                 "captureExchangeMode: mode {} is not a capture mode",
                                 static_cast<int>(*mode)));
  }
  std::swap(*mode, tMode);
  return Status::Ok();
}

Status captureCheckUnsafe(const char* what) {
  if (!captureActive() || tMode == CaptureMode::kRelaxed) return Status::Ok();
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard<std::mutex> lock(gMu);
  for (const std::shared_ptr<CaptureState>& c : activeCaptures()) {
    const bool mine = c->mode != CaptureMode::kRelaxed && c->thread == self;
    const bool global = c->mode == CaptureMode::kGlobal && tMode == CaptureMode::kGlobal;
    if (!mine && !global) continue;
    return recordError(makeError(
        ErrorCode::kCaptured,
        "{} is not allowed while a stream captures in {} mode (model {}): it would wait for or "
        "change memory outside the recorded order; make the thread's mode relaxed "
        "(captureExchangeMode) to allow it",
        what, modeName(c->mode), c->modelId));
  }
  return Status::Ok();
}

Status captureRecordIssuer(Stream* stream, const char* kind,
                           std::function<Status(Stream*)> issue) {
  return apiCall([&](DeviceManager& m) {
    if (!issue) return Status(ErrorCode::kInvalidArgument, "captureRecordIssuer: no task");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    int lane = 0;
    std::shared_ptr<CaptureState> c = s->capture(&lane);
    if (c == nullptr) {
      return makeError(ErrorCode::kInvalidUsage, "captureRecordIssuer: {} does not capture",
                       s->name());
    }
    c->record(lane, ModelTask::issuer(kind, std::move(issue)));
    return Status::Ok();
  });
}

Status modelLaunch(Model* model, Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(needModel(model, "modelLaunch"));
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    if (s->capture() != nullptr && model->complete()) {
      return makeError(ErrorCode::kCaptured,
                       "modelLaunch: {} captures; a model cannot be recorded into another",
                       s->name());
    }
    return model->launch(s);
  });
}

Status modelDestroy(Model* model) {
  return apiCall([&](DeviceManager&) {
    COHORT_RETURN_IF_ERROR(needModel(model, "modelDestroy"));
    if (model->capturing() != nullptr) {
      return makeError(ErrorCode::kInvalidUsage,
                       "modelDestroy: model {} is still being captured (end the capture first)",
                       model->id());
    }
    {
      std::lock_guard<std::mutex> lock(gMu);
      liveModels().erase(model);
    }
    delete model;  // its launches were copied into the streams' queues
    return Status::Ok();
  });
}

Status modelDescribe(Model* model, ModelDescription* out) {
  return apiCall([&](DeviceManager&) {
    if (out == nullptr) return Status(ErrorCode::kInvalidArgument, "modelDescribe: null output");
    COHORT_RETURN_IF_ERROR(needModel(model, "modelDescribe"));
    out->id = model->id();
    out->lanes = model->lanes();
    out->tasks.clear();
    for (const ModelTask& t : model->tasks()) out->tasks.push_back(ModelTaskInfo{t.kind, t.lane});
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
