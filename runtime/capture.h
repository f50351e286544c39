// Stream capture: the record a capture keeps while it runs, and the model it
// becomes (cohort/runtime_capture.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cohort/runtime_capture.h"

namespace cohort::runtime {

class Stream;
class Model;
class TaskGroup;
class CondHandle;

struct EventState;
struct CondTask;

/// One recorded task, by what a launch does with it: `kRun` runs `fn` as it was
/// queued (copies, sets, callbacks); `kKernel` runs `kernel`, handed the stream it
/// runs on; `kRecord`/`kWait` record `event` / wait for its latest record (each
/// launch records a new generation, so streams outside the model order with every
/// launch); `kIssue` asks `issue` at each launch what to run (the layers above);
/// `kGroup` runs the tasks `group` holds when it gets there (they may be replaced
/// between launches); `kCond` runs branch models as `cond` chooses.
struct ModelTask {
  /// kActivate: start a lane of a built model that runs only once started (every
  /// lane but the head ones), at most once a launch; kAwait: such a lane's first task;
  /// kWorkEnd: lane 0 starts nothing after it (what follows waits for the other lanes).
  enum class Op {
    kRun, kKernel, kRecord, kWait, kIssue, kLabel, kSwitch, kActivate, kAwait, kWorkEnd,
    kGroup, kCond
  };
  /// kSwitch: jump to labels[*index] (the last one if out of range) in the same lane.
  struct Switch {
    const std::uint32_t* index = nullptr;
    std::uint32_t maxValue = 0;
    std::vector<const void*> labels;
  };
  /// kActivate: the lane started, or, with `left` set, the lane chosen by comparing
  /// the signed integers at `left` and `right` (read when the task runs): `onTrue` if
  /// `left cond right` holds, else `onFalse` (-1: none).
  struct Activation {
    const void* left = nullptr;
    const void* right = nullptr;
    Compare cond = Compare::kEqual;
    bool wide = false;  // 64-bit operands, else 32-bit
    int onTrue = -1;
    int onFalse = -1;
  };
  Op op = Op::kRun;
  std::function<Status()> fn;
  Kernel kernel;
  std::shared_ptr<EventState> event;
  LaunchIssuer issue;
  const void* label = nullptr;  // kLabel: the label set here
  std::shared_ptr<const Switch> jump;
  std::shared_ptr<Activation> activation;
  std::shared_ptr<TaskGroup> group;
  std::shared_ptr<const CondTask> cond;
  bool runAfterError = false;
  int lane = 0;
  const char* kind = "task";

  static ModelTask ofEvent(Op op, std::shared_ptr<EventState> event) {
    ModelTask t;
    t.op = op;
    t.event = std::move(event);
    t.kind = op == Op::kRecord ? "event record" : "event wait";
    return t;
  }
};

/// A complete model's tasks compiled for launching (Model::finish): what each lane
/// runs, in order, and the few tasks a launch must handle itself. Immutable; shared
/// by the model and its launches.
struct ModelPlan {
  struct Step {
    enum class Op : std::uint8_t {
      kTask, kRecord, kWait, kIssued, kLabel, kSwitch, kActivate, kAwait, kWorkEnd
    };
    Op op = Op::kTask;
    std::uint32_t task = 0;  // index in tasks
    std::uint32_t slot = 0;  // kRecord/kWait: generation slot; kIssued: issuer slot;
                             // kSwitch: its targets in `jumps`
  };
  /// Compiles `tasks` (their lanes < `lanes`); kInvalidUsage if a switch's label is
  /// not set exactly once in the switch's lane.
  static Status compile(int lanes, std::vector<ModelTask> tasks,
                        std::vector<std::shared_ptr<CondHandle>> assigns,
                        std::shared_ptr<const ModelPlan>* out);
  std::vector<ModelTask> tasks;
  std::vector<std::vector<Step>> lanes;  // an issuer has a kIssued step in every lane
  std::vector<std::uint32_t> active;     // the records, waits and issuers, in task order
  std::vector<std::uint32_t> activeSlot; // the slot of each of them
  std::uint32_t eventSlots = 0;
  std::uint32_t issuers = 0;
  std::vector<std::vector<std::uint32_t>> jumps;  // per switch: its labels' steps in its lane
  std::vector<std::shared_ptr<CondHandle>> assigns;  // set at the start of each launch
};

/// The tasks of a task group (captureGroupEnd), which an update replaces in stream
/// order (groupUpdateEnd). Shared by the model's plan and by the updates queued;
/// thread-safe. Registered (a live handle) from its making to its destruction.
class TaskGroup {
 public:
  TaskGroup(std::uint32_t modelId, std::vector<ModelTask> tasks);
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  std::uint32_t modelId() const { return modelId_; }
  /// The tasks now: a launch runs the list it took, whatever replaces it meanwhile.
  std::shared_ptr<const std::vector<ModelTask>> tasks() const;
  void replace(std::vector<ModelTask> tasks);

 private:
  const std::uint32_t modelId_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<ModelTask>> tasks_;
};

/// A condition value in device memory (condCreate), owned by its model (and by the
/// plans and tasks that use it); freed with the last of them, unless its device was
/// torn down since. Thread-safe; registered (a live handle) until destroyed.
class CondHandle {
 public:
  CondHandle(std::uint32_t modelId, int device, std::uint64_t resets, std::uint64_t* value,
             std::uint64_t initial, bool assign);
  ~CondHandle();
  CondHandle(const CondHandle&) = delete;
  CondHandle& operator=(const CondHandle&) = delete;
  std::uint32_t modelId() const { return modelId_; }
  std::uint64_t* value() const { return value_; }
  bool assigns() const { return assign_; }
  /// The value as the device holds it now, and the value each launch starts from.
  std::uint64_t read() const { return __atomic_load_n(value_, __ATOMIC_ACQUIRE); }
  void assign() const { __atomic_store_n(value_, initial_, __ATOMIC_RELEASE); }

 private:
  const std::uint32_t modelId_;
  const int device_;
  const std::uint64_t resets_;  // the device's teardowns when the value was allocated
  std::uint64_t* const value_;
  const std::uint64_t initial_;
  const bool assign_;
};

/// A conditional task (captureCondTask): what chooses, and the branches it chooses from.
struct CondTask {
  std::shared_ptr<CondHandle> handle;
  CondType type = CondType::kIf;
  std::vector<std::shared_ptr<Model>> branches;
};

/// What one capture records. Shared by its member streams (Stream::capture_) while it
/// runs and by the events recorded in it; thread-safe (mu). Lock order: a Stream's mu_
/// before this mu, never the other way.
struct CaptureState {
  std::mutex mu;
  std::atomic<bool> active{true};
  CaptureMode mode = CaptureMode::kGlobal;
  std::thread::id thread;      // began the capture
  std::uint32_t modelId = 0;   // the id of the model it becomes
  std::vector<Stream*> lanes;  // lane i's stream while capturing; lane 0 began it
  // Per lane: recorded tasks, and whether lane 0 waited for the last of them.
  std::vector<std::size_t> laneTasks;
  std::vector<bool> joined;
  std::vector<ModelTask> tasks;
  std::string problem;  // non-empty: the capture broke (CaptureStatus::kInvalidated)
  Model* model = nullptr;  // made at captureBegin, registered
  std::shared_ptr<Model> keep;  // a branch model (captureBeginInto), held while captured
  // A build (modelBuildBegin): its lanes are the bound streams, none began it.
  bool building = false;
  std::vector<bool> head;   // per lane: runs from the launch on (else activated)
  std::vector<bool> ended;  // per lane: modelEndTask was called
  // A task group open on a lane (captureGroupBegin): its first task's index in tasks.
  int groupLane = -1;
  std::size_t groupFrom = 0;
  // An update (groupUpdateBegin): its tasks replace this group's; no model is filled.
  std::shared_ptr<TaskGroup> updating;

  /// Appends a task on `lane` (mu held by the caller: record() takes it).
  void recordLocked(int lane, ModelTask task);
  void record(int lane, ModelTask task) {
    std::lock_guard<std::mutex> lock(mu);
    recordLocked(lane, std::move(task));
  }
  /// Breaks the capture: captureEnd will return kCaptured with `why`.
  void invalidate(const std::string& why);
  int unjoinedLanesLocked() const;
};

/// Where an event's latest record went while a capture ran (EventState::captured).
struct CapturedRecord {
  std::weak_ptr<CaptureState> capture;
  int lane = 0;
  std::size_t laneTask = 0;  // the lane's task count just after the record
};

/// Ends a capture whose stream that began it is being destroyed: the capture stops,
/// its model stays incomplete (modelDestroy frees it).
void abandonCapture(const std::shared_ptr<CaptureState>& capture);

// The registry of captures and models (capture.cc), shared by the files that make,
// build, launch and destroy models. Thread-safe.
/// Takes the capture out of the running ones and its streams out of it.
void endCapture(const std::shared_ptr<CaptureState>& capture);
/// Gives `capture` its id and the model it fills, registered (owned) until
/// forgetModel; the capture counts as running (captureActive).
Model* startModel(const std::shared_ptr<CaptureState>& capture);
/// A new empty model with a new id, registered (owned) until forgetModel.
std::shared_ptr<Model> newModel();
/// A capture of `stream` alone (lane 0), begun by the calling thread in `mode`; not
/// yet running (startModel or activateCapture).
std::shared_ptr<CaptureState> newStreamCapture(Stream* stream, CaptureMode mode);
/// Counts `capture` among the running ones (captureActive) until endCapture.
void activateCapture(const std::shared_ptr<CaptureState>& capture);
/// Drops the registry's hold on `model` and on its branch models (it is freed with
/// the last hold).
void forgetModel(Model* model);
/// Ok if `model` is registered (then *hold, if given, keeps it alive); else
/// kInvalidHandle naming `fn`.
Status needModel(Model* model, const char* fn, std::shared_ptr<Model>* hold = nullptr);

/// A model: made when a capture begins (its handle is valid from then on) and filled
/// when it ends. Owned by the model registry (modelDestroy). The streams it launches
/// joined lanes on are its own, made on the first launch on a device and destroyed
/// with it. Thread-safe: launches from several threads may run at once.
class Model {
 public:
  explicit Model(std::uint32_t id) : id_(id) {}
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  std::uint32_t id() const { return id_; }
  std::string name() const;
  void setName(std::string name);
  /// The capture that fills it, until it ends (then null).
  std::shared_ptr<CaptureState> capturing() const;
  void setCapturing(std::shared_ptr<CaptureState> capture);
  /// Takes the capture's tasks: the model is complete (unless compiling them fails).
  Status finish(int lanes, std::vector<ModelTask> tasks);
  /// The streams bound to it (modelBindStream) until unbound: unbind() is false for
  /// a stream that is not.
  void bind(Stream* stream);
  bool unbind(Stream* stream);
  bool complete() const;
  int lanes() const;
  /// The task list (immutable once complete; launches share it).
  std::shared_ptr<const std::vector<ModelTask>> tasks() const;
  /// Queues every task: lane 0's on `stream`, the others' on this model's streams,
  /// one stream task per lane that runs the lane's tasks in order (capture.cc).
  Status launch(Stream* stream);
  /// As a branch of a conditional task that runs on `stream`'s worker: lane 0's tasks
  /// run here and now, the others' are queued on this model's streams.
  Status runInline(Stream* stream);

  /// Branch models (captureCondTask) belong to the model whose task runs them, which
  /// keeps them; condition handles made for a model likewise.
  void adoptBranch(std::shared_ptr<Model> branch);
  std::vector<Model*> branches() const;
  bool isBranch() const;
  void addCond(std::shared_ptr<CondHandle> handle);

 private:
  Status laneStreamsLocked(Stream* stream, std::vector<Stream*>* out);

  const std::uint32_t id_;
  mutable std::mutex mu_;
  std::shared_ptr<CaptureState> capturing_;
  bool complete_ = false;
  int lanes_ = 1;
  std::shared_ptr<const ModelPlan> plan_;  // set by finish()
  std::string name_;
  bool branch_ = false;  // a branch of another model's conditional task
  std::vector<std::shared_ptr<Model>> branches_;
  std::vector<std::shared_ptr<CondHandle>> conds_;
  std::vector<Stream*> bound_;
  // Lanes 1.. by device, made while the device had been torn down `resets` times: after
  // another teardown they are gone (and their addresses may be a new stream's).
  struct LaneStreams {
    std::uint64_t resets = 0;
    std::vector<Stream*> streams;
  };
  std::map<int, LaneStreams> laneStreams_;
};

}  // namespace cohort::runtime
