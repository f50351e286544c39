// Stream capture into models, the runtime's side of CANN's aclmdlRI: see the section
// comment below. Functions are thread-safe; like the rest of the runtime they return a
// Status and record failures as the thread's lastError().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cohort/runtime.h"

namespace cohort::runtime {

class Model;  // opaque; made by captureBegin, complete after captureEnd

// ---- Stream capture and models ------------------------------------------------
//
// While a stream captures, what is queued on it (kernels, copies, sets, callbacks,
// event records and waits) is recorded into a model instead of run. A stream that
// waits on an event recorded in the capture joins it: its tasks are recorded too, on
// a lane of their own, and it must be joined back (the capturing stream waits on an
// event recorded on it after its last task) before the capture ends. Launching the
// model queues on the stream given one task that runs lane 0's recorded tasks in
// their order (each joined lane likewise, on a stream the model owns), each event
// record a new generation: the host issues a whole model for the price of a few
// tasks, and never waits, like any enqueue. A model is immutable but for its task
// groups' tasks, which updates replace (below); launching it from several threads at
// once is safe.

enum class CaptureMode {
  kGlobal = 0,       ///< unsafe calls are refused in every thread while it captures
  kThreadLocal = 1,  ///< unsafe calls are refused in the thread that began it
  kRelaxed = 2,      ///< nothing is refused
};
enum class CaptureStatus { kNone = 0, kActive = 1, kInvalidated = 2 };

/// Starts recording `stream` into a new model. kCaptured if it captures already.
Status captureBegin(Stream* stream, CaptureMode mode);
/// Ends the capture begun on `stream` and hands over its model (modelDestroy frees
/// it). kInvalidUsage if the stream does not capture, joined a capture without
/// beginning it, or (unless relaxed) the thread is not the one that began it;
/// kCaptured, and no model, if the capture broke or a joined stream was not joined back.
Status captureEnd(Stream* stream, Model** model);

/// Where a stream stands in a capture.
struct CaptureDescription {
  CaptureStatus status = CaptureStatus::kNone;
  bool origin = false;        ///< the capture began on this stream (else it joined one)
  bool beganHere = false;     ///< the calling thread began the capture
  CaptureMode mode = CaptureMode::kGlobal;
  int unjoinedLanes = 0;      ///< joined streams whose last task nothing waits for yet
  std::size_t tasks = 0;      ///< recorded so far
  std::uint32_t modelId = 0;  ///< the id the model will have
  std::string problem;        ///< why the capture broke (kInvalidated)
};
Status captureDescribe(Stream* stream, CaptureDescription* out);
/// The model the stream's capture fills (null if it does not capture): its handle is
/// valid from captureBegin on, and launchable once the capture ended.
Status captureModel(Stream* stream, Model** model);
/// Whether any stream of the process captures now (one load: for hot paths).
bool captureActive();
/// Swaps the calling thread's capture mode (kGlobal at first) with *mode.
Status captureExchangeMode(CaptureMode* mode);
/// Ok unless the calling thread may not make an unsafe call (a synchronous copy or
/// set, a device synchronize) now: then kCaptured naming `what`.
Status captureCheckUnsafe(const char* what);

/// What a task recorded by a layer above (captureRecordIssuer) adds to a launch of its
/// model. A launch gathers each lane's work on the launching thread and queues it at
/// its end as one task per lane: an issuer adds its work here, at its task's place,
/// instead of queuing it on a stream. Valid during the issuer's call only.
class LaunchContext {
 public:
  /// The stream the task runs on in this launch, its device and its id (as
  /// streamDescribe gives them).
  virtual Stream* stream() const = 0;
  virtual int device() const = 0;
  virtual int streamId() const = 0;
  /// Runs `kernel` at the task's place (handed that stream).
  virtual void run(Kernel kernel) = 0;
  /// Records `event` behind everything queued on `on` so far, this launch's work
  /// included (`on` may be outside the model: then as eventRecord).
  virtual Status recordEvent(Event* event, Stream* on) = 0;
  /// The task's stream waits, at the task's place, for the event's latest record.
  virtual Status waitEvent(Event* event) = 0;

 protected:
  ~LaunchContext() = default;
};
/// Called at each launch on the launching thread; must never wait. An error ends the
/// launch (what was added so far still runs) and is the launch's.
using LaunchIssuer = std::function<Status(LaunchContext&)>;
/// Records, on a capturing stream, a task whose work `issue` adds at each launch of
/// the model (the layers above record their operations this way). kInvalidUsage if
/// the stream does not capture.
Status captureRecordIssuer(Stream* stream, const char* kind, LaunchIssuer issue);

// ---- Built models (CANN's aclmdlRIBuildBegin ... aclmdlRIBuildEnd) ------------------
//
// A model is also built from streams bound to it: what is queued on a bound stream
// is recorded (each stream a lane), never run, until the stream's modelEndTask; then
// modelBuildEnd completes the model. A launch runs the head streams' tasks (the first
// bound on the launching stream, the others on streams of the model's own), and those
// of the streams its tasks start; it ends when the head and the ended streams have.
// Labels set on a bound stream are places a label switch on the same stream jumps to
// at each launch.

/// A model to build: bind streams to it, queue their work, end them, then modelBuildEnd.
Status modelBuildBegin(Model** model);
/// Binds `stream` (not a default stream, not bound or capturing already). `head`: it
/// runs from the launch on (CANN's ACL_MODEL_STREAM_FLAG_HEAD); other streams run
/// once a task of the model starts them (streamActivate, streamSwitch).
Status modelBindStream(Model* model, Stream* stream, bool head);
/// Marks the end of the work queued on a bound stream.
Status modelEndTask(Model* model, Stream* stream);
/// Completes the model: one bound stream at least is a head and one at least ended.
/// A launch ends once the head streams and the ended ones have (an ended stream that
/// is not a head must be started). The streams run what is queued on them again;
/// they stay bound until modelUnbindStream.
Status modelBuildEnd(Model* model);
Status modelUnbindStream(Model* model, Stream* stream);
/// On a stream bound to a model being built: `label` (any address that names it)
/// marks this place in the stream's work.
Status labelSet(const void* label, Stream* stream);
/// On a stream bound to a model being built: when a launch gets here, jumps to
/// labels[*index] (a 4-byte device value read then; past maxValue or the list, the
/// last label) on the same stream, skipping what lies between (or running it again).
Status labelSwitchByIndex(const std::uint32_t* index, std::uint32_t maxValue,
                          std::vector<const void*> labels, Stream* stream);

/// How streamSwitch compares its two values.
enum class Compare { kEqual, kNotEqual, kGreater, kGreaterOrEqual, kLess, kLessOrEqual };
/// On a stream bound to a model being built: when a launch gets here, starts `target`,
/// another stream bound to it that is not a head stream (such a stream runs only once
/// started, at most once a launch; one never started runs nothing in that launch).
Status streamActivate(Stream* target, Stream* stream);
/// On a stream bound to a model being built: when a launch gets here, compares the
/// signed integers (64-bit if `wide`, else 32-bit) at `left` and `right`, read then,
/// and starts `onTrue` if `left cond right`, else `onFalse` (null: none), as
/// streamActivate does.
Status streamSwitch(const void* left, Compare cond, const void* right, bool wide, Stream* onTrue,
                    Stream* onFalse, Stream* stream);

/// Queues the model's tasks on `stream`. Never waits. kCaptured if `stream` captures
/// (a model inside a model is not supported).
Status modelLaunch(Model* model, Stream* stream);
/// Frees the model. Launches already queued run to their end.
Status modelDestroy(Model* model);

/// One recorded task, for printing a model.
struct ModelTaskInfo {
  std::string kind;  ///< "kernel", "copy", "set", "callback", "event record", "event wait", ...
  int lane = 0;      ///< 0: the stream the capture began on
};
struct ModelDescription {
  std::uint32_t id = 0;
  std::string name;  ///< modelSetName's, empty until then
  int lanes = 1;
  std::vector<ModelTaskInfo> tasks;
};
Status modelDescribe(Model* model, ModelDescription* out);
/// Names the model (the last name given counts), for printing it.
Status modelSetName(Model* model, std::string name);

// ---- Task groups (CANN's aclmdlRICaptureTaskGrpBegin ... TaskUpdateEnd) ------------
//
// Tasks a capture records between captureGroupBegin and captureGroupEnd on one stream
// form a group whose tasks can be replaced after the capture: what is queued on
// another (not capturing) stream between groupUpdateBegin and groupUpdateEnd is
// recorded, not run, and takes the group's place when the update stream gets there
// (stream order, like any task). Launches look the group up when they reach it.

class TaskGroup;  // opaque; made by captureGroupEnd, freed with its model

/// Opens a group on a capturing stream (one group at a time per capture).
Status captureGroupBegin(Stream* stream);
/// Closes the group opened on `stream`. kInvalidUsage if none is, or another stream
/// of the capture recorded tasks meanwhile; kNotSupported if a task of the group is
/// not a kernel, copy or set.
Status captureGroupEnd(Stream* stream, TaskGroup** group);
/// Starts recording on `stream` (which must not capture) the tasks that replace
/// `group`'s.
Status groupUpdateBegin(Stream* stream, TaskGroup* group);
/// Ends the update begun on `stream` and queues the replacement on it. No task: the
/// group stays as it is. kInvalidUsage if the tasks differ from the group's in number
/// or kind (the group stays as it is).
Status groupUpdateEnd(Stream* stream);

// ---- Conditional tasks (CANN's aclmdlRICondHandleCreate ... AddCondTask) -----------
//
// A conditional task runs one of its branch models (kIf, kSwitch) or one repeatedly
// (kWhile), chosen by a 64-bit value in device memory read when the task runs: kIf
// runs branch 0 if the value is not 0, else branch 1 (if given); kWhile runs its
// branch while the value is not 0 (read before each round); kSwitch runs branch
// `value` (none past the last). Branches are models made empty by captureCondTask and
// filled by a capture begun with captureBeginInto; they are freed with the model that
// holds the task (modelDestroy refuses them).

class CondHandle;  // opaque; made by condCreate, freed with its model
enum class CondType { kIf = 0, kWhile = 1, kSwitch = 2 };

/// A condition value (8 bytes of device memory of the current device) for tasks of
/// `model`, which a capture fills now. `assignEachLaunch`: every launch of the model
/// sets it to `initial` before its first task.
Status condCreate(Model* model, std::uint64_t initial, bool assignEachLaunch,
                  CondHandle** handle);
/// The device address of the handle's value (valid until its model is destroyed).
Status condValue(CondHandle* handle, std::uint64_t** value);
/// Records on a capturing stream a conditional task on `handle` (of the model this
/// capture fills) with `branches` branch models, made here and written to `models`.
/// kInvalidArgument for a branch count the type does not take (kIf: 1 or 2, kWhile:
/// 1, kSwitch: at least 1).
Status captureCondTask(Stream* stream, CondHandle* handle, CondType type, std::size_t branches,
                       Model** models);
/// Starts recording `stream` into `model`, a branch model that is neither captured
/// nor being captured; captureEnd ends it as any capture.
Status captureBeginInto(Stream* stream, Model* model, CaptureMode mode);

/// An event whose records set a flag that resets clear (CANN's ACL_EVENT_EXTERNAL):
/// a wait on it, in a model or on a stream, waits until it is set, whether recorded
/// before the wait was queued or after. A stream that waits on it while it is recorded
/// in a capture does not join the capture. Query and synchronize see its latest
/// record, as for any event.
Status eventCreateExternal(Event** event);

/// eventRecord for streams outside a model: on a capturing stream the record is
/// recorded (every launch records the event), and a stream that waits on it does not
/// join the capture. On other streams, the same as eventRecord.
Status eventRecordExternal(Event* event, Stream* stream);

}  // namespace cohort::runtime
