// How a call launches, chosen in one place (Communicator::Impl::chooseLaunch):
//   worker  the communicator's stream runs it on its worker thread, after the
//           caller's earlier work (an event when there is any), and the caller's
//           stream waits for it (an event): the general case;
//   inline  the calling thread runs it now, when it would run at once anyway
//           (runsInline below): no thread hand-off, the result is there on return;
//   posted  a mesh call small enough to stage: the calling thread posts it and goes
//           on, and the caller's stream completes it when synchronized (postOp).
// COHORT_LAUNCH=worker takes the worker for every call, =inline never posts. A
// group over several communicators (groupEnd) takes the worker for each call.
#include "collective/comm_impl.h"

namespace cohort {

using collective::Coll;
using collective::OpDesc;

auto Communicator::Impl::chooseLaunch(const OpDesc& op, runtime::Stream* stream, bool repeat,
                                      std::uint64_t enqueued, std::uint64_t completed,
                                      bool groupOfSeveral, collective::Algo* algo) -> LaunchMode {
  // A call that ran on this thread would wait there for peers that this thread
  // has yet to launch.
  if (groupOfSeveral) return LaunchMode::kWorker;
  if (!runsInline(op, stream, repeat, enqueued, completed, algo)) return LaunchMode::kWorker;
  // Posting needs a stream to complete the call, and the mesh's staged path.
  const bool posts = stream != nullptr && *algo == collective::Algo::kMesh && mesh_->posts(op) &&
                     launch_ != Launch::kInline;
  return posts ? LaunchMode::kPosted : LaunchMode::kInline;
}

// A small operation runs on the calling thread when it would run at once
// anyway: the caller's stream holds nothing unfinished but our own completed
// operations, the communicator's stream is idle, the caller is on our device,
// and every peer is another process or has a thread of its own
// (CommOptions::threadPerRank; a thread driving several ranks must not block in
// one of them): the mesh's staged paths or a direct mesh operation of
// at most Tuning::inlineMeshBytes in and out, or a schedule of at most
// Tuning::inlineScheduleBytes (on a crowded node both are larger: a hand-off
// to the worker is a wait for a processor).
bool Communicator::Impl::runsInline(const OpDesc& op, runtime::Stream* stream, bool repeat,
                                    std::uint64_t enqueued, std::uint64_t completed,
                                    collective::Algo* algo) {
  if (!inlineSmall_ || op.coll == Coll::kSendRecv || launch_ == Launch::kWorker) return false;
  if (!(repeat && checked_.ownStreamLive)) {
    if (!runtime::streamCounters(worker_.stream, &checked_.own).ok()) return false;
    checked_.ownStreamLive = repeat;
  }
  std::uint64_t commEnqueued = 0, commCompleted = 0;
  checked_.own.progress(&commEnqueued, &commCompleted);
  // The record of worker_.after wakes the caller before its stream counts it done: a
  // caller that saw our last queued operation end may find that record the
  // only task left. Counting it as busy queued every later call too, for good
  // (4 ranks over tcp: every call handed to the worker, 27 context switches
  // per call instead of 10).
  const bool onlyOurRecordLeft = commCompleted + 1 == commEnqueued &&
                                 commEnqueued == worker_.afterRecordedAt &&
                                 runtime::eventQuery(worker_.after).ok();
  if (commCompleted != commEnqueued && !onlyOurRecordLeft) return false;
  // Our last operation's wait is the only thing left on the caller's stream,
  // and it is satisfied since our stream is idle.
  if (completed != enqueued &&
      !(stream == worker_.lastUserStream && enqueued == worker_.lastUserEnqueued)) {
    return false;
  }
  if (runtime::currentDeviceId() != device) return false;
  if (repeat && checked_.algo != collective::Algo::kAuto) {
    *algo = checked_.algo;
    return checked_.small;
  }
  if (!collective::selectAlgorithm(op, topo_, overrides_, algo).ok()) return false;
  bool small = false;
  if (*algo == collective::Algo::kMesh) {
    small = mesh_ && (mesh_->staged(op) ||
                      op.inputBytes(size) + op.outputBytes(size) <= topo_.tuning.inlineMeshBytes);
  } else {
    // A schedule over the connections: latency-bound up to a few messages' worth.
    small = *algo != collective::Algo::kHierarchical &&
            op.inputBytes(size) + op.outputBytes(size) <= topo_.tuning.inlineScheduleBytes;
  }
  if (repeat) {
    checked_.algo = *algo;
    checked_.small = small;
  }
  return small;
}

}  // namespace cohort
