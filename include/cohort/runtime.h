// The per-device runtime: emulated accelerator devices with device memory,
// streams and events, modelled on the ACL runtime (aclrt*).
//
// Devices are emulated on the CPU. COHORT_DEVICE_COUNT (default 8) devices exist
// per node; COHORT_VISIBLE_DEVICES selects and renumbers them. Device memory is
// carved from a shareable mapping, so another process of the node can map a
// buffer (memExport/memImport). A stream is an in-order queue executed
// asynchronously; an event marks a point in a stream that other streams and the
// host can wait for.
//
// Every function returns a Status and records failures as the thread's
// lastError(). Functions are thread-safe unless noted. A null Stream* means the
// default stream of the calling thread's current device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "cohort/status.h"
#include "cohort/version.h"

namespace cohort::runtime {

class Stream;  // opaque; created by streamCreate
class Event;   // opaque; created by eventCreate

// ---- Initialisation and devices ----------------------------------------------

/// Reads the configuration and checks the API version. Optional (every call
/// initialises on demand) but it is where configuration and version errors
/// surface first. Idempotent.
Status init();

/// Number of devices visible to this process.
Status getDeviceCount(int* count);

/// Makes `device` current for the calling thread and takes a reference on it
/// (the first reference brings the device up). Balanced by resetDevice.
Status setDevice(int device);

/// Drops one reference taken by setDevice; the last one waits for the device's
/// streams, destroys them and releases all of the device's memory.
Status resetDevice(int device);

/// The calling thread's current device; kInvalidDevice if none was set.
Status getDevice(int* device);

struct DeviceInfo {
  int id = -1;            ///< logical id (what setDevice takes)
  int physicalId = -1;    ///< id on the node (before COHORT_VISIBLE_DEVICES)
  std::size_t memoryTotal = 0;
  std::size_t memoryFree = 0;
  std::size_t memoryPeak = 0;  ///< most memory in use at once since the device came up
  int referenceCount = 0; ///< outstanding setDevice calls
  int streamCount = 0;
};
Status getDeviceInfo(int device, DeviceInfo* info);

/// How many times `device` was torn down by its last resetDevice (streams destroyed,
/// memory released): pointers and streams of the device obtained before this count
/// changed are gone. Lock-free, so callable while holding locks a stream task takes.
Status deviceResetCount(int device, std::uint64_t* count);

/// Free and total device memory of the current device.
Status getMemInfo(std::size_t* freeBytes, std::size_t* totalBytes);

/// Waits for every stream of the current device (timeoutMs < 0: forever).
Status synchronizeDevice(long timeoutMs = -1);
/// Waits for every stream of `device` (which need not be the current one).
Status synchronizeDeviceById(int device, long timeoutMs);

// ---- Memory ---------------------------------------------------------------------

/// Allocates `size` (> 0) bytes of device memory on the current device, 64-byte
/// aligned (4 KiB from 64 KiB up). Memory is pooled: freeing returns it to the
/// device's pool, so reallocating the same sizes takes no page faults.
Status deviceMalloc(void** ptr, std::size_t size);
/// Frees device memory (immediately; no implicit synchronisation, but the copies
/// and kernels leading the device's queues run first: see memcpy).
Status deviceFree(void* ptr);
/// Page-locked ("pinned") host memory.
Status hostMalloc(void** ptr, std::size_t size);
Status hostFree(void* ptr);

enum class MemcpyKind : int {
  kHostToHost = 0,
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kDeviceToDevice = 3,
  kDefault = 4,  ///< inferred from the pointers
};

/// Copies `count` bytes; `destMax` is the capacity of dst. Errors: count >
/// destMax or past either allocation (kSizeOverflow), a kind that contradicts the
/// pointers (kInvalidMemcpyKind), a freed or foreign device pointer
/// (kInvalidPointer). No implicit synchronisation: the copy is made now. But the
/// device work (copies, sets, launchBlocks kernels) that leads the queues of the
/// devices it touches runs first, as a device would have run it before the host's
/// call reached it; work behind anything that may wait (an event wait, a callback,
/// a host kernel such as a collective) is not waited for. So are memset, deviceFree
/// and memClose.
Status memcpy(void* dst, std::size_t destMax, const void* src, std::size_t count,
              MemcpyKind kind);
Status memcpyAsync(void* dst, std::size_t destMax, const void* src, std::size_t count,
                   MemcpyKind kind, Stream* stream);
/// Sets `count` bytes of device (or pinned host) memory to `value`.
Status memset(void* dst, std::size_t destMax, int value, std::size_t count);
Status memsetAsync(void* dst, std::size_t destMax, int value, std::size_t count,
                   Stream* stream);

struct PointerAttributes {
  bool isDevice = false;   ///< device memory (own, imported, mapped or managed)
  bool isPinnedHost = false;
  bool isRegistered = false;  ///< host memory registered with hostRegister
  bool isManaged = false;     ///< managedMalloc memory
  bool isMapped = false;      ///< device memory at reserved addresses (vmmMap)
  int device = -1;         ///< owning device (logical id; -1 for host or imported)
  void* allocationBase = nullptr;
  std::size_t allocationSize = 0;
};
/// Describes any pointer; a pointer the runtime does not know is plain host memory.
Status pointerGetAttributes(const void* ptr, PointerAttributes* attributes);
/// A count that moves on after every change to the memory the runtime knows (an
/// allocation or free, a host registration, a reservation, a mapping or its access,
/// an import or its close, a device's reset). A check of a pointer (its attributes,
/// vmmCheckAccess) made after reading one value still holds while this returns it.
std::uint64_t memoryGeneration();

/// An exported device buffer that another process of this node can map.
struct MemHandle {
  std::uint8_t bytes[64];
};
/// Exports the allocation that starts at devPtr (device or pinned host memory).
Status memExport(void* devPtr, MemHandle* handle);
/// Exports a whole segment: a device's memory (device >= 0) or the pinned host
/// pool (device = -1), so a peer maps it once and addresses any buffer in it by
/// offset (the shared-memory transport does this). `base` (optional) receives
/// the segment's address in this process.
Status memExportSegment(int device, MemHandle* handle, void** base = nullptr);
/// The segment (device, or -1 for pinned host) and offset a pointer lies at;
/// kInvalidPointer for memory outside every segment (plain host memory).
Status memSegmentOffset(const void* ptr, int* device, std::uint64_t* offset);
/// Maps a buffer exported by another process (or this one); *ptr aliases it.
Status memImport(const MemHandle& handle, void** ptr);
/// Unmaps an imported buffer.
Status memClose(void* importedPtr);
/// A printable form of a handle (at most kMemHandleTextMax characters of [0-9a-f.-]), for
/// handles passed as text, like the keys of aclrtIpcMemGetExportKey. memHandleFromText
/// reverses it: kInvalidArgument for text that is not one.
constexpr std::size_t kMemHandleTextMax = 64;
Status memHandleToText(const MemHandle& handle, std::string* text);
Status memHandleFromText(const std::string& text, MemHandle* handle);
/// Zeroed host memory in a segment of its own (not the pinned pool), exported in *handle:
/// for state that peers of this node map with memImport and may still read after its
/// owner released it. The last sharedFree() of this process (see sharedRetain) unmaps it
/// here; every other process's mapping stays valid, with the last contents, until that
/// importer's memClose, and the memory is never reused meanwhile. Thread-safe.
Status sharedAlloc(std::size_t bytes, void** ptr, MemHandle* handle);
/// A further reference, in the process that made it, to memory of sharedAlloc: the same
/// address (one mapping per process, so that tools that follow memory by address, such
/// as ThreadSanitizer, see both users' accesses), released by its own sharedFree; the
/// memory goes with the last reference. kInvalidArgument for another process's handle,
/// kInvalidPointer when the memory was already released.
Status sharedRetain(const MemHandle& handle, void** ptr);
Status sharedFree(void* ptr);

// ---- Virtual memory ------------------------------------------------------------------
// Address ranges reserved with nothing behind them, and physical allocations of a
// device mapped into them: one contiguous range of device memory grown piece by
// piece. Pointers in mappings are device memory of the allocation's device for every
// call; adjacent mappings of one device form one allocation. A physical allocation
// can be shared with other processes of the node, which map the same pages.
// Thread-safe.

/// A physical allocation (a block of a device's memory, this process's or another's);
/// opaque.
struct PhysicalMemory;
/// Sizes, offsets and reservation starts are multiples of this (2 MiB).
std::size_t vmmGranularity();
/// Reserves `size` bytes of addresses aligned to `alignment` (0 or a power of two;
/// at least the granularity). A non-null `start` is where the range must begin
/// (aligned likewise): kInvalidArgument if those addresses are taken.
Status vmmReserve(std::size_t size, std::size_t alignment, void* start, void** va);
/// Releases a reservation that holds no mapping.
Status vmmRelease(void* va);
/// `size` bytes of `device`'s memory, counted against its capacity, with one
/// reference. `attributes` is the caller's, kept opaque (importers see it too).
Status vmmCreate(int device, std::size_t size, std::uint64_t attributes, PhysicalMemory** out);
/// Drops one reference (the creation's, an import's or a vmmRetain's). The memory goes
/// when no reference and no mapping remain; until then the handle is no longer valid
/// for the caller but its mappings are.
Status vmmDestroy(PhysicalMemory* mem);

/// What a mapping allows: the page protection of its addresses (every device and the
/// host share one address space here, so it is the same for all of them).
enum class VmmAccess : int { kNone = 0, kRead = 1, kReadWrite = 3 };
/// Maps [offset, offset + size) of `mem` at `va`, inside a reservation, over no other
/// mapping, with the given access.
Status vmmMap(void* va, std::size_t size, std::size_t offset, PhysicalMemory* mem,
              VmmAccess access = VmmAccess::kReadWrite);
/// Unmaps the mapping that starts at `va`; its addresses stay reserved.
Status vmmUnmap(void* va);
/// Changes the access of [va, va + size): whole mappings, back to back, from va.
Status vmmSetAccess(void* va, std::size_t size, VmmAccess access);
/// kInvalidPointer when [p, p + bytes) meets a mapping that does not allow a read (or,
/// with `write`, a write); ok for every other memory. `what` names the caller.
Status vmmCheckAccess(const void* p, std::size_t bytes, bool write, const char* what);

/// The mapping that holds an address.
struct VmmMapping {
  void* base = nullptr;           ///< where it starts
  std::size_t size = 0;
  PhysicalMemory* mem = nullptr;  ///< what is mapped there
  std::size_t offset = 0;         ///< of `base` in `mem`
  VmmAccess access = VmmAccess::kReadWrite;
};
/// kInvalidPointer when `va` is in no mapping.
Status vmmLookup(const void* va, VmmMapping* out);
/// The physical allocation mapped at `va` (anywhere in a mapping), with one more
/// reference for the caller (vmmDestroy drops it).
Status vmmRetain(const void* va, PhysicalMemory** out);
/// Maps at dst (the start of a reservation) what is mapped at [src, src + size): whole
/// mappings back to back from src, each at the same offset from dst.
Status vmmMapAlias(void* dst, const void* src, std::size_t size);

struct PhysicalMemoryInfo {
  int device = -1;  ///< the creator's device, or the one an import was made for
  std::size_t size = 0;
  std::uint64_t attributes = 0;  ///< given at creation (vmmCreate)
  bool imported = false;         ///< another process's memory (vmmImport)
};
/// Describes a physical allocation the caller holds a reference on.
Status vmmInfo(const PhysicalMemory* mem, PhysicalMemoryInfo* info);
/// The device and size of a physical allocation the caller holds a reference on.
Status vmmDescribe(const PhysicalMemory* mem, int* device, std::size_t* size);

/// Shares an allocation of this process (not an import) with the other processes of the
/// node: *shareable names it until its last reference and mapping here are gone. With
/// `checkPid`, only processes put on its whitelist may import it. Once per allocation.
Status vmmExport(PhysicalMemory* mem, bool checkPid, std::uint64_t* shareable);
/// Adds processes to the whitelist of a handle this process exported.
Status vmmSetImportPids(std::uint64_t shareable, const std::int32_t* pids, std::size_t count);
/// Another process's exported allocation as one of this process, for `device`: its
/// mappings are the exporter's pages. Once per handle and process (until freed); not in
/// the exporting process (kNotSupported). A process not on a checked whitelist gets
/// kInvalidUsage with *denied (if given) set. The exporter's memory stays allocated
/// while an importer holds it, and goes back to its pool at its next vmmCreate or
/// vmmDestroy after that.
Status vmmImport(std::uint64_t shareable, int device, PhysicalMemory** out,
                 bool* denied = nullptr);

// ---- Host memory the devices use directly ------------------------------------------
// Emulated devices compute on host RAM, so host memory is device memory at the same
// address once the runtime knows about it: registered ranges and managed memory are
// accepted wherever device memory is, and as host memory too (either side of a copy).

/// Registers [ptr, ptr + size) of host memory (plain or pinned; page-aligned; no device,
/// managed or already registered memory) for `device`. With `mapped` the range is
/// device memory too for every call; without it, it is only page-locked host memory.
/// The caller keeps the memory mapped until hostUnregister.
Status hostRegister(void* ptr, std::size_t size, bool mapped, int device);
/// Ends the registration that starts at ptr.
Status hostUnregister(void* ptr);
struct HostRegistration {
  void* base = nullptr;
  std::size_t size = 0;
  bool mapped = false;
  int device = -1;
};
/// The registration containing ptr; kInvalidPointer when there is none.
Status hostRegistration(const void* ptr, HostRegistration* out);
/// `size` (> 0) bytes, rounded up to 2 MiB, of managed memory: host memory and device
/// memory of every device at once, from a pool of its own (64 GiB of addresses, not
/// counted against any device). Freed by deviceFree.
Status managedMalloc(void** ptr, std::size_t size);

// ---- Streams ----------------------------------------------------------------------

/// Creates a stream on the current device. Several streams of one device run
/// concurrently.
Status streamCreate(Stream** stream);
/// Waits for the stream's work, then destroys it. The default stream cannot be
/// destroyed.
Status streamDestroy(Stream* stream);
/// Destroys a stream without waiting (aclrtDestroyStreamForce): its handle dies at
/// once; the work queued on it still runs, except that its waits end aborted (so it
/// cannot hang: what is queued behind a wait is dropped). The device's reset waits
/// for that work.
Status streamDestroyForce(Stream* stream);
/// Waits until all work queued so far has run; returns the stream's sticky error
/// if a task failed, kTimeout if timeoutMs (>= 0) passed first.
Status streamSynchronize(Stream* stream, long timeoutMs = -1);
/// ok when idle, kNotReady when work is pending, or the sticky error.
Status streamQuery(Stream* stream);
/// Clears a stream's sticky error (tasks skipped because of it stay skipped).
Status streamClearError(Stream* stream);
/// The device a stream belongs to.
Status streamGetDevice(Stream* stream, int* device);
/// What a stream does after a task failed: skip its later tasks (the default; they
/// fail with the first error at synchronize) or, with `continueAfterError`, run them
/// (the error is reported once: the synchronize that returns it clears it). For
/// tasks queued from now on.
Status streamSetFailureMode(Stream* stream, bool continueAfterError);
/// How many tasks were queued on the stream so far and how many of them ran. The
/// work queued before a call is done once completed reaches the enqueued count
/// that call returned. Work finishes in the order it was queued.
Status streamProgress(Stream* stream, std::uint64_t* enqueued, std::uint64_t* completed);

/// A kernel: any host callable, run on the stream's worker with the stream's
/// device current. A non-ok Status (or an exception) fails the stream.
using Kernel = std::function<Status(Stream* stream)>;
Status launchKernel(Stream* stream, Kernel kernel);
/// Where a task landed: its stream (as streamDescribe names it) and its place there.
struct TaskPlace {
  int device = -1;
  int streamId = -1;
  std::uint64_t taskIndex = 0;  ///< 0, 1, 2, ... in the stream's queueing order
};
/// launchKernel that also says where the kernel landed, read as it was queued: a
/// caller learns whether another task came between two of its own.
Status launchKernel(Stream* stream, Kernel kernel, TaskPlace* place);

/// One block of an AscendC-style kernel, given its index in [0, blocks).
using BlockFunction = std::function<Status(std::uint32_t block)>;
/// Queues a kernel of `blocks` blocks: once the work queued before it is done, the
/// device's AI Cores (a pool of COHORT_AICORE_THREADS threads) run `block` for every
/// index, at most `cores` at once. A block that fails (or throws) fails the stream
/// and blocks not yet started never start, as an AI Core exception ends a kernel. So
/// does a block that faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL in the block's thread):
/// kKernelFault naming `name`, the block, the signal and the address; the block's
/// own cleanup is skipped. Faults elsewhere go to the handler there was before.
Status launchBlocks(Stream* stream, std::uint32_t blocks, std::uint32_t cores,
                    BlockFunction block, std::string name = "kernel");

enum class CallbackMode {
  kBlocking,     ///< later tasks of the stream wait for the callback
  kNonBlocking,  ///< the callback runs on a helper thread; the stream goes on
};
/// Runs `callback` on the host once the work queued before it is done.
Status launchCallback(Stream* stream, std::function<void()> callback, CallbackMode mode);

// ---- Stream control -----------------------------------------------------------------

struct StreamDescription {
  int device = -1;
  int id = -1;  ///< unique among the streams a device has had in this process
  bool isDefault = false;
  bool continueAfterError = false;  ///< streamSetFailureMode
  bool stopped = false;             ///< streamStop, until streamAbort
  bool failed = false;  ///< a task failed (its error not cleared by a synchronize yet)
  std::uint64_t enqueued = 0;   ///< as streamProgress() reads them, at the same moment
  std::uint64_t completed = 0;
};
/// Describes a stream (null: the current device's default stream).
Status streamDescribe(Stream* stream, StreamDescription* description);

/// Drops every task queued on the stream and not started yet (event records among
/// them still run, so their events complete and carry the abort), ends a wait task
/// running now (launchWait, event waits; other tasks are let finish), and makes host
/// threads synchronizing the stream meanwhile return kAborted; tasks queued during the
/// call are dropped too. Returns once the worker has passed them all (kTimeout if a
/// running task outlasts taskWaitTimeoutMs()); the stream then has no error and runs
/// new work again, except that a launchBlocks kernel that was running leaves the
/// kKernelFault a killed kernel would (its blocks ran to their end). Not from one of
/// the stream's own tasks (kInvalidUsage).
Status streamAbort(Stream* stream);
/// Ends a wait task running now and stops the stream: it fails with kAborted (what
/// synchronize returns at once) and runs nothing more; what is queued stays queued
/// until streamAbort or streamDestroy drops it. Not for default streams.
Status streamStop(Stream* stream);

/// Hears of every stream of every device: with created = true once it exists (the
/// default stream when its device comes up), with false before it is destroyed
/// (streamDestroy, or the last resetDevice of its device). Called on the thread that
/// creates or destroys, holding no lock of the runtime. One observer; null removes it.
using StreamObserver = std::function<void(Stream* stream, bool created)>;
void setStreamObserver(StreamObserver observer);

/// A task that waits on the stream until a condition holds: memory another stream,
/// thread or process writes. `ready(sleepUs)` says whether the condition holds; when it
/// does not, it may block up to sleepUs microseconds (on a futex its writer wakes)
/// before answering, and should sleep that long if nothing can wake it (the runtime
/// spins first, then passes growing budgets up to 20 ms). Once it holds, `then` (if
/// set) gives the task's result. Ends with kTimeout after timeoutMs (< 0: the task wait
/// timeout, taskWaitTimeoutMs(); 0: never) and with kAborted on streamAbort /
/// streamStop; `what` names the wait in those messages.
struct WaitTask {
  std::function<bool(long sleepUs)> ready;
  std::function<Status()> then;
  std::string what;
  long timeoutMs = -1;
};
Status launchWait(Stream* stream, WaitTask task);

// ---- Events -----------------------------------------------------------------------

Status eventCreate(Event** event);
/// Destroys the handle; work already queued that records or waits on it still
/// completes correctly.
Status eventDestroy(Event* event);
/// Marks the current end of `stream`; re-recording moves the mark.
Status eventRecord(Event* event, Stream* stream);
/// Makes `stream` wait until the event's latest record (at the time of this call)
/// has completed. Works across streams and devices. A never-recorded event is
/// complete. If the recording stream had failed, the waiting stream fails too.
Status streamWaitEvent(Stream* stream, Event* event);
/// ok if complete (or never recorded), kNotReady otherwise.
Status eventQuery(Event* event);
/// Waits for the event's latest record (timeoutMs < 0: forever).
Status eventSynchronize(Event* event, long timeoutMs = -1);
/// Milliseconds between two completed records.
Status eventElapsedTime(float* ms, Event* start, Event* end);
/// Forgets the event's record: it reads complete again.
Status eventReset(Event* event);

/// Like streamWaitEvent, but the wait is a task of its own that fails the stream with
/// kTimeout if the event's record has not completed after timeoutMs (<= 0: the event
/// wait timeout, eventWaitTimeoutMs()). streamAbort ends it.
Status streamWaitEventFor(Stream* stream, Event* event, long timeoutMs);

struct EventDescription {
  std::uint32_t id = 0;      ///< unique among the events of this process
  bool ipc = false;          ///< made by eventCreateIpc or eventOpenIpc
  bool recorded = false;     ///< recorded since creation or the last reset
  bool completed = false;    ///< its latest record has run (true when never recorded)
  bool waitsPending = false; ///< a stream waits for it and its latest record has not run
  /// When its latest record ran, in microseconds of the monotonic clock (the time since
  /// boot, the same in every process); 0 unless completed or for IPC events.
  std::uint64_t timestampUs = 0;
};
Status eventDescribe(Event* event, EventDescription* description);
/// Events that exist in this process.
Status eventCount(std::size_t* live);

/// An IPC event: its records and waits go through memory shared with the other
/// processes of the node that open its handle, so a record in one process releases
/// waits and synchronizations in all of them. Records from any of them count; the
/// handle stays valid while the creator keeps the event. Elapsed times and resets are
/// not supported for IPC events (kNotSupported).
Status eventCreateIpc(Event** event);
/// The handle of an IPC event (created or opened here); kInvalidArgument for others.
Status eventIpcHandle(Event* event, MemHandle* handle);
/// Opens an IPC event another process (or this one) created. Destroy it with
/// eventDestroy; the creator's event is unaffected.
Status eventOpenIpc(const MemHandle& handle, Event** event);

// ---- Device control and task reports (what the ACL layer builds on) -----------------

/// Tears `device` down whatever its reference count, as the last resetDevice would
/// (waits for its streams, destroys them, releases its memory); the next setDevice
/// brings up a fresh device. kInvalidDevice if the device is not set.
Status resetDeviceForce(int device);
/// streamAbort of every stream of `device`: each drops the tasks it has not started
/// and ends a running wait. Returns the first error (kTimeout: a running task outlasted
/// COHORT_EXEC_TIMEOUT).
Status deviceAbort(int device);

/// The handle of the current device's default stream (what a null Stream* stands for):
/// valid for every stream call; streamDestroy refuses it.
Status defaultStream(Stream** out);

/// A stream task that failed: where, which one, who queued it and why.
struct TaskFailure {
  int device = -1;
  int streamId = -1;             ///< as streamDescribe reports it
  std::uint64_t taskIndex = 0;   ///< position in its stream: 0, 1, 2, ... in queueing order
  std::uint32_t threadId = 0;    ///< Linux thread id of the thread that queued the task
  Status status;
};
/// Called for every task that fails, on the thread that ran it (the stream's worker),
/// before synchronize can see the error. It must not wait for streams. One observer; null removes it. Thread-safe.
using TaskFailureObserver = std::function<void(const TaskFailure& failure)>;
void setTaskFailureObserver(TaskFailureObserver observer);
/// The position of the last task the calling thread queued on a stream other than a
/// default stream; kInvalidUsage if it queued none.
Status threadLastTask(std::uint64_t* taskIndex);

/// How long a task may wait (event waits, and what reads taskWaitTimeoutMs()):
/// overrides COHORT_EXEC_TIMEOUT from now on; 0 = never, < 0 = COHORT_EXEC_TIMEOUT again.
void setTaskWaitTimeout(long timeoutMs);
/// The same for event waits only (streamWaitEvent), taking precedence; < 0 = unset.
void setEventWaitTimeout(long timeoutMs);
/// The limits that apply now, in ms (0 = never).
long taskWaitTimeoutMs();
long eventWaitTimeoutMs();

}  // namespace cohort::runtime
