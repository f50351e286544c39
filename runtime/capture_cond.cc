// Conditional tasks of a capture (cohort/runtime_capture.h): condition values in
// device memory, the task that records a choice among branch models, and the captures
// that fill those branches. Their launch is runCond (capture_launch.cc).
#include <map>

#include "common/error.h"
#include "runtime/api.h"
#include "runtime/capture.h"
#include "runtime/node_registry.h"
#include "runtime/stream.h"

namespace cohort::runtime {

namespace {

// The condition handles that exist, by handle; each is owned by its model and the
// plans and tasks that use it, and only found here. Guarded by gCondsMu.
std::mutex gCondsMu;
std::map<const CondHandle*, std::weak_ptr<CondHandle>>& liveConds() {
  static auto* conds = new std::map<const CondHandle*, std::weak_ptr<CondHandle>>();  // until exit
  return *conds;
}

Status needCond(CondHandle* handle, const char* fn, std::shared_ptr<CondHandle>* hold) {
  std::lock_guard<std::mutex> lock(gCondsMu);
  auto it = handle == nullptr ? liveConds().end() : liveConds().find(handle);
  if (it != liveConds().end()) *hold = it->second.lock();
  if (*hold == nullptr) {
    return makeError(ErrorCode::kInvalidHandle,
                     "{}: {} is not a live condition handle (its model was destroyed?)", fn,
                     static_cast<void*>(handle));
  }
  return Status::Ok();
}

// The capture filling `model` now (not a build), or an error naming `fn`.
Status capturedNow(Model* model, const char* fn, std::shared_ptr<CaptureState>* out) {
  std::shared_ptr<CaptureState> c = model->capturing();
  if (c == nullptr || c->building) {
    return makeError(ErrorCode::kInvalidUsage, "{}: model {} is not being captured", fn,
                     model->id());
  }
  *out = std::move(c);
  return Status::Ok();
}

const char* typeName(CondType type) {
  switch (type) {
    case CondType::kIf:
      return "if";
    case CondType::kWhile:
      return "while";
    case CondType::kSwitch:
      return "switch";
  }
  return "unknown";
}

}  // namespace

CondHandle::CondHandle(std::uint32_t modelId, int device, std::uint64_t resets,
                       std::uint64_t* value, std::uint64_t initial, bool assign)
    : modelId_(modelId),
      device_(device),
      resets_(resets),
      value_(value),
      initial_(initial),
      assign_(assign) {}

// The last holder may be a launch's lane task on a stream's worker: the value goes
// back to the pool directly, with no wait for the device's queues.
CondHandle::~CondHandle() {
  {
    std::lock_guard<std::mutex> lock(gCondsMu);
    liveConds().erase(this);
  }
  Device* d = nullptr;
  if (!DeviceManager::get().device(device_, &d).ok() ||
      d->resetCount.load(std::memory_order_acquire) != resets_ || d->pool() == nullptr) {
    return;  // gone with a teardown of the device
  }
  if (d->pool()->free(value_).ok()) registryNoteMemory(d->id(), d->pool()->used());
}

Status condCreate(Model* model, std::uint64_t initial, bool assignEachLaunch, CondHandle** handle) {
  return apiCall([&](DeviceManager& m) {
    if (handle == nullptr) return Status(ErrorCode::kInvalidArgument, "condCreate: null output");
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(needModel(model, "condCreate", &hold));
    std::shared_ptr<CaptureState> c;
    COHORT_RETURN_IF_ERROR(capturedNow(model, "condCreate", &c));
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(currentDevice(m, &d));
    if (d->pool() == nullptr) {
      return makeError(ErrorCode::kInvalidDevice, "condCreate: device {} is not set", d->id());
    }
    void* value = nullptr;
    COHORT_RETURN_IF_ERROR(d->pool()->allocate(sizeof(std::uint64_t), &value));
    registryNoteMemory(d->id(), d->pool()->used());
    auto* word = static_cast<std::uint64_t*>(value);
    *word = initial;
    auto made = std::make_shared<CondHandle>(model->id(), d->id(),
                                             d->resetCount.load(std::memory_order_acquire), word,
                                             initial, assignEachLaunch);
    {
      std::lock_guard<std::mutex> lock(gCondsMu);
      liveConds()[made.get()] = made;
    }
    *handle = made.get();
    model->addCond(std::move(made));
    return Status::Ok();
  });
}

Status condValue(CondHandle* handle, std::uint64_t** value) {
  return apiCall([&](DeviceManager&) {
    if (value == nullptr) return Status(ErrorCode::kInvalidArgument, "condValue: null output");
    std::shared_ptr<CondHandle> held;
    COHORT_RETURN_IF_ERROR(needCond(handle, "condValue", &held));
    *value = held->value();
    return Status::Ok();
  });
}

Status captureCondTask(Stream* stream, CondHandle* handle, CondType type, std::size_t branches,
                       Model** models) {
  return apiCall([&](DeviceManager& m) {
    const bool counted = type == CondType::kIf       ? branches == 1 || branches == 2
                         : type == CondType::kWhile  ? branches == 1
                         : type == CondType::kSwitch ? branches >= 1
                                                     : false;
    if (!counted) {
      return makeError(ErrorCode::kInvalidArgument,
                       "captureCondTask: a {} task takes {} branch model(s), not {}",
                       typeName(type),
                       type == CondType::kIf      ? "1 or 2"
                       : type == CondType::kWhile ? "1"
                                                  : "1 or more",
                       branches);
    }
    if (models == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "captureCondTask: null branch array");
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<CondHandle> held;
    COHORT_RETURN_IF_ERROR(needCond(handle, "captureCondTask", &held));
    int lane = 0;
    std::shared_ptr<CaptureState> c = s->capture(&lane);
    if (c == nullptr || c->building || c->updating != nullptr) {
      return makeError(ErrorCode::kInvalidUsage, "captureCondTask: {} does not capture", s->name());
    }
    if (c->modelId != held->modelId()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "captureCondTask: the condition handle belongs to model {}, and {} "
                       "captures model {}",
                       held->modelId(), s->name(), c->modelId);
    }
    auto task = std::make_shared<CondTask>();
    task->handle = std::move(held);
    task->type = type;
    for (std::size_t i = 0; i < branches; ++i) {
      std::shared_ptr<Model> branch = newModel();
      c->model->adoptBranch(branch);
      task->branches.push_back(std::move(branch));
    }
    for (std::size_t i = 0; i < branches; ++i) models[i] = task->branches[i].get();
    ModelTask t;
    t.op = ModelTask::Op::kCond;
    t.cond = std::move(task);
    t.kind = "conditional task";
    c->record(lane, std::move(t));
    return Status::Ok();
  });
}

Status captureBeginInto(Stream* stream, Model* model, CaptureMode mode) {
  return apiCall([&](DeviceManager& m) {
    if (mode != CaptureMode::kGlobal && mode != CaptureMode::kThreadLocal &&
        mode != CaptureMode::kRelaxed) {
      return makeError(ErrorCode::kInvalidArgument,
                       "captureBeginInto: mode {} is not a capture mode", static_cast<int>(mode));
    }
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<Model> hold;
    COHORT_RETURN_IF_ERROR(needModel(model, "captureBeginInto", &hold));
    if (s->capture() != nullptr) {
      return makeError(ErrorCode::kCaptured, "captureBeginInto: {} captures already", s->name());
    }
    if (!model->isBranch() || model->complete() || model->capturing() != nullptr) {
      return makeError(ErrorCode::kInvalidUsage,
                       "captureBeginInto: model {} is not a branch model waiting to be captured "
                       "(captureCondTask makes those; each is captured once)",
                       model->id());
    }
    auto c = newStreamCapture(s, mode);
    c->modelId = model->id();
    c->model = model;
    c->keep = std::move(hold);
    model->setCapturing(c);
    activateCapture(c);
    s->setCapture(c, 0);
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
