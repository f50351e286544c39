// A model's launch (Model::launch): the host gives each event record and wait its
// generation and asks the issuers what to add; each lane's stream then runs the lane's
// steps in one task.
#include "runtime/capture.h"

#include <algorithm>

#include "common/error.h"
#include "common/wait.h"
#include "runtime/api.h"
#include "runtime/event.h"
#include "runtime/stream.h"

namespace cohort::runtime {

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

// Whether a lane that runs once started (a built model's lane that is not a head one)
// was started in this launch, or given up: no lane that could start it is left.
struct LaneStart {
  enum : int { kWaiting, kStarted, kGivenUp };
  std::atomic<int> state{kWaiting};
  WaitWord word;
  bool settle(int to) {
    int expected = kWaiting;
    if (!state.compare_exchange_strong(expected, to, std::memory_order_acq_rel)) return false;
    word.notifyAll();
    return true;
  }
};

// One launch: the plan, and what this launch gave it. Shared by the launch's lane
// tasks (so it outlives the model if need be).
struct LaunchProgram {
  std::shared_ptr<const ModelPlan> plan;
  // The launch's shared state, which its lanes change as they run: by lane, whether it
  // was started; and the lanes that may still start others (the head ones and those
  // started, until their work ends). At 0 the lanes still waiting are given up.
  mutable std::unique_ptr<LaneStart[]> starts;
  mutable std::atomic<int> starters{0};
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

// Whether `a` holds now: its values are read from device memory as the task runs.
template <typename T>
bool compares(const ModelTask::Activation& a) {
  const T left = __atomic_load_n(static_cast<const T*>(a.left), __ATOMIC_ACQUIRE);
  const T right = __atomic_load_n(static_cast<const T*>(a.right), __ATOMIC_ACQUIRE);
  switch (a.cond) {
    case Compare::kEqual: return left == right;
    case Compare::kNotEqual: return left != right;
    case Compare::kGreater: return left > right;
    case Compare::kGreaterOrEqual: return left >= right;
    case Compare::kLess: return left < right;
    case Compare::kLessOrEqual: return left <= right;
  }
  return false;
}

// A lane that may start others ended its work: the last one gives up the lanes that
// wait to be started.
void workEnded(const LaunchProgram& p) {
  if (p.starters.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  for (std::size_t l = 0; l < p.plan->lanes.size(); ++l) p.starts[l].settle(LaneStart::kGivenUp);
}

// The lane a start or a switch starts (-1: none).
int startedLane(const ModelTask::Activation& a) {
  if (a.left == nullptr) return a.onTrue;
  const bool holds = a.wide ? compares<std::int64_t>(a) : compares<std::int32_t>(a);
  return holds ? a.onTrue : a.onFalse;
}

// A kernel, copy, set or callback of a model.
Status runTask(const ModelTask& t, Stream* s) {
  if (t.op != ModelTask::Op::kKernel) return t.fn();
  ComputeScope computing;  // as launchKernel's tasks do
  return t.kernel(s);
}

// The group's tasks as they are when the launch gets there; the first failure ends it.
Status runGroup(const TaskGroup& group, Stream* s) {
  const std::shared_ptr<const std::vector<ModelTask>> tasks = group.tasks();
  for (const ModelTask& t : *tasks) COHORT_RETURN_IF_ERROR(runTask(t, s));
  return Status::Ok();
}

// The branch the value chooses, or -1 (CondTask's rules, cohort/runtime_capture.h).
int chosenBranch(const CondTask& c, std::uint64_t value) {
  switch (c.type) {
    case CondType::kIf: return value != 0 ? 0 : c.branches.size() > 1 ? 1 : -1;
    case CondType::kWhile: return value != 0 ? 0 : -1;
    case CondType::kSwitch: return value < c.branches.size() ? static_cast<int>(value) : -1;
  }
  return -1;
}

// Runs the chosen branch where the task stands; a while task reads its value again
// after each round, which the branch's own work has finished by then.
Status runCond(const CondTask& c, Stream* s) {
  const std::uint64_t interruptions = s->interruptions();
  for (;;) {
    const int chosen = chosenBranch(c, c.handle->read());
    if (chosen < 0) return Status::Ok();
    COHORT_RETURN_IF_ERROR(c.branches[static_cast<std::size_t>(chosen)]->runInline(s));
    if (c.type != CondType::kWhile) return Status::Ok();
    if (s->interruptions() != interruptions || s->retiring()) {  // an endless loop ends so
      return makeError(ErrorCode::kAborted, "{}: a while task of a model was aborted", s->name());
    }
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
  // A lane counts among the starters from its start (a head one: from the launch) to
  // the end of its work; given up, it only completes its event records, with an error.
  bool starter = !steps.empty() && steps.front().op != Op::kAwait;
  bool givenUp = false;
  if (lane == 0 && failure.ok()) {
    for (const std::shared_ptr<CondHandle>& h : plan.assigns) h->assign();
  }
  for (std::size_t pc = 0; pc < steps.size(); ++pc) {
    const ModelPlan::Step& step = steps[pc];
    if (step.task > p.stopAt) break;  // the launch ended there
    const ModelTask& t = plan.tasks[step.task];
    if (givenUp && step.op != Op::kRecord && step.op != Op::kIssued) continue;
    switch (step.op) {
      case Op::kLabel:
        break;
      case Op::kAwait: {
        LaneStart& start = p.starts[lane];
        static thread_local const WaitPolicy idle = WaitPolicy::idleFromConfig();
        start.word.waitUntil(
            [&] { return start.state.load(std::memory_order_acquire) != LaneStart::kWaiting; },
            Deadline::never(), idle);
        if (start.state.load(std::memory_order_acquire) == LaneStart::kGivenUp) {
          givenUp = true;
          failure = makeError(ErrorCode::kInvalidUsage,
                              "{} of the model waited to be started, but no task of this launch "
                              "started it",
                              s->name());
        } else {
          starter = true;  // counted by the lane that started it
        }
        break;
      }
      case Op::kActivate:
        if (failure.ok()) {
          const int started = startedLane(*t.activation);
          // Counted before it can end: this lane, a starter, has not ended yet.
          p.starters.fetch_add(1, std::memory_order_acq_rel);
          if (started < 0 ||
              !p.starts[static_cast<std::size_t>(started)].settle(LaneStart::kStarted)) {
            workEnded(p);  // nothing started (or started already): no new starter
          }
        }
        break;
      case Op::kWorkEnd:
        if (starter) workEnded(p);
        starter = false;
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
        // Generation 0: never recorded, nothing to wait for; an external event waits
        // for its flag whatever the generation.
        const std::uint64_t generation = p.generations[step.slot];
        if ((generation != 0 || t.event->external) && failure.ok()) {
          failure = s->waitInTask(t.event, generation);
        }
        break;
      }
      case Op::kIssued:
        for (std::size_t k = p.addedFrom[step.slot]; k < p.addedFrom[step.slot + 1]; ++k) {
          if (p.added[k].lane == lane) runStep(p.added[k].step, s, &failure);
        }
        break;
      case Op::kTask: {
        if (!failure.ok() && !t.runAfterError) break;
        Status r = t.op == ModelTask::Op::kGroup ? runGroup(*t.group, s)
                   : t.op == ModelTask::Op::kCond  ? runCond(*t.cond, s)
                                                   : runTask(t, s);
        if (failure.ok()) failure = std::move(r);
        break;
      }
    }
  }
  if (starter) workEnded(p);
  // A lane given up told its waiters through its records; its stream has not failed.
  return failedBefore || givenUp ? Status::Ok() : failure;
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

// The host's part of a launch is small: an event generation per record and wait, and
// the issuers' calls; the plan's tasks run from the lanes' stream tasks.
Status prepareLaunch(const std::shared_ptr<const ModelPlan>& planHeld,
                     const std::vector<Stream*>& lanes, std::shared_ptr<LaunchProgram>* out) {
  const ModelPlan& plan = *planHeld;
  auto program = std::make_shared<LaunchProgram>();
  program->plan = planHeld;
  program->generations.assign(plan.eventSlots, 0);
  program->starts = std::make_unique<LaneStart[]>(plan.lanes.size());
  for (const std::vector<ModelPlan::Step>& steps : plan.lanes) {
    // Every lane that runs from the launch on (an empty one is not queued).
    if (!steps.empty() && steps.front().op != ModelPlan::Step::Op::kAwait) {
      program->starters.fetch_add(1, std::memory_order_relaxed);
    }
  }
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
  *out = std::move(program);
  return status;
}

// Queues the lanes from `first` on: even after an issuer's error, what the launch gave
// so far must run (a collective it numbered, an event record others may wait for).
void queueLanes(const std::shared_ptr<LaunchProgram>& program, const std::vector<Stream*>& lanes,
                std::size_t first) {
  const ModelPlan& plan = *program->plan;
  for (std::size_t l = first; l < lanes.size(); ++l) {
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
}

}  // namespace

Status Model::launch(Stream* stream) {
  std::shared_ptr<LaunchProgram> program;
  std::vector<Stream*> lanes;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!complete_) {
      return makeError(ErrorCode::kInvalidUsage, "model {} {}", id_,
                       capturing_ == nullptr ? "was never completed (its capture or build broke "
                                               "or was given up)"
                       : capturing_->building ? "is still being built (modelBuildEnd)"
                                              : "is still being captured");
    }
    COHORT_RETURN_IF_ERROR(laneStreamsLocked(stream, &lanes));
    status = prepareLaunch(plan_, lanes, &program);
    queueLanes(program, lanes, 0);
  }
  return status;
}

Status Model::runInline(Stream* stream) {
  std::shared_ptr<LaunchProgram> program;
  std::vector<Stream*> lanes;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Complete: its parent's capture ended only after it had.
    COHORT_RETURN_IF_ERROR(laneStreamsLocked(stream, &lanes));
    status = prepareLaunch(plan_, lanes, &program);
    queueLanes(program, lanes, 1);
  }
  Status ran = program->plan->lanes[0].empty() ? Status::Ok() : runLane(*program, 0, stream);
  return status.ok() ? ran : status;
}

}  // namespace cohort::runtime
