// Hierarchical collectives, for ranks on several nodes with the same number on
// each: buildGroups makes the groups they run over (the node's mesh, the
// cross-node group of this local index), collective/hierarchy_plan.h says what
// each rank runs, and runParts runs it.
#include <cstring>

#include "collective/comm_impl.h"
#include "collective/executor.h"
#include "collective/hierarchy_plan.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "kernels/reduce.h"

namespace cohort {

using collective::Coll;
using collective::HierBuf;
using collective::HierPart;
using collective::HierPlan;
using collective::HierRef;
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
                             rank, deadline, waits_, topo_.tuning);
}

// Runs parts [from, to) of `plan`; `slice` is the block that an enclosing
// node allreduce handed over (null outside one).
Status Communicator::Impl::runParts(const OpDesc& op, const HierPlan& plan, std::size_t from,
                                    std::size_t to, char* staging, char* slice, Deadline deadline) {
  auto at = [&](const HierRef& r) -> char* {
    char* base = nullptr;
    switch (r.buf) {
      case HierBuf::kNone:
        return nullptr;
      case HierBuf::kInput:
        base = static_cast<char*>(const_cast<void*>(op.input));
        break;
      case HierBuf::kOutput:
        base = static_cast<char*>(op.output);
        break;
      case HierBuf::kStaging:
        base = staging;
        break;
      case HierBuf::kSlice:
        base = slice;
        break;
    }
    return base + r.offset;
  };
  for (std::size_t i = from; i < to; ++i) {
    const HierPart& p = plan.parts[i];
    switch (p.kind) {
      case HierPart::Kind::kNode:
        COHORT_RETURN_IF_ERROR(
            mesh_->run(part(op, p.coll, at(p.in), at(p.out), p.count, p.root), deadline, aborted_));
        break;
      case HierPart::Kind::kNodeOpen: {
        std::size_t close = i + 1;
        while (close < to && plan.parts[close].kind != HierPart::Kind::kNodeClose) ++close;
        COHORT_CHECK(close < to);
        auto inside = [&](char* block, std::size_t count) {
          COHORT_CHECK(count == collective::blockOf(op.count, localSize, localRank).count);
          return runParts(op, plan, i + 1, close, staging, block, deadline);
        };
        OpDesc node = op;
        node.input = at(p.in);
        node.output = at(p.out);
        COHORT_RETURN_IF_ERROR(mesh_->hierarchicalAllReduce(node, inside, deadline, aborted_));
        i = close;
        break;
      }
      case HierPart::Kind::kNodeClose:
        return makeError(ErrorCode::kInternal, "a hierarchical plan closes a part it did not open");
      case HierPart::Kind::kCross: {
        char* in = at(p.in);
        char* out = at(p.out);
        COHORT_RETURN_IF_ERROR(
            runCross(p.schedule, part(op, p.coll, in, out, p.count, p.root), in, out, deadline));
        break;
      }
      case HierPart::Kind::kMove:
        if (p.bytes > 0 && at(p.in) != at(p.out)) std::memmove(at(p.out), at(p.in), p.bytes);
        break;
      case HierPart::Kind::kAverage:
        kernels::finishAverage(at(p.out), p.count, op.type, size);
        break;
    }
  }
  return Status::Ok();
}

Status Communicator::Impl::runHierarchical(const OpDesc& op, Deadline deadline) {
  collective::HierShape shape;
  shape.coll = op.coll;
  shape.count = op.count;
  shape.elem = dataTypeSize(op.type);
  shape.average = op.op == ReduceOp::kAvg;
  shape.rank = rank;
  shape.size = size;
  shape.localRank = localRank;
  shape.localSize = localSize;
  shape.crossRank = crossRank_;
  shape.nodes = static_cast<int>(crossConns_.size());
  shape.root = op.root;
  shape.rootLocal = peers_[static_cast<std::size_t>(op.root)].localIndex;
  shape.rootNode = crossIndexOf(op.root);
  const HierPlan plan =
      collective::hierarchicalPlan(shape, topo_.tuning, Config::global().buffSize);
  if (plan.parts.empty()) {
    return makeError(ErrorCode::kInternal, "no hierarchical {}", collName(op.coll));
  }
  void* staging = nullptr;
  if (plan.stagingBytes > 0) COHORT_RETURN_IF_ERROR(stage(plan.stagingBytes, &staging));
  return runParts(op, plan, 0, plan.parts.size(), static_cast<char*>(staging), nullptr, deadline);
}

}  // namespace cohort
