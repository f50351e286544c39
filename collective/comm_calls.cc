// The public collective calls of Communicator: each describes its operation and
// hands it to Communicator::Impl::enqueue (comm_ops.cc), recording its error for
// the HCCL layer. The V variants and send/recv check their own argument shapes.
#include <fmt/format.h>

#include "collective/comm_impl.h"
#include "collective/datatype.h"
#include "common/error.h"

namespace cohort {

using collective::Coll;
using collective::OpDesc;

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

// A V call's shape: a count and a displacement per rank, and this rank's count
// the one it passes as `ownName`.
Status checkVShape(const char* call, const char* countsName,
                   const std::vector<std::size_t>& counts, const std::vector<std::size_t>& displs,
                   int size, int rank, const char* ownName, std::size_t own) {
  if (counts.size() == static_cast<std::size_t>(size) && displs.size() == counts.size() &&
      counts[static_cast<std::size_t>(rank)] == own) {
    return Status::Ok();
  }
  return makeError(ErrorCode::kInvalidArgument,
                   "{}: {}/displs need {} entries and {}[{}] must equal {} {}", call, countsName,
                   size, countsName, rank, ownName, own);
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
  COHORT_RETURN_IF_ERROR(recordError(checkVShape("allgatherv", "recvCounts", recvCounts, displs,
                                                 size(), rank(), "sendCount", sendCount)));
  OpDesc d = make(Coll::kAllGatherV, send, recv, sendCount, type);
  d.counts = recvCounts;
  d.displs = displs;
  return recordError(impl_->enqueue(std::move(d), stream));
}

Status Communicator::reduceScatterV(const void* send, const std::vector<std::size_t>& sendCounts,
                                    const std::vector<std::size_t>& displs, void* recv,
                                    std::size_t recvCount, DataType type, ReduceOp op,
                                    runtime::Stream* stream) {
  COHORT_RETURN_IF_ERROR(recordError(checkVShape("reducescatterv", "sendCounts", sendCounts,
                                                 displs, size(), rank(), "recvCount", recvCount)));
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
