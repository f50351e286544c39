// What the runtime offers the layers built on it in this tree (collective/) and
// no program: a stream's task counters, work a host thread completes instead of
// the stream's worker, the counter that tells a caller its checks of pointers and
// streams still hold, and the calling thread's device without a lock. Not in
// cohort/runtime.h, so that the public API stays the ACL-like one (torch_cohort
// uses that one only); stream_api.cc and device.cc implement it. Thread-safe,
// like the public calls.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "cohort/runtime.h"

namespace cohort::runtime {

/// A counter that changes whenever memory is allocated or freed (device, pinned
/// host or imported), a stream is destroyed or a device reset. What a caller
/// derived from pointers and streams (a buffer that held enough bytes, a live
/// stream of some device) stays true while the counter does not change. Lock-free.
std::uint64_t resourceGeneration();

/// How many tasks were queued on the stream so far and how many have run, without
/// the deferred completions streamProgress counts too (streamDeferredCount says how
/// many of those wait).
Status streamTaskProgress(Stream* stream, std::uint64_t* enqueued, std::uint64_t* completed);

/// A stream's counters, for a caller that reads them on every call: the addresses
/// of what streamTaskProgress and streamDeferredCount report, read inline (a call
/// into this library per read is a visible share of a small collective). They
/// stay valid while the stream lives, so a caller that checked the stream under
/// the current resourceGeneration() may read them until that changes.
struct StreamCounters {
  const std::atomic<std::uint64_t>* enqueued = nullptr;
  const std::atomic<std::uint64_t>* completed = nullptr;
  const std::atomic<std::size_t>* deferred = nullptr;
  void progress(std::uint64_t* queued, std::uint64_t* done) const {
    *done = completed->load(std::memory_order_acquire);  // first: it never exceeds queued
    *queued = enqueued->load(std::memory_order_acquire);
  }
  std::size_t deferredCount() const { return deferred->load(std::memory_order_acquire); }
};
/// The counters of a stream (null: the calling thread's device's default stream),
/// after the runtime's lookup (which takes a lock).
Status streamCounters(Stream* stream, StreamCounters* out);

/// Work that a host thread completes instead of the stream's worker: `finish(true)`
/// completes it, waiting as long as it must; `finish(false)` completes it if it can
/// without waiting and returns kNotReady otherwise. It is queued only while the
/// stream has nothing else unfinished (*deferred = true); then the first host
/// thread that synchronizes or queries the stream, or queues more work on it,
/// runs it there (completions in order, each once; an error fails the stream as
/// a task's would). Otherwise nothing is queued (*deferred = false). `finish`
/// must not call stream functions. `knownLive`: the caller checked the stream
/// under the current resourceGeneration(), so it is used without the lookup.
using HostCompletion = std::function<Status(bool wait)>;
Status streamDefer(Stream* stream, HostCompletion finish, bool* deferred, bool knownLive = false);
/// Runs the completions streamDefer left on the stream now, on this thread;
/// returns the first error.
Status streamCompleteDeferred(Stream* stream);
/// How many completions streamDefer left on the stream (not yet run).
Status streamDeferredCount(Stream* stream, std::size_t* count);

/// The calling thread's current device id (-1 if none): getDevice without its lock.
int currentDeviceId();

}  // namespace cohort::runtime
