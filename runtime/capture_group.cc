// Task groups of a capture and their updates (cohort/runtime_capture.h): a group is
// one task of its lane that holds the tasks recorded between its begin and end; an
// update records what replaces them as a capture of its own that fills no model, and
// swaps them in as a task of the update's stream.
#include <map>
#include <string_view>

#include "common/error.h"
#include "runtime/api.h"
#include "runtime/capture.h"
#include "runtime/stream.h"

namespace cohort::runtime {

namespace {

// The groups that exist, by handle. A group lives as long as the tasks that hold it
// (its model's plan, the capture that makes it, an update under way): the registry
// only finds it. Guarded by gGroupsMu.
std::mutex gGroupsMu;
std::map<const TaskGroup*, std::weak_ptr<TaskGroup>>& liveGroups() {
  static auto* groups = new std::map<const TaskGroup*, std::weak_ptr<TaskGroup>>();  // until exit
  return *groups;
}

// The group behind a live handle, held, or kInvalidHandle naming `fn`.
Status needGroup(TaskGroup* group, const char* fn, std::shared_ptr<TaskGroup>* hold) {
  std::lock_guard<std::mutex> lock(gGroupsMu);
  auto it = group == nullptr ? liveGroups().end() : liveGroups().find(group);
  if (it != liveGroups().end()) *hold = it->second.lock();
  if (*hold == nullptr) {
    return makeError(ErrorCode::kInvalidHandle,
                     "{}: {} is not a live task group (its model was destroyed?)", fn,
                     static_cast<void*>(group));
  }
  return Status::Ok();
}

// What an update must match: the task's op and kind ("kernel", "copy", "set", ...).
bool sameKind(const ModelTask& a, const ModelTask& b) {
  return a.op == b.op && std::string_view(a.kind) == b.kind;
}

std::string kindsOf(const std::vector<ModelTask>& tasks) {
  std::string out;
  for (const ModelTask& t : tasks) out += (out.empty() ? "" : ", ") + std::string(t.kind);
  return out.empty() ? "none" : out;
}

}  // namespace

TaskGroup::TaskGroup(std::uint32_t modelId, std::vector<ModelTask> tasks)
    : modelId_(modelId), tasks_(std::make_shared<const std::vector<ModelTask>>(std::move(tasks))) {}

TaskGroup::~TaskGroup() {
  std::lock_guard<std::mutex> lock(gGroupsMu);
  liveGroups().erase(this);
}

std::shared_ptr<const std::vector<ModelTask>> TaskGroup::tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_;
}

void TaskGroup::replace(std::vector<ModelTask> tasks) {
  auto next = std::make_shared<const std::vector<ModelTask>>(std::move(tasks));
  std::lock_guard<std::mutex> lock(mu_);
  tasks_.swap(next);
}

Status captureGroupBegin(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    int lane = 0;
    std::shared_ptr<CaptureState> c = s->capture(&lane);
    if (c == nullptr || c->updating != nullptr) {
      return makeError(ErrorCode::kInvalidUsage, "captureGroupBegin: {} does not capture",
                       s->name());
    }
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->groupLane >= 0) {
      return makeError(ErrorCode::kInvalidUsage,
                       "captureGroupBegin: a task group is open already in model {}'s capture "
                       "(on {}); end it first",
                       c->modelId, c->lanes[static_cast<std::size_t>(c->groupLane)]->name());
    }
    c->groupLane = lane;
    c->groupFrom = c->tasks.size();
    return Status::Ok();
  });
}

Status captureGroupEnd(Stream* stream, TaskGroup** group) {
  return apiCall([&](DeviceManager& m) {
    if (group == nullptr)
      return Status(ErrorCode::kInvalidArgument, "captureGroupEnd: null output");
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    int lane = 0;
    std::shared_ptr<CaptureState> c = s->capture(&lane);
    if (c == nullptr || c->updating != nullptr) {
      return makeError(ErrorCode::kInvalidUsage, "captureGroupEnd: {} does not capture", s->name());
    }
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->groupLane != lane) {
      return makeError(ErrorCode::kInvalidUsage,
                       "captureGroupEnd: no task group is open on {} (captureGroupBegin)",
                       s->name());
    }
    c->groupLane = -1;
    auto from = c->tasks.begin() + static_cast<std::ptrdiff_t>(c->groupFrom);
    for (auto it = from; it != c->tasks.end(); ++it) {
      if (it->lane != lane) {
        const std::string why = fmt::format(
            "{} recorded a {} while a task group was open on {}: a group's tasks are one "
            "stream's",
            c->lanes[static_cast<std::size_t>(it->lane)]->name(), it->kind, s->name());
        if (c->problem.empty()) c->problem = why;
        return makeError(ErrorCode::kInvalidUsage, "captureGroupEnd: {}", why);
      }
      if (it->op != ModelTask::Op::kKernel && it->op != ModelTask::Op::kRun) {
        const std::string why =
            fmt::format("a task group holds kernels, copies and sets; this one has a {}", it->kind);
        if (c->problem.empty()) c->problem = why;
        return makeError(ErrorCode::kNotSupported, "captureGroupEnd: {}", why);
      }
    }
    std::vector<ModelTask> tasks(std::make_move_iterator(from),
                                 std::make_move_iterator(c->tasks.end()));
    c->tasks.erase(from, c->tasks.end());
    auto made = std::make_shared<TaskGroup>(c->modelId, std::move(tasks));
    {
      std::lock_guard<std::mutex> registry(gGroupsMu);
      liveGroups()[made.get()] = made;
    }
    ModelTask t;
    t.op = ModelTask::Op::kGroup;
    t.group = made;
    t.kind = "task group";
    t.lane = lane;
    c->tasks.push_back(std::move(t));  // the lane's task count already counts its tasks
    *group = made.get();
    return Status::Ok();
  });
}

Status groupUpdateBegin(Stream* stream, TaskGroup* group) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<TaskGroup> held;
    COHORT_RETURN_IF_ERROR(needGroup(group, "groupUpdateBegin", &held));
    if (s->capture() != nullptr) {
      return makeError(ErrorCode::kInvalidUsage,
                       "groupUpdateBegin: {} captures or updates already; an update is recorded "
                       "on a stream that does neither",
                       s->name());
    }
    auto c = newStreamCapture(s, CaptureMode::kRelaxed);  // refuses nothing to others
    c->modelId = held->modelId();
    c->updating = std::move(held);  // outlives its model's destruction until it ends
    activateCapture(c);
    s->setCapture(c, 0);
    return Status::Ok();
  });
}

Status groupUpdateEnd(Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    std::shared_ptr<CaptureState> c = s->capture();
    if (c == nullptr || c->updating == nullptr) {
      return makeError(ErrorCode::kInvalidUsage,
                       "groupUpdateEnd: {} records no task group update (groupUpdateBegin)",
                       s->name());
    }
    std::vector<ModelTask> tasks;
    std::string problem;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      tasks.swap(c->tasks);
      problem = c->problem;
    }
    endCapture(c);
    std::shared_ptr<TaskGroup> group = std::move(c->updating);
    if (!problem.empty()) {
      return makeError(ErrorCode::kInvalidUsage, "groupUpdateEnd: the update on {} broke: {}",
                       s->name(), problem);
    }
    if (tasks.empty()) return Status::Ok();  // nothing to replace: the group stays
    const std::shared_ptr<const std::vector<ModelTask>> now = group->tasks();
    bool same = tasks.size() == now->size();
    for (std::size_t i = 0; same && i < tasks.size(); ++i) same = sameKind(tasks[i], (*now)[i]);
    if (!same) {
      return makeError(ErrorCode::kInvalidUsage,
                       "groupUpdateEnd: an update replaces a task group's tasks with as many of "
                       "the same kinds; the group of model {} has {} ({}), the update {} ({})",
                       group->modelId(), now->size(), kindsOf(*now), tasks.size(), kindsOf(tasks));
    }
    // In the update stream's order, as CANN's update tasks are: a launch that reaches
    // the group after this task ran runs the new tasks.
    auto replacement = std::make_shared<std::vector<ModelTask>>(std::move(tasks));
    s->enqueue(
        [group, replacement] {
          group->replace(std::move(*replacement));
          return Status::Ok();
        },
        /*runAfterError=*/false, "task update");
    return Status::Ok();
  });
}

}  // namespace cohort::runtime
