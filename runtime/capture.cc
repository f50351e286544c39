// Stream capture and models (cohort/runtime_capture.h). A capture is a CaptureState that
// its member streams point at: Stream::enqueue records into it, the event calls
// (stream_api.cc) record issuers of their own and join streams to it. Ending it moves
// the record into the Model made when it began.
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

Status needModel(Model* model, const char* fn, std::shared_ptr<Model>* hold = nullptr) {
  std::lock_guard<std::mutex> lock(gMu);
  auto it = model == nullptr ? liveModels().end() : liveModels().find(model);
  if (it == liveModels().end()) {
    return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live model", fn,
                     static_cast<void*>(model));
  }
  if (hold != nullptr) *hold = it->second;
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

Status ModelPlan::compile(int lanes, std::vector<ModelTask> tasks,
                          std::shared_ptr<const ModelPlan>* out) {
  auto plan = std::make_shared<ModelPlan>();
  plan->lanes.resize(static_cast<std::size_t>(lanes));
  using Op = ModelPlan::Step::Op;
  std::vector<std::map<const void*, std::uint32_t>> labelsAt(plan->lanes.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const ModelTask& t = tasks[i];
    const auto index = static_cast<std::uint32_t>(i);
    const auto laneIndex = static_cast<std::size_t>(t.lane);
    auto& lane = plan->lanes[laneIndex];
    switch (t.op) {
      case ModelTask::Op::kRecord:
      case ModelTask::Op::kWait:
        lane.push_back({t.op == ModelTask::Op::kRecord ? Op::kRecord : Op::kWait, index,
                        plan->eventSlots});
        plan->active.push_back(index);
        plan->activeSlot.push_back(plan->eventSlots++);
        break;
      case ModelTask::Op::kIssue:
        // What it adds may go to any lane (an event recorded on another), there at
        // this task's place.
        for (auto& l : plan->lanes) l.push_back({Op::kIssued, index, plan->issuers});
        plan->active.push_back(index);
        plan->activeSlot.push_back(plan->issuers++);
        break;
      case ModelTask::Op::kLabel:
        if (!labelsAt[laneIndex].emplace(t.label, static_cast<std::uint32_t>(lane.size())).second) {
          return makeError(ErrorCode::kInvalidUsage,
                           "label {} was set twice on the same stream of the model", t.label);
        }
        lane.push_back({Op::kLabel, index, 0});
        break;
      case ModelTask::Op::kSwitch:
        lane.push_back({Op::kSwitch, index, static_cast<std::uint32_t>(plan->jumps.size())});
        plan->jumps.emplace_back();
        break;
      default:
        lane.push_back({Op::kTask, index, 0});
    }
  }
  // A switch's labels are resolved once every label is set (they may come after it).
  for (std::size_t l = 0; l < plan->lanes.size(); ++l) {
    for (const ModelPlan::Step& step : plan->lanes[l]) {
      if (step.op != Op::kSwitch) continue;
      for (const void* label : tasks[step.task].jump->labels) {
        auto it = labelsAt[l].find(label);
        if (it == labelsAt[l].end()) {
          return makeError(ErrorCode::kInvalidUsage,
                           "a label switch jumps to label {}, which was not set on the switch's "
                           "stream (Cohort jumps within a stream only)",
                           label);
        }
        plan->jumps[step.slot].push_back(it->second);
      }
    }
  }
  plan->tasks = std::move(tasks);
  *out = std::move(plan);
  return Status::Ok();
}

Status Model::finish(int lanes, std::vector<ModelTask> tasks) {
  std::shared_ptr<const ModelPlan> plan;
  COHORT_RETURN_IF_ERROR(ModelPlan::compile(lanes, std::move(tasks), &plan));
  std::lock_guard<std::mutex> lock(mu_);
  capturing_.reset();
  complete_ = true;
  lanes_ = lanes;
  plan_ = std::move(plan);
  return Status::Ok();
}

std::string Model::name() const {
  std::lock_guard<std::mutex> lock(mu_);
  return name_;
}

void Model::setName(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  name_ = std::move(name);
}

void Model::bind(Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  bound_.push_back(stream);
}

bool Model::unbind(Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(bound_.begin(), bound_.end(), stream);
  if (it == bound_.end()) return false;
  bound_.erase(it);
  return true;
}

bool Model::complete() const {
  std::lock_guard<std::mutex> lock(mu_);
  return complete_;
}

int Model::lanes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lanes_;
}

std::shared_ptr<const std::vector<ModelTask>> Model::tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (plan_ == nullptr) return std::make_shared<const std::vector<ModelTask>>();
  return std::shared_ptr<const std::vector<ModelTask>>(plan_, &plan_->tasks);
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
    if (s != nullptr) continue;
    COHORT_RETURN_IF_ERROR(m.createStream(device, &s));
    // A lane's task ends each launch in its own failure, if any, which its event
    // records carry on: the model's own stream must not keep it, or every launch
    // queued behind would fail with it.
    s->setContinueAfterError(true);
  }
  out->assign(1, stream);
  out->insert(out->end(), lanes.streams.begin(), lanes.streams.end());
  return Status::Ok();
}

namespace {

// Work an issuer added to a launch: a kernel, or an event record or wait with the
// generation the launch gave it.
struct LaunchStep {
  enum class Op { kKernel, kRecord, kWait };
  Op op = Op::kKernel;
  Kernel kernel;
  std::shared_ptr<EventState> event;
  std::uint64_t generation = 0;
};

// One launch: the plan, and what this launch gave it. Shared by the launch's lane
// tasks (so it outlives the model if need be).
struct LaunchProgram {
  std::shared_ptr<const ModelPlan> plan;
  std::vector<std::uint64_t> generations;  // by event slot; 0: not recorded (skip)
  struct Added {
    std::size_t lane = 0;
    LaunchStep step;
  };
  std::vector<Added> added;             // by issuer, in task order
  std::vector<std::size_t> addedFrom;   // issuer slot -> its first entry; one more at the end
  std::size_t stopAt = ~std::size_t{0};  // the task an issuer's error ended the launch at
};

// One step of a lane's task. After a failure (the stream's before, or a step's) only
// event records (they carry the error to their waiters) and tasks that run after
// errors still run.
void runStep(const LaunchStep& step, Stream* s, Status* failure) {
  switch (step.op) {
    case LaunchStep::Op::kRecord:
      step.event->complete(step.generation, *failure, s->name());
      break;
    case LaunchStep::Op::kWait:
      if (failure->ok()) *failure = s->waitInTask(step.event, step.generation);
      break;
    case LaunchStep::Op::kKernel:
      if (failure->ok()) {
        ComputeScope computing;  // as launchKernel's tasks do
        *failure = step.kernel(s);
      }
      break;
  }
}

// The stream task of one lane: its steps in order, as the stream would have run them
// one task each. It runs after errors (its event records must complete): on a stream
// that failed before it, or that an abort dropped it from, nothing else of it runs.
Status runLane(const LaunchProgram& p, std::size_t lane, Stream* s) {
  const ModelPlan& plan = *p.plan;
  const bool failedBefore = s->runningOnlyAfterError();
  Status failure = !failedBefore ? Status::Ok()
                   : s->failed() ? s->error()
                                 : Status(ErrorCode::kAborted, s->name() + " was aborted");
  using Op = ModelPlan::Step::Op;
  const std::vector<ModelPlan::Step>& steps = plan.lanes[lane];
  for (std::size_t pc = 0; pc < steps.size(); ++pc) {
    const ModelPlan::Step& step = steps[pc];
    if (step.task > p.stopAt) break;  // the launch ended there
    const ModelTask& t = plan.tasks[step.task];
    switch (step.op) {
      case Op::kLabel:
        break;
      case Op::kSwitch: {
        if (!failure.ok()) break;
        const ModelTask::Switch& jump = *t.jump;
        const std::vector<std::uint32_t>& targets = plan.jumps[step.slot];
        const std::size_t count = std::min<std::size_t>(jump.maxValue, targets.size());
        // Read when the switch runs (device memory the model's work may have written);
        // an index past the list jumps to its last label, as CANN documents.
        const std::uint32_t index = __atomic_load_n(jump.index, __ATOMIC_ACQUIRE);
        pc = targets[std::min<std::size_t>(index, count - 1)];  // the label; then past it
        break;
      }
      case Op::kRecord: {
        const std::uint64_t generation = p.generations[step.slot];
        if (generation != 0) t.event->complete(generation, failure, s->name());
        break;
      }
      case Op::kWait: {
        const std::uint64_t generation = p.generations[step.slot];
        if (generation != 0 && failure.ok()) failure = s->waitInTask(t.event, generation);
        break;
      }
      case Op::kIssued:
        for (std::size_t k = p.addedFrom[step.slot]; k < p.addedFrom[step.slot + 1]; ++k) {
          if (p.added[k].lane == lane) runStep(p.added[k].step, s, &failure);
        }
        break;
      case Op::kTask: {
        if (!failure.ok() && !t.runAfterError) break;
        Status r;
        if (t.op == ModelTask::Op::kKernel) {
          ComputeScope computing;
          r = t.kernel(s);
        } else {
          r = t.fn();
        }
        if (failure.ok()) failure = std::move(r);
        break;
      }
    }
  }
  return failedBefore ? Status::Ok() : failure;
}

// The launch as an issuer sees it (LaunchContext): adds to the issuer's place.
class LaunchBuilder final : public LaunchContext {
 public:
  LaunchBuilder(LaunchProgram& program, const std::vector<Stream*>& streams)
      : program_(program), streams_(streams) {}
  void at(int lane) { lane_ = static_cast<std::size_t>(lane); }

  Stream* stream() const override { return streams_[lane_]; }
  int device() const override { return streams_[lane_]->device()->id(); }
  int streamId() const override { return streams_[lane_]->id(); }
  void run(Kernel kernel) override {
    LaunchStep step;
    step.op = LaunchStep::Op::kKernel;
    step.kernel = std::move(kernel);
    program_.added.push_back({lane_, std::move(step)});
  }
  Status recordEvent(Event* event, Stream* on) override {
    std::shared_ptr<EventState> state;
    COHORT_RETURN_IF_ERROR(plainEvent(event, "recordEvent", &state));
    for (std::size_t l = 0; l < streams_.size(); ++l) {
      if (streams_[l] != on) continue;
      LaunchStep step;
      step.op = LaunchStep::Op::kRecord;
      step.event = std::move(state);
      step.generation = step.event->recorded.fetch_add(1) + 1;
      program_.added.push_back({l, std::move(step)});
      return Status::Ok();
    }
    return eventRecord(event, on);  // outside the model: its work so far is queued
  }
  Status waitEvent(Event* event) override {
    std::shared_ptr<EventState> state;
    COHORT_RETURN_IF_ERROR(plainEvent(event, "waitEvent", &state));
    LaunchStep step;
    step.op = LaunchStep::Op::kWait;
    step.generation = state->recorded.load();
    if (step.generation == 0) return Status::Ok();  // never recorded: nothing to wait for
    step.event = std::move(state);
    program_.added.push_back({lane_, std::move(step)});
    return Status::Ok();
  }

 private:
  static Status plainEvent(Event* event, const char* fn, std::shared_ptr<EventState>* out) {
    if (event == nullptr || !DeviceManager::get().isLiveEvent(event)) {
      return makeError(ErrorCode::kInvalidHandle, "model launch: {}: {} is not a live event", fn,
                       static_cast<void*>(event));
    }
    if (event->state()->ipc != nullptr) {
      return makeError(ErrorCode::kNotSupported,
                       "model launch: {}: an IPC event cannot be part of a model", fn);
    }
    *out = event->state();
    return Status::Ok();
  }

  LaunchProgram& program_;
  const std::vector<Stream*>& streams_;
  std::size_t lane_ = 0;
};

}  // namespace

// The host's part of a launch is small: an event generation per record and wait, and
// the issuers' calls; the plan's tasks run from the lanes' stream tasks.
Status Model::launch(Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!complete_) {
    return makeError(ErrorCode::kInvalidUsage, "model {} {}", id_,
                     capturing_ == nullptr ? "was never completed (its capture or build broke "
                                             "or was given up)"
                     : capturing_->building ? "is still being built (modelBuildEnd)"
                                            : "is still being captured");
  }
  std::vector<Stream*> lanes;
  COHORT_RETURN_IF_ERROR(laneStreamsLocked(stream, &lanes));
  const ModelPlan& plan = *plan_;
  auto program = std::make_shared<LaunchProgram>();
  program->plan = plan_;
  program->generations.assign(plan.eventSlots, 0);
  constexpr std::size_t kUnset = ~std::size_t{0};
  program->addedFrom.assign(plan.issuers + 1, kUnset);
  program->added.reserve(plan.issuers);
  LaunchBuilder builder(*program, lanes);
  Status status;
  for (std::size_t k = 0; k < plan.active.size() && status.ok(); ++k) {
    const ModelTask& t = plan.tasks[plan.active[k]];
    const std::uint32_t slot = plan.activeSlot[k];
    switch (t.op) {
      case ModelTask::Op::kRecord:
        program->generations[slot] = t.event->recorded.fetch_add(1) + 1;
        break;
      case ModelTask::Op::kWait:
        program->generations[slot] = t.event->recorded.load();
        break;
      default:  // kIssue
        program->addedFrom[slot] = program->added.size();
        builder.at(t.lane);
        status = t.issue(builder);
        if (!status.ok()) program->stopAt = plan.active[k];
    }
  }
  program->addedFrom[plan.issuers] = program->added.size();
  for (std::size_t k = plan.issuers; k-- > 0;) {  // issuers an error kept from adding
    if (program->addedFrom[k] == kUnset) program->addedFrom[k] = program->addedFrom[k + 1];
  }
  // Queued even after an issuer's error: what the launch gave so far must run (a
  // collective it numbered, an event record others may wait for).
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    if (plan.lanes[l].empty()) continue;
    auto task = [program, l, s = lanes[l]] { return runLane(*program, l, s); };
    // A joined lane begins with its wait for the lane that forked it: its worker,
    // idle on a stream of the model's own, need not wake before that.
    const ModelPlan::Step& first = plan.lanes[l].front();
    const std::uint64_t generation =
        first.op == ModelPlan::Step::Op::kWait ? program->generations[first.slot] : 0;
    if (l > 0 && generation != 0) {
      lanes[l]->enqueueAfter(std::move(task), "model", plan.tasks[first.task].event, generation);
    } else {
      lanes[l]->enqueue(std::move(task), /*runAfterError=*/true, "model");
    }
  }
  return status;
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
      Model* made = model.get();
      liveModels().emplace(made, std::shared_ptr<Model>(std::move(model)));
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
    if (c->building) {
      return makeError(ErrorCode::kInvalidUsage,
                       "captureEnd: {} is bound to model {}, which is built, not captured (end it "
                       "with modelEndTask and modelBuildEnd)",
                       s->name(), c->modelId);
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
      const Status finished = made->finish(lanes, std::move(tasks));
      if (finished.ok()) {
        *model = made;
        return Status::Ok();
      }
      problem = finished.message();
    }
    {
      std::lock_guard<std::mutex> lock(gMu);
      liveModels().erase(made);  // frees it
    }
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

namespace {

// The build `model` has under way, or an error naming `fn`.
Status buildOf(Model* model, const char* fn, std::shared_ptr<CaptureState>* out,
               std::shared_ptr<Model>* hold) {
  COHORT_RETURN_IF_ERROR(needModel(model, fn, hold));
  std::shared_ptr<CaptureState> c = model->capturing();
  if (c == nullptr || !c->building) {
    return makeError(ErrorCode::kInvalidUsage, "{}: model {} is not being built ({})", fn,
                     model->id(),
                     c != nullptr ? "it is being captured" : "modelBuildBegin, before modelBuildEnd");
  }
  *out = std::move(c);
  return Status::Ok();
}

// The lane of `s` in the build under way on it, or an error naming `fn`.
Status boundLane(Stream* s, const char* fn, std::shared_ptr<CaptureState>* build, int* lane) {
  std::shared_ptr<CaptureState> c = s->capture(lane);
  if (c == nullptr || !c->building) {
    return makeError(ErrorCode::kInvalidUsage,
                     "{}: {} is not bound to a model being built (modelBindStream)", fn,
                     s->name());
  }
  *build = std::move(c);
  return Status::Ok();
}

}  // namespace

Status modelBuildBegin(Model** model) {
  return apiCall([&](DeviceManager&) {
    if (model == nullptr) return Status(ErrorCode::kInvalidArgument, "modelBuildBegin: null output");
    auto c = std::make_shared<CaptureState>();
    c->mode = CaptureMode::kRelaxed;  // bound streams refuse nothing to other work
    c->building = true;
    c->thread = std::this_thread::get_id();
    c->modelId = gNextModelId.fetch_add(1, std::memory_order_relaxed) + 1;
    auto made = std::make_unique<Model>(c->modelId);
    made->setCapturing(c);
    c->model = made.get();
    {
      std::lock_guard<std::mutex> lock(gMu);
      Model* handle = made.get();
      *model = handle;
      liveModels().emplace(handle, std::shared_ptr<Model>(std::move(made)));
      activeCaptures().insert(c);
      gActive.fetch_add(1, std::memory_order_release);
    }
    return Status::Ok();
  });
}

Status modelBindStream(Model* model, Stream* stream, bool head) {
  return apiCall([&](DeviceManager& m) {
    std::shared_ptr<CaptureState> c;
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(buildOf(model, "modelBindStream", &c, &hold));
    if (stream == nullptr) {
      return Status(ErrorCode::kInvalidArgument,
                    "modelBindStream: the stream is null (a default stream cannot be bound)");
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    if (s->isDefault()) {
      return makeError(ErrorCode::kInvalidArgument, "modelBindStream: {} is a default stream",
                       s->name());
    }
    if (std::shared_ptr<CaptureState> other = s->capture(); other != nullptr) {
      return makeError(ErrorCode::kInvalidUsage, "modelBindStream: {} {} model {} already",
                       s->name(), other->building ? "is bound to" : "captures into",
                       other->modelId);
    }
    int lane = 0;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      lane = static_cast<int>(c->lanes.size());
      c->lanes.push_back(s);
      c->laneTasks.push_back(0);
      c->joined.push_back(true);
      c->head.push_back(head);
      c->ended.push_back(false);
    }
    s->setCapture(c, lane);
    model->bind(s);
    return Status::Ok();
  });
}

Status modelEndTask(Model* model, Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    std::shared_ptr<CaptureState> c;
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(buildOf(model, "modelEndTask", &c, &hold));
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    int lane = 0;
    if (s->capture(&lane) != c) {
      return makeError(ErrorCode::kInvalidUsage, "modelEndTask: {} is not bound to model {}",
                       s->name(), model->id());
    }
    std::lock_guard<std::mutex> lock(c->mu);
    c->ended[static_cast<std::size_t>(lane)] = true;
    return Status::Ok();
  });
}

Status modelBuildEnd(Model* model) {
  return apiCall([&](DeviceManager&) {
    std::shared_ptr<CaptureState> c;
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(buildOf(model, "modelBuildEnd", &c, &hold));
    std::vector<ModelTask> tasks;
    int lanes = 0;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      if (!c->problem.empty()) {
        return makeError(ErrorCode::kInvalidUsage, "modelBuildEnd: the build of model {} broke: {}",
                         model->id(), c->problem);
      }
      const std::size_t n = c->lanes.size();
      std::vector<int> order;  // new lane -> old lane: the first head stream is lane 0
      for (std::size_t l = 0; l < n; ++l) {
        if (!c->ended[l]) {
          return makeError(ErrorCode::kInvalidUsage,
                           "modelBuildEnd: {} bound to model {} was not ended (modelEndTask)",
                           c->lanes[l] != nullptr ? c->lanes[l]->name() : "a stream",
                           model->id());
        }
        if (c->head[l]) {
          order.push_back(static_cast<int>(l));
        } else if (c->laneTasks[l] > 0) {
          return makeError(ErrorCode::kNotSupported,
                           "modelBuildEnd: {} of model {} is not a head stream and holds tasks: "
                           "Cohort does not activate streams (aclrtActiveStream) yet",
                           c->lanes[l] != nullptr ? c->lanes[l]->name() : "a stream",
                           model->id());
        }
      }
      if (order.empty()) {
        return makeError(ErrorCode::kInvalidUsage,
                         "modelBuildEnd: model {} has no head stream bound (modelBindStream)",
                         model->id());
      }
      std::vector<int> laneOf(n, -1);
      for (std::size_t k = 0; k < order.size(); ++k) {
        laneOf[static_cast<std::size_t>(order[k])] = static_cast<int>(k);
      }
      lanes = static_cast<int>(order.size());
      for (ModelTask& t : c->tasks) {
        const int to = laneOf[static_cast<std::size_t>(t.lane)];
        if (to < 0) continue;
        t.lane = to;
        tasks.push_back(std::move(t));
      }
      c->tasks.clear();
      // The launch ends when every head stream has: lane 0 (on the launching stream)
      // waits at its end for each other lane's end.
      for (int l = 1; l < lanes; ++l) {
        auto done = std::make_shared<EventState>();
        ModelTask record = ModelTask::ofEvent(ModelTask::Op::kRecord, done);
        record.lane = l;
        tasks.push_back(std::move(record));
        ModelTask wait = ModelTask::ofEvent(ModelTask::Op::kWait, done);
        wait.lane = 0;
        tasks.push_back(std::move(wait));
      }
    }
    endCapture(c);  // the bound streams run their work again
    Status finished = model->finish(lanes, std::move(tasks));
    if (!finished.ok()) {
      model->setCapturing(nullptr);  // incomplete for good: launches say so
      return makeError(finished.code(), "modelBuildEnd: model {}: {}", model->id(),
                       finished.message());
    }
    return Status::Ok();
  });
}

Status modelUnbindStream(Model* model, Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(needModel(model, "modelUnbindStream", &hold));
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    if (!model->unbind(s)) {
      return makeError(ErrorCode::kInvalidUsage, "modelUnbindStream: {} is not bound to model {}",
                       s->name(), model->id());
    }
    int lane = 0;
    std::shared_ptr<CaptureState> c = model->capturing();
    if (c != nullptr && s->capture(&lane) == c) {  // during the build: it records no more
      s->setCapture(nullptr, 0);
      std::lock_guard<std::mutex> lock(c->mu);
      c->lanes[static_cast<std::size_t>(lane)] = nullptr;
      c->ended[static_cast<std::size_t>(lane)] = true;
    }
    return Status::Ok();
  });
}

Status labelSet(const void* label, Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    if (label == nullptr) return Status(ErrorCode::kInvalidArgument, "labelSet: null label");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<CaptureState> c;
    int lane = 0;
    COHORT_RETURN_IF_ERROR(boundLane(s, "labelSet", &c, &lane));
    ModelTask t;
    t.op = ModelTask::Op::kLabel;
    t.label = label;
    t.kind = "label";
    c->record(lane, std::move(t));
    return Status::Ok();
  });
}

Status labelSwitchByIndex(const std::uint32_t* index, std::uint32_t maxValue,
                          std::vector<const void*> labels, Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    if (index == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "labelSwitchByIndex: the index pointer is null");
    }
    if (maxValue == 0 || labels.empty()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "labelSwitchByIndex: {} labels, maxValue {}: a switch needs a label",
                       labels.size(), maxValue);
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<CaptureState> c;
    int lane = 0;
    COHORT_RETURN_IF_ERROR(boundLane(s, "labelSwitchByIndex", &c, &lane));
    auto jump = std::make_shared<ModelTask::Switch>();
    jump->index = index;
    jump->maxValue = maxValue;
    jump->labels = std::move(labels);
    ModelTask t;
    t.op = ModelTask::Op::kSwitch;
    t.jump = std::move(jump);
    t.kind = "label switch";
    c->record(lane, std::move(t));
    return Status::Ok();
  });
}

Status modelLaunch(Model* model, Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    std::shared_ptr<Model> hold;  // a destroy meanwhile frees it after this launch
    COHORT_RETURN_IF_ERROR(needModel(model, "modelLaunch", &hold));
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
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(needModel(model, "modelDestroy", &hold));
    if (std::shared_ptr<CaptureState> c = model->capturing(); c != nullptr) {
      if (!c->building) {
        return makeError(ErrorCode::kInvalidUsage,
                         "modelDestroy: model {} is still being captured (end the capture first)",
                         model->id());
      }
      endCapture(c);  // a build given up: its streams are unbound and run their work again
    }
    {
      std::lock_guard<std::mutex> lock(gMu);
      liveModels().erase(model);
    }
    // Freed with the last hold (this one, or a launch's running meanwhile); launches
    // queued already share what they run.
    return Status::Ok();
  });
}

Status modelDescribe(Model* model, ModelDescription* out) {
  return apiCall([&](DeviceManager&) {
    if (out == nullptr) return Status(ErrorCode::kInvalidArgument, "modelDescribe: null output");
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(needModel(model, "modelDescribe", &hold));
    out->id = model->id();
    out->name = model->name();
    out->lanes = model->lanes();
    out->tasks.clear();
    for (const ModelTask& t : *model->tasks()) out->tasks.push_back(ModelTaskInfo{t.kind, t.lane});
    return Status::Ok();
  });
}

Status modelSetName(Model* model, std::string name) {
  return apiCall([&](DeviceManager&) {
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(needModel(model, "modelSetName", &hold));
    model->setName(std::move(name));
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
