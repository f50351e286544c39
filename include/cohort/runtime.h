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
  int referenceCount = 0; ///< outstanding setDevice calls
  int streamCount = 0;
};
Status getDeviceInfo(int device, DeviceInfo* info);

/// Free and total device memory of the current device.
Status getMemInfo(std::size_t* freeBytes, std::size_t* totalBytes);

/// Waits for every stream of the current device (timeoutMs < 0: forever).
Status synchronizeDevice(long timeoutMs = -1);

// ---- Memory ---------------------------------------------------------------------

/// Allocates `size` (> 0) bytes of device memory on the current device, 64-byte
/// aligned (4 KiB from 64 KiB up). Memory is pooled: freeing returns it to the
/// device's pool, so reallocating the same sizes takes no page faults.
Status deviceMalloc(void** ptr, std::size_t size);
/// Frees device memory (immediately; no implicit synchronisation).
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
/// (kInvalidPointer).
Status memcpy(void* dst, std::size_t destMax, const void* src, std::size_t count,
              MemcpyKind kind);
Status memcpyAsync(void* dst, std::size_t destMax, const void* src, std::size_t count,
                   MemcpyKind kind, Stream* stream);
/// Sets `count` bytes of device (or pinned host) memory to `value`.
Status memset(void* dst, std::size_t destMax, int value, std::size_t count);
Status memsetAsync(void* dst, std::size_t destMax, int value, std::size_t count,
                   Stream* stream);

struct PointerAttributes {
  bool isDevice = false;   ///< device memory (own or imported)
  bool isPinnedHost = false;
  int device = -1;         ///< owning device (logical id; -1 for host or imported)
  void* allocationBase = nullptr;
  std::size_t allocationSize = 0;
};
/// Describes any pointer; a pointer the runtime does not know is plain host memory.
Status pointerGetAttributes(const void* ptr, PointerAttributes* attributes);

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
/// Zeroed host memory in a segment of its own (not the pinned pool), exported in *handle:
/// for state that peers of this node map with memImport and may still read after its
/// owner released it. sharedFree() unmaps it here; every importer's mapping (in this
/// process too) stays valid, with the last contents, until that importer's memClose, and
/// the memory is never reused meanwhile. Thread-safe.
Status sharedAlloc(std::size_t bytes, void** ptr, MemHandle* handle);
Status sharedFree(void* ptr);

// ---- Streams ----------------------------------------------------------------------

/// Creates a stream on the current device. Several streams of one device run
/// concurrently.
Status streamCreate(Stream** stream);
/// Waits for the stream's work, then destroys it. The default stream cannot be
/// destroyed.
Status streamDestroy(Stream* stream);
/// Waits until all work queued so far has run; returns the stream's sticky error
/// if a task failed, kTimeout if timeoutMs (>= 0) passed first.
Status streamSynchronize(Stream* stream, long timeoutMs = -1);
/// ok when idle, kNotReady when work is pending, or the sticky error.
Status streamQuery(Stream* stream);
/// Clears a stream's sticky error (tasks skipped because of it stay skipped).
Status streamClearError(Stream* stream);
/// The device a stream belongs to.
Status streamGetDevice(Stream* stream, int* device);
/// How many tasks were queued on the stream so far and how many have run. Work
/// queued is done when completed reaches the enqueued count read before it.
Status streamProgress(Stream* stream, std::uint64_t* enqueued, std::uint64_t* completed);

/// Work that a host thread completes instead of the stream's worker: `finish(true)`
/// completes it, waiting as long as it must; `finish(false)` completes it if it can
/// without waiting and returns kNotReady otherwise. It is queued only while the
/// stream has nothing else unfinished (*deferred = true); then the first host
/// thread that synchronizes or queries the stream, or queues more work on it,
/// runs it there (completions in order, each once; an error fails the stream as
/// a task's would). Otherwise nothing is queued (*deferred = false). `finish`
/// must not call stream functions.
using HostCompletion = std::function<Status(bool wait)>;
Status streamDefer(Stream* stream, HostCompletion finish, bool* deferred);
/// Runs the completions streamDefer left on the stream now, on this thread;
/// Returns the first error.
Status streamCompleteDeferred(Stream* stream);
/// How many completions streamDefer left on the stream (not yet run).
Status streamDeferredCount(Stream* stream, std::size_t* count);

/// A counter that changes whenever memory is allocated or freed (device, pinned
/// host or imported), a stream is destroyed or a device reset. What a caller
/// derived from pointers and streams (a buffer that held enough bytes, a live
/// stream of some device) stays true while the counter does not change. Lock-free.
std::uint64_t resourceGeneration();

/// A kernel: any host callable, run on the stream's worker with the stream's
/// device current. A non-ok Status (or an exception) fails the stream.
using Kernel = std::function<Status(Stream* stream)>;
Status launchKernel(Stream* stream, Kernel kernel);

enum class CallbackMode {
  kBlocking,     ///< later tasks of the stream wait for the callback
  kNonBlocking,  ///< the callback runs on a helper thread; the stream goes on
};
/// Runs `callback` on the host once the work queued before it is done.
Status launchCallback(Stream* stream, std::function<void()> callback, CallbackMode mode);

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

}  // namespace cohort::runtime
