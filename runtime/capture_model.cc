// Models (runtime/capture.h): what a capture or a build becomes, compiled into a plan
// per lane, and the public calls on a model other than its launch.
#include "runtime/capture.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "runtime/api.h"
#include "runtime/event.h"
#include "runtime/stream.h"

namespace cohort::runtime {

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
                          std::vector<std::shared_ptr<CondHandle>> assigns,
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
      case ModelTask::Op::kActivate:
        lane.push_back({Op::kActivate, index, 0});
        break;
      case ModelTask::Op::kAwait:
        lane.push_back({Op::kAwait, index, 0});
        break;
      case ModelTask::Op::kWorkEnd:
        lane.push_back({Op::kWorkEnd, index, 0});
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
  plan->assigns = std::move(assigns);
  *out = std::move(plan);
  return Status::Ok();
}

Status Model::finish(int lanes, std::vector<ModelTask> tasks) {
  std::vector<std::shared_ptr<CondHandle>> assigns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::shared_ptr<CondHandle>& h : conds_) {
      if (h->assigns()) assigns.push_back(h);
    }
  }
  std::shared_ptr<const ModelPlan> plan;
  COHORT_RETURN_IF_ERROR(ModelPlan::compile(lanes, std::move(tasks), std::move(assigns), &plan));
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

void Model::adoptBranch(std::shared_ptr<Model> branch) {
  {
    std::lock_guard<std::mutex> lock(branch->mu_);
    branch->branch_ = true;
  }
  std::lock_guard<std::mutex> lock(mu_);
  branches_.push_back(std::move(branch));
}

std::vector<Model*> Model::branches() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Model*> out;
  for (const std::shared_ptr<Model>& b : branches_) out.push_back(b.get());
  return out;
}

bool Model::isBranch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return branch_;
}

void Model::addCond(std::shared_ptr<CondHandle> handle) {
  std::lock_guard<std::mutex> lock(mu_);
  conds_.push_back(std::move(handle));
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
    if (model->isBranch()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "modelDestroy: model {} is a branch of a conditional task; it is freed "
                       "with the model that holds the task",
                       model->id());
    }
    if (std::shared_ptr<CaptureState> c = model->capturing(); c != nullptr) {
      if (!c->building) {
        return makeError(ErrorCode::kInvalidUsage,
                         "modelDestroy: model {} is still being captured (end the capture first)",
                         model->id());
      }
      endCapture(c);  // a build given up: its streams are unbound and run their work again
    }
    forgetModel(model);
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
