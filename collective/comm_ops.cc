// The public collective calls: validate, then enqueue on the caller's stream.
//
// The launch, and the contract it keeps (HCCL's and NCCL's; ../shared/DESIGN.md):
// a collective call only queues work and returns; it never waits for another
// rank, and neither does any later call that queues work on a stream. A rank
// may meet the others on the host (MPI, a store) right after the call, and may
// drive several communicators in any order on different streams.
//
// So there is one way a call launches: the operation is a task of the caller's
// stream, as HCCL's tasks (and NCCL's kernels) are, and that stream's worker
// runs it in order with the caller's other work. Two communicators driven on
// two streams have two workers, so neither waits for the other. A
// communicator's operations run one at a time, in call order: a call on
// another stream than the last call's first waits for that stream (an event
// recorded there at the call). Only synchronize, an event's synchronize and
// destroy (finalize) wait for the operation's end.
//
// One fast path keeps the contract because it never waits: a call the mesh
// posts (small ones) is "swept" when the caller's stream holds nothing but this
// communicator's tasks of swept calls (or nothing at all). The calling thread
// then makes what progress waits for nobody: it posts the queued swept calls
// whose ring slots are free and then its own (copying each input into its
// slot), and completes every call all peers have posted, concluding it. What
// is left is the stream's: the call gets a task, or is attached behind the
// last task of swept calls if that has not ended, and that task (sweep())
// posts and completes what the caller did not, waiting for the peers like any
// task. Its input is final when it is queued (nothing of the program's runs
// before it on that stream but those tasks), so posting it later reads what
// posting it at once would have. With two ranks calling in step, each caller
// finishes the other's last call at its next one and the stream's worker,
// which shares its processor, hardly runs. A call's task is a host kernel, so
// a synchronize of the stream (which may wait for peers: that is its purpose)
// runs the tasks the worker has not taken yet on its own thread
// (runtime/stream.h) instead of waiting for the worker to be scheduled. Locks
// the caller takes are never held across a wait for a peer (the mesh's ring
// lock is only tried).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "cohort/runtime_capture.h"
#include "collective/comm_impl.h"
#include "collective/datatype.h"
#include "common/error.h"
#include "common/log.h"
#include "common/trace.h"

namespace cohort {

using collective::Coll;
using collective::OpDesc;

namespace {

struct Pending {
  Communicator::Impl* comm;
  OpDesc op;
  runtime::Stream* stream;
};
thread_local int tGroupDepth = 0;
thread_local std::vector<Pending> tGroup;

// The buffers this thread's last calls passed the check with: a program calls
// with the same few buffers again and again, and the check's two lookups in the
// runtime, each under a lock, took a quarter of a small call's time (2 ranks,
// 1 KiB; collective/TUNING.md). An entry holds while the runtime's memory
// generation is the one read before its check. Per thread: no lock.
struct CheckedBuffer {
  const void* p = nullptr;
  std::size_t bytes = 0;
  std::uint64_t generation = 0;  // never 0 in the runtime: a zeroed entry never matches
  int device = -1;
  bool writes = false;
};
constexpr std::size_t kCheckedBuffers = 8;
thread_local std::array<CheckedBuffer, kCheckedBuffers> tChecked;
thread_local std::size_t tCheckedNext = 0;

// A buffer the operation reads (or, with `writes`, writes) must hold `bytes`
// (when the runtime knows its allocation) and must not be memory of another
// device.
Status checkBuffer(const char* role, const void* p, std::size_t bytes, bool writes, int device,
                   const OpDesc& op) {
  if (bytes == 0) return Status::Ok();
  if (p == nullptr) {
    return makeError(ErrorCode::kInvalidArgument, "{}: {} is null", op.describe(), role);
  }
  const std::uint64_t generation = runtime::memoryGeneration();  // before the lookups
  for (const CheckedBuffer& c : tChecked) {
    if (c.p == p && c.generation == generation && c.device == device && bytes <= c.bytes &&
        (c.writes || !writes)) {
      return Status::Ok();
    }
  }
  runtime::PointerAttributes a;
  COHORT_RETURN_IF_ERROR(runtime::pointerGetAttributes(p, &a));
  // A mapping made without access (aclrtMemMapNoAccess) would fault in the copy.
  Status access = runtime::vmmCheckAccess(p, bytes, writes, role);
  if (!access.ok()) return makeError(access.code(), "{}: {}", op.describe(), access.message());
  if (a.isDevice && a.device >= 0 && a.device != device) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: {} {} is memory of device {}, but the communicator runs on device {}",
                     op.describe(), role, p, a.device, device);
  }
  // Memory of the runtime's (not the program's plain host memory) outside every
  // live allocation: freed, or never allocated.
  const bool known = a.isDevice || a.isPinnedHost || a.isManaged || a.isRegistered;
  if (known && a.allocationBase == nullptr) {
    return makeError(ErrorCode::kInvalidPointer,
                     "{}: {} {} is not in a live allocation (freed, or never allocated)",
                     op.describe(), role, p);
  }
  if (a.allocationBase != nullptr) {
    const std::size_t left = a.allocationSize - static_cast<std::size_t>(
        static_cast<const char*>(p) - static_cast<const char*>(a.allocationBase));
    if (bytes > left) {
      return makeError(ErrorCode::kSizeOverflow,
                       "{}: {} {} holds {} bytes, the operation needs {}", op.describe(), role, p,
                       left, bytes);
    }
  }
  tChecked[tCheckedNext++ % kCheckedBuffers] = CheckedBuffer{p, bytes, generation, device, writes};
  return Status::Ok();
}

Status checkInput(const char* role, const void* p, std::size_t bytes, int device,
                  const OpDesc& op) {
  return checkBuffer(role, p, bytes, /*writes=*/false, device, op);
}
Status checkOutput(const char* role, const void* p, std::size_t bytes, int device,
                   const OpDesc& op) {
  return checkBuffer(role, p, bytes, /*writes=*/true, device, op);
}

// The bytes a V call's buffer spans: up to the furthest of displs[j] + counts[j]
// elements of `elementSize` bytes.
Status vExtent(const char* role, const std::vector<std::size_t>& counts,
               const std::vector<std::size_t>& displs, std::size_t elementSize, const OpDesc& op,
               std::size_t* bytes) {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  std::size_t end = 0;
  for (std::size_t j = 0; j < counts.size() && j < displs.size(); ++j) {
    if (counts[j] == 0) continue;
    if (displs[j] > kMax / elementSize - counts[j]) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: {} displacement {} + count {} of rank {} overflows", op.describe(),
                       role, displs[j], counts[j], j);
    }
    end = std::max(end, displs[j] + counts[j]);
  }
  *bytes = end * elementSize;
  return Status::Ok();
}

}  // namespace

Status Communicator::Impl::validate(const OpDesc& op,
                                    const runtime::StreamDescription& stream) const {
  if (!collective::validType(op.type)) {
    return makeError(ErrorCode::kInvalidArgument, "{}: unknown data type {}", collName(op.coll),
                     static_cast<int>(op.type));
  }
  if (!collective::validOp(op.op) ||
      (op.op == ReduceOp::kAvg && !collective::isFloat(op.type))) {
    return makeError(ErrorCode::kInvalidArgument, "{}: reduce op {} is not valid for {}",
                     collName(op.coll), static_cast<int>(op.op), dataTypeName(op.type));
  }
  if (op.root < 0 || op.root >= size) {
    return makeError(ErrorCode::kInvalidArgument, "{}: root {} is not a rank of this "
                     "communicator (size {})", collName(op.coll), op.root, size);
  }
  const std::size_t e = dataTypeSize(op.type);
  if (op.count > std::numeric_limits<std::size_t>::max() / e / static_cast<std::size_t>(size)) {
    return makeError(ErrorCode::kInvalidArgument, "{}: count {} overflows", collName(op.coll),
                     op.count);
  }
  if (stream.device != device) {
    return makeError(ErrorCode::kInvalidArgument, "{}: the stream belongs to device {}, the "
                     "communicator to device {}", collName(op.coll), stream.device, device);
  }
  const std::size_t b = op.count * e, n = static_cast<std::size_t>(size);
  const bool isRoot = rank == op.root;
  switch (op.coll) {
    case Coll::kAllReduce:
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, b, device, op));
      return checkOutput("recvbuf", op.output, b, device, op);
    case Coll::kAllGather:
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, b, device, op));
      return checkOutput("recvbuf", op.output, b * n, device, op);
    case Coll::kReduceScatter:
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, b * n, device, op));
      return checkOutput("recvbuf", op.output, b, device, op);
    case Coll::kBroadcast:
      return checkOutput("buffer", op.output, b, device, op);
    case Coll::kReduce:
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, b, device, op));
      return isRoot ? checkOutput("recvbuf", op.output, b, device, op) : Status::Ok();
    case Coll::kGather:
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, b, device, op));
      return isRoot ? checkOutput("recvbuf", op.output, b * n, device, op) : Status::Ok();
    case Coll::kScatter:
      COHORT_RETURN_IF_ERROR(isRoot ? checkInput("sendbuf", op.input, b * n, device, op)
                                    : Status::Ok());
      return checkOutput("recvbuf", op.output, b, device, op);
    case Coll::kAllToAll:
      if (op.input == op.output && b > 0) {
        return makeError(ErrorCode::kInvalidArgument, "{}: in-place alltoall is not supported "
                         "(sendbuf == recvbuf)", op.describe());
      }
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, b * n, device, op));
      return checkOutput("recvbuf", op.output, b * n, device, op);
    case Coll::kAllGatherV: {
      std::size_t recv = 0;
      COHORT_RETURN_IF_ERROR(vExtent("recvbuf", op.counts, op.displs, e, op, &recv));
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, b, device, op));
      return checkOutput("recvbuf", op.output, recv, device, op);
    }
    case Coll::kReduceScatterV: {
      std::size_t send = 0;
      COHORT_RETURN_IF_ERROR(vExtent("sendbuf", op.counts, op.displs, e, op, &send));
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, send, device, op));
      return checkOutput("recvbuf", op.output, b, device, op);
    }
    case Coll::kAllToAllV: {
      std::size_t send = 0, recv = 0;
      COHORT_RETURN_IF_ERROR(vExtent("sendbuf", op.counts, op.displs, e, op, &send));
      COHORT_RETURN_IF_ERROR(vExtent("recvbuf", op.counts2, op.displs2, e, op, &recv));
      COHORT_RETURN_IF_ERROR(checkInput("sendbuf", op.input, send, device, op));
      return checkOutput("recvbuf", op.output, recv, device, op);
    }
    case Coll::kSendRecv:
      for (const SendRecvItem& it : op.items) {
        if (it.count > std::numeric_limits<std::size_t>::max() / dataTypeSize(it.type)) {
          return makeError(ErrorCode::kInvalidArgument, "{}: count {} overflows", op.describe(),
                           it.count);
        }
        const std::size_t bytes = it.count * dataTypeSize(it.type);
        COHORT_RETURN_IF_ERROR(it.isSend ? checkInput("send buffer", it.buffer, bytes, device, op)
                                         : checkOutput("recv buffer", it.buffer, bytes, device, op));
      }
      return Status::Ok();
    default:
      return Status::Ok();
  }
}

Status Communicator::Impl::usable(const OpDesc& op) const {
  if (aborted_.load()) {
    return makeError(ErrorCode::kAborted, "{}: the communicator was aborted", collName(op.coll));
  }
  const Status failed = asyncError();
  if (!failed.ok()) {
    return makeError(failed.code(), "{}: the communicator failed earlier: {}", collName(op.coll),
                     failed.message());
  }
  return Status::Ok();
}

Status Communicator::Impl::admit(const OpDesc& op, runtime::Stream* stream,
                                 runtime::StreamDescription* described) const {
  COHORT_RETURN_IF_ERROR(usable(op));
  COHORT_RETURN_IF_ERROR(runtime::streamDescribe(stream, described));
  return validate(op, *described);
}

Status Communicator::Impl::enqueue(OpDesc op, runtime::Stream* stream) {
  log::RankScope logAs(rank);
  trace::Span span("enqueue", collName(op.coll));
  runtime::StreamDescription described;
  COHORT_RETURN_IF_ERROR(admit(op, stream, &described));
  if (tGroupDepth > 0) {  // groupEnd() enqueues it again, fused with its batch
    tGroup.push_back(Pending{this, std::move(op), stream});
    return Status::Ok();
  }
  if (runtime::captureActive()) {
    runtime::CaptureDescription capture;
    if (runtime::captureDescribe(stream, &capture).ok() &&
        capture.status != runtime::CaptureStatus::kNone) {
      return recordCaptured(std::move(op), stream);
    }
  }
  return launchOp(std::move(op), stream, described);
}

// A captured call is issued by every launch of its model, on the launching
// thread, as if the program called it there: numbered in this communicator's
// sequence and run at its place in the lane the model runs it on. Ranks that
// captured different calls thus meet the mismatch error at the first launch, as
// calls made directly would. Like any launch it never waits.
Status Communicator::Impl::recordCaptured(OpDesc op, runtime::Stream* stream) {
  if (captureLink_ == nullptr) {
    captureLink_ = std::make_shared<CaptureLink>();
    captureLink_->impl = this;
  }
  const char* kind = collName(op.coll);
  return runtime::captureRecordIssuer(
      stream, kind, [link = captureLink_, op = std::move(op)](runtime::LaunchContext& launch) {
        std::lock_guard<std::mutex> lock(link->mu);
        if (link->impl == nullptr) {
          return makeError(ErrorCode::kInvalidUsage,
                           "{}: the model recorded it on a communicator destroyed since",
                           op.describe());
        }
        return link->impl->launchCaptured(op, launch);
      });
}

// The launch path (launchOp) for a model's launch, whose work on a stream is one
// task per lane queued at the launch's end: the call runs inside it, where it was
// captured, and the order with this communicator's previous call (the chain event)
// is recorded into the launch too. Its arguments were validated at the capture, and
// its stream is the model's: only what may have changed since is checked. No fast
// path: it never runs on the caller.
Status Communicator::Impl::launchCaptured(OpDesc op, runtime::LaunchContext& launch) {
  log::RankScope logAs(rank);
  COHORT_RETURN_IF_ERROR(usable(op));
  runtime::Stream* stream = launch.stream();
  if (launch.device() != device) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: the model is launched on a stream of device {}, the communicator is on "
                     "device {}",
                     op.describe(), launch.device(), device);
  }
  op.seq = op.coll == Coll::kSendRecv ? 0 : ++seq_;
  // The history records it when it starts (a launch issues many calls at once: it
  // spares each the record of its queueing, half of what issuing it costs).
  const std::uint64_t historyId = history_->reserve();
  if (stream != launch_.lastStream && lastStreamLives()) {
    Status ordered = launch.recordEvent(launch_.chain, launch_.lastStream);
    if (ordered.ok()) ordered = launch.waitEvent(launch_.chain);
    if (!ordered.ok()) {
      history_->finished(historyId, ordered);
      return ordered;
    }
  }
  const std::uint64_t ticket = ++launch_.tickets;
  {
    std::lock_guard<std::mutex> lock(queuedMu_);
    queued_.push_back(Queued{ticket, std::move(op), historyId});
    ++unswept_;
    sweepTicket_ = 0;
  }
  launch.run([this, ticket](runtime::Stream*) {
    Status s = runQueued(ticket);
    if (!s.ok()) setAsyncError(s);
    return s;
  });
  // Where in its stream the task lands is not known: nothing follows it.
  launch_.lastStream = stream;
  launch_.last = runtime::TaskPlace{device, launch.streamId(), 0};
  launch_.lastPlaced = false;
  launch_.onlyOurTasks = false;
  return Status::Ok();
}

Status Communicator::Impl::launchOp(OpDesc op, runtime::Stream* stream,
                                    const runtime::StreamDescription& described) {
  // Point-to-point calls involve two ranks only: they do not advance the
  // collective sequence that every rank must agree on.
  op.seq = op.coll == Coll::kSendRecv ? 0 : ++seq_;
  if (stream == nullptr) COHORT_RETURN_IF_ERROR(runtime::defaultStream(&stream));
  const std::uint64_t historyId = history_->queued(op);
  Queued q{0, std::move(op), historyId};
  const double traceStart = trace::enabled() ? trace::nowUs() : 0;
  bool chained = false, lastPending = false;
  if (sweepable(q, stream, described, &chained, &lastPending)) {
    q.swept = true;
    if (progressFromCaller(q)) {
      // Done before the call returns: no task. Behind calls whose task is still
      // queued, that task stays the last; otherwise no later call follows one.
      if (!chained) {
        launch_.lastStream = stream;
        launch_.last = runtime::TaskPlace{};
        launch_.onlyOurTasks = false;
      }
      if (trace::enabled()) {  // the span a stream's worker would have recorded
        trace::complete("collective", q.op.describe(), traceStart,
                        fmt::format("\"algorithm\":\"{} (posted, on the caller)\"",
                                    trace::escape(sweptChoice(q.op))));
      }
      return concludeOp(q.op, q.historyId, Status::Ok(), q.deadline);
    }
    // A peer is missing (or its slot is not free yet, or a failure to report): a
    // stream's task sweeps it, the last one queued if it still takes calls.
    if (chained && lastPending) {
      std::lock_guard<std::mutex> lock(queuedMu_);
      if (sweepTicket_ != 0) {
        q.ticket = ++launch_.tickets;
        q.attached = true;
        queued_.push_back(std::move(q));
        return Status::Ok();
      }
    }
  }
  // On the last call's stream no event is needed: it holds the last call, or it
  // is a new stream at a destroyed one's address, and a destroyed stream drained.
  // (A call posted above found nothing of this communicator queued: no event.)
  if (!q.posted && stream != launch_.lastStream && lastStreamLives() &&
      runtime::eventRecord(launch_.chain, launch_.lastStream).ok()) {
    Status waits = runtime::streamWaitEvent(stream, launch_.chain);
    if (!waits.ok()) {
      history_->finished(historyId, waits);  // never queued
      return waits;
    }
  }
  const std::uint64_t ticket = ++launch_.tickets;
  q.ticket = ticket;
  const bool posted = q.posted;
  const bool swept = q.swept;
  {
    std::lock_guard<std::mutex> lock(queuedMu_);
    // A task of swept calls takes those attached behind it, until another call's
    // task is queued behind it.
    sweepTicket_ = swept ? ticket : 0;
    if (!swept) ++unswept_;
    queued_.push_back(std::move(q));
  }
  runtime::TaskPlace place;
  Status launched = runtime::launchKernel(stream, [this, ticket](runtime::Stream*) {
    Status s = runQueued(ticket);
    if (!s.ok()) setAsyncError(s);
    return s;
  }, &place);
  if (!launched.ok()) {
    std::uint64_t call = 0;
    {
      std::lock_guard<std::mutex> lock(queuedMu_);
      call = queued_.back().call;
      queued_.pop_back();  // no task: nothing else removes it
      if (sweepTicket_ == ticket) sweepTicket_ = 0;
      if (!swept) --unswept_;
    }
    --launch_.tickets;  // queued calls' tickets run on without gaps (comm_queue.cc)
    if (posted) (void)mesh_->complete(call, true, aborted_);  // or the members' rings stop
    history_->finished(historyId, launched);
    return launched;
  }
  // Right behind the last call's task on its stream (nothing of the program
  // runs between them), the run-ahead may post this call early.
  const runtime::TaskPlace& last = launch_.last;
  const bool follows = launch_.lastStream != nullptr && launch_.lastPlaced &&
                       place.device == last.device && place.streamId == last.streamId &&
                       place.taskIndex == last.taskIndex + 1;
  if (follows) {
    std::lock_guard<std::mutex> lock(queuedMu_);
    if (!queued_.empty() && queued_.back().ticket == ticket) queued_.back().follows = true;
  }
  // The stream holds only this communicator's tasks: from a call posted on it
  // idle, for as long as each task lands right behind the last.
  launch_.onlyOurTasks = (swept && !chained) || (launch_.onlyOurTasks && follows);
  launch_.lastStream = stream;
  launch_.last = place;
  launch_.lastPlaced = true;
  return Status::Ok();
}

Status Communicator::groupStart() {
  ++tGroupDepth;
  return Status::Ok();
}

Status Communicator::groupEnd() {
  if (tGroupDepth == 0) {
    return recordError(Status(ErrorCode::kInvalidUsage, "groupEnd without groupStart"));
  }
  if (--tGroupDepth > 0) return Status::Ok();
  std::vector<Pending> pending;
  pending.swap(tGroup);
  // Sends and receives of one communicator and stream fuse into one batch, so
  // they progress together; other operations keep their order.
  for (std::size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    if (p.op.coll == Coll::kSendRecv) {
      for (std::size_t j = i + 1; j < pending.size(); ++j) {
        Pending& q = pending[j];
        if (q.comm == p.comm && q.stream == p.stream && q.op.coll == Coll::kSendRecv) {
          p.op.items.insert(p.op.items.end(), q.op.items.begin(), q.op.items.end());
          q.comm = nullptr;
        }
      }
    }
    if (p.comm != nullptr) COHORT_RETURN_IF_ERROR(recordError(p.comm->enqueue(std::move(p.op), p.stream)));
  }
  return Status::Ok();
}

}  // namespace cohort
