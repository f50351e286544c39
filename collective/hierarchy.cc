// Hierarchical collectives (and buildGroups, the groups they run over), for
// ranks on several nodes with the same number on each: the node's ranks work through the mesh (shared memory), and only ranks
// with the same local index talk across nodes, each carrying its share.
//   allreduce      node reduce-scatter, cross allreduce of each slice, node allgather
//   broadcast      cross broadcast among the root's local index, node broadcast
//   reduce         node reduce to the root's local index, cross reduce to its node
//   allgather      cross allgather of own blocks (into their places), then one node
//                  allgather per node's part            (ranks numbered node by node)
//   reducescatter  one node reduce-scatter per node's part, cross reduce-scatter
//                  of the node sums                     (ranks numbered node by node)
// Averages are sums until the end, divided once by the world size.
#include <fmt/format.h>

#include <cstring>

#include "collective/comm_impl.h"
#include "collective/executor.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "kernels/reduce.h"

namespace cohort {

using collective::Coll;
using collective::OpDesc;
using collective::Schedule;

namespace {

OpDesc part(const OpDesc& op, Coll coll, const void* in, void* out, std::size_t count, int root) {
  OpDesc p = op;
  p.coll = coll;
  p.input = in;
  p.output = out;
  p.count = count;
  p.root = root;
  if (p.op == ReduceOp::kAvg) p.op = ReduceOp::kSum;
  return p;
}

}  // namespace

// The mesh (every rank on this node, or this node's part of a hierarchical
// communicator) and the cross-node group of ranks with the same local index.
void Communicator::Impl::buildGroups(transport::shm::ShmTransport* shm) {
  std::vector<int> local;
  std::map<std::string, int> perNode;
  for (const auto& p : peers_) ++perNode[p.hostId];
  const std::string& myHost = peers_[static_cast<std::size_t>(rank)].hostId;
  for (const auto& p : peers_) {
    if (p.hostId == myHost) local.push_back(p.rank);
  }
  // Every local peer reached through the shared-memory transport (it maps only those).
  for (int r : local) {
    if (shm->peer(r) == nullptr) return;
  }
  std::vector<const transport::shm::ShmPeer*> members;
  for (int r : local) members.push_back(shm->peer(r));
  mesh_ =
      std::make_unique<collective::Mesh>(shm, members, localRank, topo_.tuning,
                                         [this](std::size_t b, void** p) { return scratch(b, p); });
  // A posted call that postOp() left to the caller's stream ends here.
  mesh_->onPosted([this](const collective::OpDesc& op, std::uint64_t id, Deadline d, Status s) {
    log::RankScope logAs(rank);  // any thread that completes the call
    s = concludeOp(op, id, std::move(s), d);
    if (!s.ok()) setAsyncError(s);
    return s;
  });
  topo_.meshAvailable = nodes == 1;
  bool even = nodes > 1 && localSize > 1;
  for (const auto& [host, count] : perNode) even = even && count == localSize;
  if (!even) return;
  for (const auto& p : peers_) {
    if (p.localIndex != localRank) continue;
    if (p.rank == rank) crossRank_ = static_cast<int>(crossConns_.size());
    crossConns_.push_back(connPtrs_[static_cast<std::size_t>(p.rank)]);
  }
  topo_.hierarchical = true;
  // Ranks numbered node by node (rank = node * localSize + local index), nodes in
  // the same order for every local index: what allgather and reduce-scatter
  // need to place blocks without reordering.
  topo_.nodeBlocks = true;
  for (const auto& p : peers_) {
    topo_.nodeBlocks = topo_.nodeBlocks && p.localIndex == p.rank % localSize &&
                       peers_[static_cast<std::size_t>(p.rank - p.localIndex)].hostId == p.hostId;
  }
}

// Position of global rank `r` among the ranks of its local index (= its node's
// index in that cross-node group).
int Communicator::Impl::crossIndexOf(int r) const {
  int index = 0;
  for (int q = 0; q < r; ++q) {
    index += peers_[static_cast<std::size_t>(q)].localIndex ==
             peers_[static_cast<std::size_t>(r)].localIndex;
  }
  return index;
}

Status Communicator::Impl::runCross(const Schedule& sched, const OpDesc& op, const char* in,
                                    char* out, Deadline deadline) {
  collective::ExecBuffers bufs{in, out, nullptr};
  if (sched.scratchBytes > 0) {
    void* p = nullptr;
    COHORT_RETURN_IF_ERROR(scratch(sched.scratchBytes, &p));
    bufs.scratch = static_cast<char*>(p);
  }
  return collective::execute(sched, bufs, crossConns_, kernels::reductionFor(op.type, op.op), op,
                             rank, deadline, &aborted_, topo_.tuning);
}

Status Communicator::Impl::runHierarchical(const OpDesc& op, Deadline deadline) {
  const std::size_t e = dataTypeSize(op.type);
  const int n = static_cast<int>(crossConns_.size());
  switch (op.coll) {
    case Coll::kAllReduce: {
      auto inter = [&](char* slice, std::size_t count) -> Status {
        if (n < 2) return Status::Ok();
        const Schedule sched =
            count * e <= topo_.tuning.crossHalvingDoublingMax
                ? collective::halvingDoublingAllReduce(crossRank_, n, count, e, true)
                : collective::ringAllReduce(crossRank_, n, count, e, true,
                                            topo_.tuning.ringChunkBytes);
        return runCross(sched, part(op, Coll::kAllReduce, slice, slice, count, 0), slice, slice,
                        deadline);
      };
      return mesh_->hierarchicalAllReduce(op, size, inter, deadline, aborted_);
    }
    case Coll::kBroadcast: return hierarchicalBroadcast(op, deadline);
    case Coll::kReduce: return hierarchicalReduce(op, deadline);
    case Coll::kAllGather: return hierarchicalAllGather(op, deadline);
    case Coll::kReduceScatter: return hierarchicalReduceScatter(op, deadline);
    default:
      return makeError(ErrorCode::kInternal, "no hierarchical {}", collName(op.coll));
  }
}

Status Communicator::Impl::hierarchicalBroadcast(const OpDesc& op, Deadline deadline) {
  const std::size_t e = dataTypeSize(op.type);
  const int rootLocal = peers_[static_cast<std::size_t>(op.root)].localIndex;
  char* buf = static_cast<char*>(op.output);
  if (localRank == rootLocal) {
    const Schedule sched = collective::treeBroadcast(
        crossRank_, static_cast<int>(crossConns_.size()), crossIndexOf(op.root), op.count, e);
    COHORT_RETURN_IF_ERROR(runCross(
        sched, part(op, Coll::kBroadcast, buf, buf, op.count, crossIndexOf(op.root)), buf, buf,
        deadline));
  }
  return mesh_->run(part(op, Coll::kBroadcast, buf, buf, op.count, rootLocal), deadline, aborted_);
}

Status Communicator::Impl::hierarchicalReduce(const OpDesc& op, Deadline deadline) {
  const std::size_t e = dataTypeSize(op.type);
  const int rootLocal = peers_[static_cast<std::size_t>(op.root)].localIndex;
  const int rootNode = crossIndexOf(op.root);
  // The node's sum lands at the root's local index: in the output on the root,
  // in staging elsewhere.
  char* sum = static_cast<char*>(op.output);
  if (localRank == rootLocal && rank != op.root) {
    void* p = nullptr;
    COHORT_RETURN_IF_ERROR(stage(op.count * e, &p));
    sum = static_cast<char*>(p);
  }
  COHORT_RETURN_IF_ERROR(mesh_->run(
      part(op, Coll::kReduce, op.input, localRank == rootLocal ? sum : nullptr, op.count, rootLocal),
      deadline, aborted_));
  if (localRank != rootLocal) return Status::Ok();
  const Schedule sched = collective::treeReduce(crossRank_, static_cast<int>(crossConns_.size()),
                                                rootNode, op.count, e, true);
  COHORT_RETURN_IF_ERROR(runCross(sched, part(op, Coll::kReduce, sum, sum, op.count, rootNode), sum,
                                  sum, deadline));
  if (rank == op.root && op.op == ReduceOp::kAvg) {
    kernels::finishAverage(op.output, op.count, op.type, size);
  }
  return Status::Ok();
}

Status Communicator::Impl::hierarchicalAllGather(const OpDesc& op, Deadline deadline) {
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t block = op.count * e;
  const std::size_t nodeBytes = block * static_cast<std::size_t>(localSize);
  char* out = static_cast<char*>(op.output);
  char* mine = out + block * static_cast<std::size_t>(rank);
  // Own block into its place, then the blocks of the same local index on the
  // other nodes into theirs (a ring whose blocks lie one node apart).
  if (mine != op.input && block > 0) std::memmove(mine, op.input, block);
  const Schedule sched =
      collective::ringAllGather(crossRank_, static_cast<int>(crossConns_.size()), op.count, e,
                                true, nodeBytes);
  char* first = out + block * static_cast<std::size_t>(localRank);
  COHORT_RETURN_IF_ERROR(
      runCross(sched, part(op, Coll::kAllGather, first, first, op.count, 0), first, first, deadline));
  for (std::size_t node = 0; node < crossConns_.size(); ++node) {
    char* chunk = out + node * nodeBytes;
    COHORT_RETURN_IF_ERROR(mesh_->run(
        part(op, Coll::kAllGather, chunk + block * static_cast<std::size_t>(localRank), chunk,
             op.count, 0),
        deadline, aborted_));
  }
  return Status::Ok();
}

Status Communicator::Impl::hierarchicalReduceScatter(const OpDesc& op, Deadline deadline) {
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t block = op.count * e;
  const std::size_t nodes = crossConns_.size();
  const std::size_t nodeBytes = block * static_cast<std::size_t>(localSize);
  // sums[m]: this local index's block of node m, summed over this node.
  void* p = nullptr;
  COHORT_RETURN_IF_ERROR(stage(nodes * block, &p));
  char* sums = static_cast<char*>(p);
  const char* in = static_cast<const char*>(op.input);
  for (std::size_t m = 0; m < nodes; ++m) {
    COHORT_RETURN_IF_ERROR(mesh_->run(
        part(op, Coll::kReduceScatter, in + m * nodeBytes, sums + m * block, op.count, 0),
        deadline, aborted_));
  }
  const std::size_t limit = Config::global().buffSize;
  const std::size_t room = limit > nodes * block ? limit - nodes * block : 0;
  const Schedule sched = collective::ringReduceScatter(crossRank_, static_cast<int>(nodes),
                                                       op.count, e, room / 2);
  COHORT_RETURN_IF_ERROR(runCross(sched, part(op, Coll::kReduceScatter, sums, op.output, op.count, 0),
                                  sums, static_cast<char*>(op.output), deadline));
  if (op.op == ReduceOp::kAvg) kernels::finishAverage(op.output, op.count, op.type, size);
  return Status::Ok();
}


}  // namespace cohort
