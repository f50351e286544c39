// The hierarchical plans: only ranks with the same local index talk across
// nodes, each carrying its share; the node's ranks work through the mesh.
//   allreduce      node reduce-scatter, cross allreduce of each slice, node allgather
//   broadcast      cross broadcast among the root's local index, node broadcast
//   reduce         node reduce to the root's local index, cross reduce to its node
//   allgather      cross allgather of own blocks (into their places), then one node
//                  allgather per node's part            (ranks numbered node by node)
//   reducescatter  one node reduce-scatter per node's part, cross reduce-scatter
//                  of the node sums                     (ranks numbered node by node)
// Averages are sums until the end, divided once by the world's size.
#include "collective/hierarchy_plan.h"

#include <fmt/format.h>

namespace cohort::collective {

namespace {

using Kind = HierPart::Kind;

HierRef ref(HierBuf buf, std::size_t offset = 0) { return HierRef{buf, offset}; }

HierPart group(Kind kind, Coll coll, HierRef in, HierRef out, std::size_t count, int root = 0) {
  HierPart p;
  p.kind = kind;
  p.coll = coll;
  p.in = in;
  p.out = out;
  p.count = count;
  p.root = root;
  return p;
}

HierPart cross(Coll coll, HierRef in, HierRef out, std::size_t count, Schedule schedule,
               int root = 0) {
  HierPart p = group(Kind::kCross, coll, in, out, count, root);
  p.schedule = std::move(schedule);
  return p;
}

HierPart average(HierRef at, std::size_t count) {
  HierPart p;
  p.kind = Kind::kAverage;
  p.out = at;
  p.count = count;
  return p;
}

void allReduce(const HierShape& s, const Tuning& t, HierPlan* plan) {
  const Block mine = blockOf(s.count, s.localSize, s.localRank);
  plan->parts.push_back(group(Kind::kNodeOpen, Coll::kAllReduce, ref(HierBuf::kInput),
                              ref(HierBuf::kOutput), s.count));
  if (s.nodes > 1) {
    Schedule sched =
        mine.count * s.elem <= t.crossHalvingDoublingMax
            ? halvingDoublingAllReduce(s.crossRank, s.nodes, mine.count, s.elem, true)
            : ringAllReduce(s.crossRank, s.nodes, mine.count, s.elem, true, t.ringChunkBytes);
    plan->parts.push_back(cross(Coll::kAllReduce, ref(HierBuf::kSlice), ref(HierBuf::kSlice),
                                mine.count, std::move(sched)));
  }
  if (s.average) plan->parts.push_back(average(ref(HierBuf::kSlice), mine.count));
  HierPart close;
  close.kind = Kind::kNodeClose;
  plan->parts.push_back(close);
}

void broadcast(const HierShape& s, HierPlan* plan) {
  const HierRef buf = ref(HierBuf::kOutput);
  if (s.localRank == s.rootLocal) {
    plan->parts.push_back(cross(Coll::kBroadcast, buf, buf, s.count,
                                treeBroadcast(s.crossRank, s.nodes, s.rootNode, s.count, s.elem),
                                s.rootNode));
  }
  plan->parts.push_back(group(Kind::kNode, Coll::kBroadcast, buf, buf, s.count, s.rootLocal));
}

void reduce(const HierShape& s, HierPlan* plan) {
  // The node's sum lands at the root's local index: in the output on the root,
  // in staging elsewhere.
  const bool gathers = s.localRank == s.rootLocal;
  HierRef sum = ref(s.rank == s.root ? HierBuf::kOutput : HierBuf::kNone);
  if (gathers && s.rank != s.root) {
    sum = ref(HierBuf::kStaging);
    plan->stagingBytes = s.count * s.elem;
  }
  plan->parts.push_back(
      group(Kind::kNode, Coll::kReduce, ref(HierBuf::kInput), sum, s.count, s.rootLocal));
  if (!gathers) return;
  plan->parts.push_back(cross(Coll::kReduce, sum, sum, s.count,
                              treeReduce(s.crossRank, s.nodes, s.rootNode, s.count, s.elem, true),
                              s.rootNode));
  if (s.rank == s.root && s.average) plan->parts.push_back(average(sum, s.count));
}

void allGather(const HierShape& s, HierPlan* plan) {
  const std::size_t block = s.count * s.elem;
  const std::size_t nodeBytes = block * static_cast<std::size_t>(s.localSize);
  // Own block into its place, then the blocks of the same local index on the
  // other nodes into theirs (a ring whose blocks lie one node apart).
  HierPart move;
  move.kind = Kind::kMove;
  move.in = ref(HierBuf::kInput);
  move.out = ref(HierBuf::kOutput, block * static_cast<std::size_t>(s.rank));
  move.bytes = block;
  plan->parts.push_back(move);
  const HierRef first = ref(HierBuf::kOutput, block * static_cast<std::size_t>(s.localRank));
  HierPart ring = cross(Coll::kAllGather, first, first, s.count,
                        ringAllGather(s.crossRank, s.nodes, s.count, s.elem, true, nodeBytes));
  ring.stride = nodeBytes;
  plan->parts.push_back(std::move(ring));
  for (int node = 0; node < s.nodes; ++node) {
    const std::size_t chunk = static_cast<std::size_t>(node) * nodeBytes;
    plan->parts.push_back(
        group(Kind::kNode, Coll::kAllGather,
              ref(HierBuf::kOutput, chunk + block * static_cast<std::size_t>(s.localRank)),
              ref(HierBuf::kOutput, chunk), s.count));
  }
}

void reduceScatter(const HierShape& s, std::size_t stagingLimit, HierPlan* plan) {
  const std::size_t block = s.count * s.elem;
  const auto nodes = static_cast<std::size_t>(s.nodes);
  const std::size_t nodeBytes = block * static_cast<std::size_t>(s.localSize);
  // Staging block m: this local index's block of node m, summed over this node.
  plan->stagingBytes = nodes * block;
  for (std::size_t m = 0; m < nodes; ++m) {
    plan->parts.push_back(group(Kind::kNode, Coll::kReduceScatter,
                                ref(HierBuf::kInput, m * nodeBytes),
                                ref(HierBuf::kStaging, m * block), s.count));
  }
  const std::size_t room = stagingLimit > nodes * block ? stagingLimit - nodes * block : 0;
  plan->parts.push_back(cross(Coll::kReduceScatter, ref(HierBuf::kStaging), ref(HierBuf::kOutput),
                              s.count,
                              ringReduceScatter(s.crossRank, s.nodes, s.count, s.elem, room / 2)));
  if (s.average) plan->parts.push_back(average(ref(HierBuf::kOutput), s.count));
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kNode:
      return "node";
    case Kind::kNodeOpen:
      return "node open";
    case Kind::kNodeClose:
      return "node close";
    case Kind::kCross:
      return "cross";
    case Kind::kMove:
      return "move";
    case Kind::kAverage:
      return "average";
  }
  return "?";
}

std::string refName(const HierRef& r) {
  static const char* const names[] = {"none", "in", "out", "staging", "slice"};
  return fmt::format("{}+{}", names[static_cast<int>(r.buf)], r.offset);
}

}  // namespace

std::string HierPlan::toString() const {
  std::string text;
  for (const HierPart& p : parts) {
    text += kindName(p.kind);
    switch (p.kind) {
      case Kind::kNodeClose:
        break;
      case Kind::kMove:
        text += fmt::format(" {}B {} -> {}", p.bytes, refName(p.in), refName(p.out));
        break;
      case Kind::kAverage:
        text += fmt::format(" {} {}", p.count, refName(p.out));
        break;
      default:
        text += fmt::format(" {} {} {} -> {}", collName(p.coll), p.count, refName(p.in),
                            refName(p.out));
        if (p.coll == Coll::kBroadcast || p.coll == Coll::kReduce) {
          text += fmt::format(" root {}", p.root);
        }
        if (p.kind == Kind::kCross) text += " (" + p.schedule.algorithm + ")";
    }
    text += "\n";
  }
  if (stagingBytes > 0) text += fmt::format("staging {}B\n", stagingBytes);
  return text;
}

HierPlan hierarchicalPlan(const HierShape& shape, const Tuning& tuning, std::size_t stagingLimit) {
  HierPlan plan;
  switch (shape.coll) {
    case Coll::kAllReduce:
      allReduce(shape, tuning, &plan);
      break;
    case Coll::kBroadcast:
      broadcast(shape, &plan);
      break;
    case Coll::kReduce:
      reduce(shape, &plan);
      break;
    case Coll::kAllGather:
      allGather(shape, &plan);
      break;
    case Coll::kReduceScatter:
      reduceScatter(shape, stagingLimit, &plan);
      break;
    default:
      break;
  }
  return plan;
}

}  // namespace cohort::collective
