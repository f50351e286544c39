// Models built from bound streams (modelBuildBegin ... modelBuildEnd) and the labels
// their streams jump to (cohort/runtime_capture.h).
#include "runtime/capture.h"

#include <vector>

#include "common/error.h"
#include "runtime/api.h"
#include "runtime/event.h"
#include "runtime/stream.h"

namespace cohort::runtime {

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
    *model = startModel(c);
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
      // New lane -> old lane: the head streams first (the first of them is lane 0, on
      // the launching stream), then the streams a task starts.
      std::vector<int> order;
      for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t l = 0; l < n; ++l) {
          if (c->head[l] == (pass == 0)) order.push_back(static_cast<int>(l));
        }
      }
      if (n == 0 || !c->head[static_cast<std::size_t>(order[0])]) {
        return makeError(ErrorCode::kInvalidUsage,
                         "modelBuildEnd: model {} has no head stream bound (modelBindStream)",
                         model->id());
      }
      bool anyEnded = false;
      for (std::size_t l = 0; l < n; ++l) anyEnded = anyEnded || c->ended[l];
      if (!anyEnded) {
        return makeError(ErrorCode::kInvalidUsage,
                         "modelBuildEnd: no stream of model {} was ended (modelEndTask)",
                         model->id());
      }
      std::vector<int> laneOf(n, -1);
      for (std::size_t k = 0; k < order.size(); ++k) {
        laneOf[static_cast<std::size_t>(order[k])] = static_cast<int>(k);
      }
      lanes = static_cast<int>(order.size());
      // A stream that is not a head one first waits to be started.
      for (int l = 0; l < lanes; ++l) {
        if (c->head[static_cast<std::size_t>(order[static_cast<std::size_t>(l)])]) continue;
        ModelTask await;
        await.op = ModelTask::Op::kAwait;
        await.kind = "stream start";
        await.lane = l;
        tasks.push_back(std::move(await));
      }
      for (ModelTask& t : c->tasks) {
        t.lane = laneOf[static_cast<std::size_t>(t.lane)];
        if (t.activation != nullptr) {
          ModelTask::Activation& a = *t.activation;
          if (a.onTrue >= 0) a.onTrue = laneOf[static_cast<std::size_t>(a.onTrue)];
          if (a.onFalse >= 0) a.onFalse = laneOf[static_cast<std::size_t>(a.onFalse)];
        }
        tasks.push_back(std::move(t));
      }
      c->tasks.clear();
      ModelTask workEnd;
      workEnd.op = ModelTask::Op::kWorkEnd;
      workEnd.kind = "end of work";
      tasks.push_back(std::move(workEnd));
      // The launch ends when every head stream and every ended one has: lane 0 (on the
      // launching stream) waits at its end for each of the others.
      for (int l = 1; l < lanes; ++l) {
        const auto old = static_cast<std::size_t>(order[static_cast<std::size_t>(l)]);
        if (!c->head[old] && !c->ended[old]) continue;
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

namespace {

// Records on `stream` the start of `onTrue`, or of the branch `a` picks (activation).
Status recordActivation(const char* fn, Stream* stream, Stream* onTrue, Stream* onFalse,
                        std::shared_ptr<ModelTask::Activation> a) {
  DeviceManager& m = DeviceManager::get();
  Stream* s = nullptr;
  COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
  std::shared_ptr<CaptureState> c;
  int lane = 0;
  COHORT_RETURN_IF_ERROR(boundLane(s, fn, &c, &lane));
  auto laneOf = [&](Stream* target, int* out) -> Status {
    Stream* t = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(target, &t));
    int targetLane = 0;
    if (t->capture(&targetLane) != c) {
      return makeError(ErrorCode::kInvalidUsage,
                       "{}: {} is not bound to the model {} is bound to (model {})", fn,
                       t->name(), s->name(), c->modelId);
    }
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->head[static_cast<std::size_t>(targetLane)]) {
      return makeError(ErrorCode::kInvalidUsage,
                       "{}: {} is a head stream of model {}: it runs from the launch on and "
                       "cannot be started",
                       fn, t->name(), c->modelId);
    }
    *out = targetLane;
    return Status::Ok();
  };
  COHORT_RETURN_IF_ERROR(laneOf(onTrue, &a->onTrue));
  if (onFalse != nullptr) COHORT_RETURN_IF_ERROR(laneOf(onFalse, &a->onFalse));
  ModelTask t;
  t.op = ModelTask::Op::kActivate;
  t.activation = std::move(a);
  t.kind = t.activation->left != nullptr ? "stream switch" : "stream start";
  c->record(lane, std::move(t));
  return Status::Ok();
}

}  // namespace

Status streamActivate(Stream* target, Stream* stream) {
  return apiCall([&](DeviceManager&) {
    if (target == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "streamActivate: the stream to start is null");
    }
    return recordActivation("streamActivate", stream, target, nullptr,
                            std::make_shared<ModelTask::Activation>());
  });
}

Status streamSwitch(const void* left, Compare cond, const void* right, bool wide, Stream* onTrue,
                    Stream* onFalse, Stream* stream) {
  return apiCall([&](DeviceManager&) {
    if (left == nullptr || right == nullptr) {
      return makeError(ErrorCode::kInvalidArgument, "streamSwitch: the {} value's address is null",
                       left == nullptr ? "left" : "right");
    }
    if (onTrue == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "streamSwitch: the stream to start is null");
    }
    auto a = std::make_shared<ModelTask::Activation>();
    a->left = left;
    a->right = right;
    a->cond = cond;
    a->wide = wide;
    return recordActivation("streamSwitch", stream, onTrue, onFalse, std::move(a));
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

}  // namespace cohort::runtime
