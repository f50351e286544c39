// The public collective calls: validate, then enqueue on the caller's stream.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string_view>

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
// groupEnd() is launching a group over several communicators (chooseLaunch).
thread_local bool tLaunchingSeveral = false;

// A buffer the operation reads or writes must hold `bytes` (when the runtime
// knows its allocation) and must not be memory of another device.
Status checkBuffer(const char* role, const void* p, std::size_t bytes, int device,
                   const OpDesc& op) {
  if (bytes == 0) return Status::Ok();
  if (p == nullptr) {
    return makeError(ErrorCode::kInvalidArgument, "{}: {} is null", op.describe(), role);
  }
  runtime::PointerAttributes a;
  COHORT_RETURN_IF_ERROR(runtime::pointerGetAttributes(p, &a));
  // A mapping made without access (aclrtMemMapNoAccess) would fault in the copy.
  const bool writes = std::string_view(role) != "sendbuf";
  Status access = runtime::vmmCheckAccess(p, bytes, writes, role);
  if (!access.ok()) return makeError(access.code(), "{}: {}", op.describe(), access.message());
  if (a.isDevice && a.device >= 0 && a.device != device) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: {} {} is memory of device {}, but the communicator runs on device {}",
                     op.describe(), role, p, a.device, device);
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
  return Status::Ok();
}

}  // namespace

Status Communicator::Impl::validate(const OpDesc& op, runtime::Stream* stream) const {
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
  int streamDevice = -1;
  COHORT_RETURN_IF_ERROR(runtime::streamGetDevice(stream, &streamDevice));
  if (streamDevice != device) {
    return makeError(ErrorCode::kInvalidArgument, "{}: the stream belongs to device {}, the "
                     "communicator to device {}", collName(op.coll), streamDevice, device);
  }
  const std::size_t b = op.count * e, n = static_cast<std::size_t>(size);
  const bool isRoot = rank == op.root;
  switch (op.coll) {
    case Coll::kAllReduce:
      COHORT_RETURN_IF_ERROR(checkBuffer("sendbuf", op.input, b, device, op));
      return checkBuffer("recvbuf", op.output, b, device, op);
    case Coll::kAllGather:
      COHORT_RETURN_IF_ERROR(checkBuffer("sendbuf", op.input, b, device, op));
      return checkBuffer("recvbuf", op.output, b * n, device, op);
    case Coll::kReduceScatter:
      COHORT_RETURN_IF_ERROR(checkBuffer("sendbuf", op.input, b * n, device, op));
      return checkBuffer("recvbuf", op.output, b, device, op);
    case Coll::kBroadcast:
      return checkBuffer("buffer", op.output, b, device, op);
    case Coll::kReduce:
      COHORT_RETURN_IF_ERROR(checkBuffer("sendbuf", op.input, b, device, op));
      return isRoot ? checkBuffer("recvbuf", op.output, b, device, op) : Status::Ok();
    case Coll::kGather:
      COHORT_RETURN_IF_ERROR(checkBuffer("sendbuf", op.input, b, device, op));
      return isRoot ? checkBuffer("recvbuf", op.output, b * n, device, op) : Status::Ok();
    case Coll::kScatter:
      COHORT_RETURN_IF_ERROR(isRoot ? checkBuffer("sendbuf", op.input, b * n, device, op)
                                    : Status::Ok());
      return checkBuffer("recvbuf", op.output, b, device, op);
    case Coll::kAllToAll:
      if (op.input == op.output && b > 0) {
        return makeError(ErrorCode::kInvalidArgument, "{}: in-place alltoall is not supported "
                         "(sendbuf == recvbuf)", op.describe());
      }
      COHORT_RETURN_IF_ERROR(checkBuffer("sendbuf", op.input, b * n, device, op));
      return checkBuffer("recvbuf", op.output, b * n, device, op);
    default:
      return Status::Ok();
  }
}

Status Communicator::Impl::enqueue(OpDesc op, runtime::Stream* stream) {
  if (aborted_.load()) {
    return makeError(ErrorCode::kAborted, "{}: the communicator was aborted", collName(op.coll));
  }
  const Status failed = asyncError();
  if (!failed.ok()) {
    return makeError(failed.code(), "{}: the communicator failed earlier: {}", collName(op.coll),
                     failed.message());
  }
  log::RankScope logAs(rank);
  trace::Span span("enqueue", collName(op.coll));
  // `known`: checked_ describes this call (repeated, or checked just now).
  const std::uint64_t generation = runtime::resourceGeneration();
  bool known = checked_.repeats(op, stream, generation);
  if (!known) {
    COHORT_RETURN_IF_ERROR(validate(op, stream));
    if (op.counts.empty() && op.items.empty()) {
      checked_ = CheckedCall{op.coll, op.input, op.output, op.count, op.type,
                             op.op,   op.root,  stream,    generation};
      known = true;
    }
  }
  // The caller's stream's counters: found once per checked call, except for the
  // default stream (null), which is the current device's, looked up every time.
  runtime::StreamCounters counters = checked_.counters;
  if (!known || stream == nullptr || counters.enqueued == nullptr) {
    COHORT_RETURN_IF_ERROR(runtime::streamCounters(stream, &counters));
    if (known && stream != nullptr) checked_.counters = counters;
  }
  if (tGroupDepth > 0) {
    tGroup.push_back(Pending{this, std::move(op), stream});
    return Status::Ok();
  }
  // Point-to-point calls involve two ranks only: they do not advance the
  // collective sequence that every rank must agree on.
  op.seq = op.coll == Coll::kSendRecv ? 0 : ++seq_;
  // The communicator's stream must wait for the caller's earlier work, unless
  // there is none: the caller's stream is idle, or all it holds since our last
  // operation is our own wait for that operation (which the communicator's
  // in-order stream implies). Skipping it saves a thread hand-off per call.
  std::uint64_t enqueued = 0, completed = 0;
  counters.progress(&enqueued, &completed);
  // Completions deferred on the caller's stream (postOp) are older than this
  // call: they run first, unless they are all this communicator's and this
  // call is posted too (the mesh completes its calls in order, and an earlier
  // one whose output this call reads before posting).
  // (Nothing is deferred on a default stream: posting needs a stream.)
  const std::size_t waiting = stream != nullptr ? counters.deferredCount() : 0;
  collective::Algo algo = collective::Algo::kAuto;
  const LaunchMode mode =
      chooseLaunch(op, stream, known, enqueued, completed, tLaunchingSeveral, &algo);
  const std::size_t ours = posted_.pending.load() ? 1 : 0;  // our completion on posted_.on
  if (waiting > 0 && !(mode == LaunchMode::kPosted && stream == posted_.on && waiting == ours)) {
    (void)runtime::streamCompleteDeferred(stream);  // a failure is asyncError()'s too
    const Status earlier = asyncError();
    if (!earlier.ok()) {
      return makeError(earlier.code(), "{}: the communicator failed earlier: {}",
                       collName(op.coll), earlier.message());
    }
  }
  if (mode == LaunchMode::kPosted) return postOp(op, stream, known);
  if (mode == LaunchMode::kInline) {
    // Nothing is pending on either stream: the result is there when this
    // returns, with no thread hand-off (what a small call costs otherwise).
    Status s = runOp(op, history_->reserve(), algo);
    if (!s.ok()) {
      setAsyncError(s);
      // The failure is the caller's stream's too, as if the operation had run
      // there: synchronizing it reports the error (HCCL's failed task).
      (void)runtime::launchKernel(stream, [s](runtime::Stream*) { return s; });
    }
    return s;
  }
  if (completed != enqueued &&
      !(stream == worker_.lastUserStream && enqueued == worker_.lastUserEnqueued)) {
    COHORT_RETURN_IF_ERROR(runtime::eventRecord(worker_.before, stream));
    COHORT_RETURN_IF_ERROR(runtime::streamWaitEvent(worker_.stream, worker_.before));
  }
  const std::uint64_t historyId = history_->queued(op);
  Status launched = runtime::launchKernel(worker_.stream, [this, op, historyId](runtime::Stream*) {
    Status s = runOp(op, historyId);
    if (!s.ok()) setAsyncError(s);
    return s;
  });
  if (!launched.ok()) {
    history_->finished(historyId, launched);
    return launched;
  }
  COHORT_RETURN_IF_ERROR(runtime::eventRecord(worker_.after, worker_.stream));
  std::uint64_t commCompleted = 0;
  COHORT_RETURN_IF_ERROR(
      runtime::streamTaskProgress(worker_.stream, &worker_.afterRecordedAt, &commCompleted));
  COHORT_RETURN_IF_ERROR(runtime::streamWaitEvent(stream, worker_.after));
  worker_.lastUserStream = stream;
  counters.progress(&worker_.lastUserEnqueued, &completed);
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
  struct Launching {
    explicit Launching(bool several) { tLaunchingSeveral = several; }
    ~Launching() { tLaunchingSeveral = false; }
  } launching(std::any_of(pending.begin(), pending.end(),
                          [&](const Pending& p) { return p.comm != pending.front().comm; }));
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

namespace {
OpDesc make(Coll c, const void* in, void* out, std::size_t count, DataType t,
            ReduceOp op = ReduceOp::kSum, int root = 0) {
  OpDesc d;
  d.coll = c;
  d.input = in;
  d.output = out;
  d.count = count;
  d.type = t;
  d.op = op;
  d.root = root;
  return d;
}
}  // namespace

Status Communicator::allReduce(const void* send, void* recv, std::size_t count, DataType type,
                               ReduceOp op, runtime::Stream* stream) {
  return recordError(impl_->enqueue(make(Coll::kAllReduce, send, recv, count, type, op), stream));
}
Status Communicator::allGather(const void* send, void* recv, std::size_t count, DataType type,
                               runtime::Stream* stream) {
  return recordError(impl_->enqueue(make(Coll::kAllGather, send, recv, count, type), stream));
}
Status Communicator::reduceScatter(const void* send, void* recv, std::size_t count,
                                   DataType type, ReduceOp op, runtime::Stream* stream) {
  return recordError(impl_->enqueue(make(Coll::kReduceScatter, send, recv, count, type, op), stream));
}
Status Communicator::broadcast(void* buffer, std::size_t count, DataType type, int root,
                               runtime::Stream* stream) {
  return recordError(impl_->enqueue(
      make(Coll::kBroadcast, buffer, buffer, count, type, ReduceOp::kSum, root), stream));
}
Status Communicator::reduce(const void* send, void* recv, std::size_t count, DataType type,
                            ReduceOp op, int root, runtime::Stream* stream) {
  return recordError(impl_->enqueue(make(Coll::kReduce, send, recv, count, type, op, root), stream));
}
Status Communicator::gather(const void* send, void* recv, std::size_t count, DataType type,
                            int root, runtime::Stream* stream) {
  return recordError(impl_->enqueue(
      make(Coll::kGather, send, recv, count, type, ReduceOp::kSum, root), stream));
}
Status Communicator::scatter(const void* send, void* recv, std::size_t count, DataType type,
                             int root, runtime::Stream* stream) {
  return recordError(impl_->enqueue(
      make(Coll::kScatter, send, recv, count, type, ReduceOp::kSum, root), stream));
}
Status Communicator::allToAll(const void* send, void* recv, std::size_t count, DataType type,
                              runtime::Stream* stream) {
  return recordError(impl_->enqueue(make(Coll::kAllToAll, send, recv, count, type), stream));
}
Status Communicator::barrier(runtime::Stream* stream) {
  return recordError(impl_->enqueue(make(Coll::kBarrier, nullptr, nullptr, 0, DataType::kInt8), stream));
}

Status Communicator::allGatherV(const void* send, std::size_t sendCount, void* recv,
                                const std::vector<std::size_t>& recvCounts,
                                const std::vector<std::size_t>& displs, DataType type,
                                runtime::Stream* stream) {
  if (recvCounts.size() != static_cast<std::size_t>(size()) || displs.size() != recvCounts.size() ||
      recvCounts[static_cast<std::size_t>(rank())] != sendCount) {
    return recordError(makeError(ErrorCode::kInvalidArgument,
                                 "allgatherv: recvCounts/displs need {} entries and "
                                 "recvCounts[{}] must equal sendCount {}", size(), rank(), sendCount));
  }
  OpDesc d = make(Coll::kAllGatherV, send, recv, sendCount, type);
  d.counts = recvCounts;
  d.displs = displs;
  return recordError(impl_->enqueue(std::move(d), stream));
}

Status Communicator::reduceScatterV(const void* send, const std::vector<std::size_t>& sendCounts,
                                    const std::vector<std::size_t>& displs, void* recv,
                                    std::size_t recvCount, DataType type, ReduceOp op,
                                    runtime::Stream* stream) {
  if (sendCounts.size() != static_cast<std::size_t>(size()) || displs.size() != sendCounts.size() ||
      sendCounts[static_cast<std::size_t>(rank())] != recvCount) {
    return recordError(makeError(ErrorCode::kInvalidArgument,
                                 "reducescatterv: sendCounts/displs need {} entries and "
                                 "sendCounts[{}] must equal recvCount {}", size(), rank(), recvCount));
  }
  OpDesc d = make(Coll::kReduceScatterV, send, recv, recvCount, type, op);
  d.counts = sendCounts;
  d.displs = displs;
  return recordError(impl_->enqueue(std::move(d), stream));
}

Status Communicator::allToAllV(const void* send, const std::vector<std::size_t>& sendCounts,
                               const std::vector<std::size_t>& sendDispls, void* recv,
                               const std::vector<std::size_t>& recvCounts,
                               const std::vector<std::size_t>& recvDispls, DataType type,
                               runtime::Stream* stream) {
  const auto n = static_cast<std::size_t>(size());
  if (sendCounts.size() != n || sendDispls.size() != n || recvCounts.size() != n ||
      recvDispls.size() != n) {
    return recordError(makeError(ErrorCode::kInvalidArgument,
                                 "alltoallv: counts and displacements need {} entries each", n));
  }
  OpDesc d = make(Coll::kAllToAllV, send, recv, 0, type);
  d.counts = sendCounts;
  d.displs = sendDispls;
  d.counts2 = recvCounts;
  d.displs2 = recvDispls;
  return recordError(impl_->enqueue(std::move(d), stream));
}

Status Communicator::send(const void* buffer, std::size_t count, DataType type, int peer,
                          runtime::Stream* stream) {
  return batchSendRecv({SendRecvItem{true, const_cast<void*>(buffer), count, type, peer}}, stream);
}
Status Communicator::recv(void* buffer, std::size_t count, DataType type, int peer,
                          runtime::Stream* stream) {
  return batchSendRecv({SendRecvItem{false, buffer, count, type, peer}}, stream);
}

Status Communicator::batchSendRecv(const std::vector<SendRecvItem>& items,
                                   runtime::Stream* stream) {
  for (const auto& it : items) {
    if (it.peer < 0 || it.peer >= size() || it.peer == rank()) {
      return recordError(makeError(ErrorCode::kInvalidArgument,
                                   "{}: peer {} is not another rank of this communicator (size {})",
                                   it.isSend ? "send" : "recv", it.peer, size()));
    }
    if (!collective::validType(it.type) || (it.buffer == nullptr && it.count > 0)) {
      return recordError(makeError(ErrorCode::kInvalidArgument, "{} to/from rank {}: null buffer "
                                   "or unknown type", it.isSend ? "send" : "recv", it.peer));
    }
  }
  OpDesc d = make(Coll::kSendRecv, nullptr, nullptr, 0, DataType::kInt8);
  d.items = items;
  return recordError(impl_->enqueue(std::move(d), stream));
}

}  // namespace cohort
