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

}  // namespace cohort::runtime
