// Stream capture (cohort/runtime_capture.h), and the registry of captures and models.
// A capture is a CaptureState that its member streams point at: Stream::enqueue
// records into it, the event calls (stream_api.cc) record into it and join streams to
// it. Ending it moves the record into the Model made when it began (capture_model.cc;
// its launch: capture_launch.cc; models built from bound streams: capture_build.cc).
#include "runtime/capture.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/error.h"
#include "common/wait.h"
#include "runtime/api.h"
#include "runtime/event.h"
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
// A model is owned here until modelDestroy, and by each call using it meanwhile: a
// destroy while another thread launches it frees it when that launch returns.
std::map<Model*, std::shared_ptr<Model>>& liveModels() {
  static auto* models = new std::map<Model*, std::shared_ptr<Model>>();  // used until exit
  return *models;
}
std::atomic<int> gActive{0};
std::atomic<std::uint32_t> gNextModelId{0};
thread_local CaptureMode tMode = CaptureMode::kGlobal;

// Why a capture that recorded `tasks` cannot end: a branch of a conditional task it
// recorded is not complete (branches are captured, and ended, before their parent).
std::string unfinishedBranch(const std::vector<ModelTask>& tasks) {
  for (const ModelTask& t : tasks) {
    if (t.op != ModelTask::Op::kCond) continue;
    for (std::size_t i = 0; i < t.cond->branches.size(); ++i) {
      const Model& b = *t.cond->branches[i];
      if (b.complete()) continue;
      return fmt::format("branch {} (model {}) of a conditional task {}", i, b.id(),
                         b.capturing() != nullptr
                             ? "is still being captured (end its capture first)"
                             : "was never captured (captureBeginInto ... captureEnd)");
    }
  }
  return {};
}

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

}  // namespace

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

void abandonCapture(const std::shared_ptr<CaptureState>& c) {
  endCapture(c);
  if (c->model != nullptr) c->model->setCapturing(nullptr);
}

Status needModel(Model* model, const char* fn, std::shared_ptr<Model>* hold) {
  std::lock_guard<std::mutex> lock(gMu);
  auto it = model == nullptr ? liveModels().end() : liveModels().find(model);
  if (it == liveModels().end()) {
    return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live model", fn,
                     static_cast<void*>(model));
  }
  if (hold != nullptr) *hold = it->second;
  return Status::Ok();
}

std::shared_ptr<Model> newModel() {
  auto owned =
      std::make_shared<Model>(gNextModelId.fetch_add(1, std::memory_order_relaxed) + 1);
  std::lock_guard<std::mutex> lock(gMu);
  liveModels().emplace(owned.get(), owned);
  return owned;
}

std::shared_ptr<CaptureState> newStreamCapture(Stream* stream, CaptureMode mode) {
  auto c = std::make_shared<CaptureState>();
  c->mode = mode;
  c->thread = std::this_thread::get_id();
  c->lanes = {stream};
  c->laneTasks = {0};
  c->joined = {true};
  return c;
}

void activateCapture(const std::shared_ptr<CaptureState>& c) {
  std::lock_guard<std::mutex> lock(gMu);
  activeCaptures().insert(c);
  gActive.fetch_add(1, std::memory_order_release);
}

Model* startModel(const std::shared_ptr<CaptureState>& c) {
  std::shared_ptr<Model> owned = newModel();
  c->modelId = owned->id();
  owned->setCapturing(c);
  c->model = owned.get();
  activateCapture(c);
  return c->model;
}

void forgetModel(Model* model) {
  const std::vector<Model*> branches = model->branches();
  {
    std::lock_guard<std::mutex> lock(gMu);
    liveModels().erase(model);
  }
  for (Model* b : branches) forgetModel(b);  // the model still holds them
}

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
    auto c = newStreamCapture(s, mode);
    (void)startModel(c);
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
    if (c->building) {
      return makeError(ErrorCode::kInvalidUsage,
                       "captureEnd: {} is bound to model {}, which is built, not captured (end it "
                       "with modelEndTask and modelBuildEnd)",
                       s->name(), c->modelId);
    }
    if (c->updating != nullptr) {
      return makeError(ErrorCode::kInvalidUsage,
                       "captureEnd: {} records a task group's update, not a capture (end it with "
                       "groupUpdateEnd)",
                       s->name());
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
    if (problem.empty()) problem = unfinishedBranch(tasks);
    if (problem.empty() && unjoined == 0) {
      const Status finished = made->finish(lanes, std::move(tasks));
      if (finished.ok()) {
        *model = made;
        return Status::Ok();
      }
      problem = finished.message();
    }
    forgetModel(made);  // frees it
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
    if (c == nullptr || c->updating != nullptr) return Status::Ok();  // an update: none
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
    *model = c != nullptr && c->updating == nullptr ? c->model : nullptr;
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

Status captureRecordIssuer(Stream* stream, const char* kind, LaunchIssuer issue) {
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
    ModelTask t;
    t.op = ModelTask::Op::kIssue;
    t.issue = std::move(issue);
    t.kind = kind;
    c->record(lane, std::move(t));
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
