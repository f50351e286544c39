#include "collective/selector.h"

#include "collective/mesh.h"

#include <fmt/format.h>

#include <sstream>

#include "cohort/communicator.h"
#include "common/error.h"

namespace cohort::collective {

namespace {

const char* kAlgoNames[] = {"auto", "mesh", "ring", "hd", "tree", "chain", "linear",
                            "pairwise", "dissemination", "hierarchical"};

// Which algorithms can run which collective (beyond kAuto).
bool canRun(Coll c, Algo a) {
  switch (a) {
    case Algo::kAuto: return true;
    case Algo::kMesh: return Mesh::supports(c);
    case Algo::kRing: return c == Coll::kAllReduce || c == Coll::kAllGather || c == Coll::kReduceScatter;
    case Algo::kHalvingDoubling: return c == Coll::kAllReduce;
    case Algo::kTree: return c == Coll::kBroadcast || c == Coll::kReduce;
    case Algo::kChain: return c == Coll::kBroadcast;
    case Algo::kLinear:
      return c == Coll::kGather || c == Coll::kScatter || c == Coll::kAllGatherV ||
             c == Coll::kReduceScatterV || c == Coll::kAllGather || c == Coll::kAllToAll ||
             c == Coll::kBroadcast || c == Coll::kReduceScatter;
    case Algo::kPairwise: return c == Coll::kAllToAll || c == Coll::kAllToAllV;
    case Algo::kDissemination: return c == Coll::kBarrier;
    case Algo::kHierarchical:
      return c == Coll::kAllReduce || c == Coll::kBroadcast || c == Coll::kReduce ||
             c == Coll::kAllGather || c == Coll::kReduceScatter;
  }
  return false;
}

// Allgather and reduce-scatter place blocks by rank: hierarchical only when ranks
// are numbered node by node.
bool hierarchicalFits(Coll c, const Topology& topo) {
  return topo.hierarchical && canRun(c, Algo::kHierarchical) &&
         (topo.nodeBlocks || (c != Coll::kAllGather && c != Coll::kReduceScatter));
}

Algo tableChoice(const OpDesc& op, const Topology& topo) {
  if (topo.meshAvailable && canRun(op.coll, Algo::kMesh)) return Algo::kMesh;
  const std::size_t bytes = op.count * dataTypeSize(op.type);
  if (hierarchicalFits(op.coll, topo)) return Algo::kHierarchical;
  const Tuning& t = topo.tuning;
  // Every message of the collective in flight at once while a rank receives (a
  // broadcast's root sends) at most linearMax.
  const bool linear = bytes * static_cast<std::size_t>(topo.size - 1) <= t.linearMax;
  switch (op.coll) {
    case Coll::kAllReduce:
      return bytes <= t.halvingDoublingMax ? Algo::kHalvingDoubling : Algo::kRing;
    case Coll::kAllGather: case Coll::kReduceScatter:
      return linear ? Algo::kLinear : Algo::kRing;
    case Coll::kBroadcast:
      return linear ? Algo::kLinear : bytes <= t.treeBroadcastMax ? Algo::kTree : Algo::kChain;
    case Coll::kReduce: return Algo::kTree;
    case Coll::kGather: case Coll::kScatter: case Coll::kAllGatherV: case Coll::kReduceScatterV:
      return Algo::kLinear;
    case Coll::kAllToAll: return linear ? Algo::kLinear : Algo::kPairwise;
    case Coll::kAllToAllV: return Algo::kPairwise;
    case Coll::kBarrier: return Algo::kDissemination;
    case Coll::kSendRecv: return Algo::kLinear;
  }
  return Algo::kRing;
}

}  // namespace

const char* algoName(Algo a) { return kAlgoNames[static_cast<int>(a)]; }

namespace {

// HCCL_ALGO's level-1 algorithm names in our terms.
const char* fromHccl(const std::string& name) {
  if (name == "ring" || name == "NHR" || name == "NHR_V1" || name == "NB" || name == "AHC" ||
      name == "pipeline") {
    return "ring";
  }
  if (name == "H-D_R") return "hd";
  if (name == "pairwise") return "pairwise";
  return nullptr;
}

}  // namespace

Status translateHcclAlgo(const std::string& text, std::string* out) {
  // "level0:NA;level1:ring" (every op) or "allreduce=level0:NA;level1:ring/allgather=...".
  auto bad = [&](const std::string& why) {
    return makeError(ErrorCode::kConfigError,
                     "Value '{}' for environment variable HCCL_ALGO is invalid ({}). Expected "
                     "value: level0:NA;level1:<ring|H-D_R|NHR|NB|AHC|pipeline|pairwise>, "
                     "optionally per op as op=...; joined by '/'", text, why);
  };
  std::stringstream parts(text);
  std::string part;
  out->clear();
  while (std::getline(parts, part, '/')) {
    std::string op;
    std::string levels = part;
    const auto eq = part.find('=');
    if (eq != std::string::npos) {
      op = part.substr(0, eq);
      levels = part.substr(eq + 1);
    }
    const auto l1 = levels.find("level1:");
    if (l1 == std::string::npos) return bad("no level1 entry in '" + part + "'");
    std::string algo = levels.substr(l1 + 7);
    algo = algo.substr(0, algo.find(';'));
    const char* ours = fromHccl(algo);
    if (ours == nullptr) return bad("unknown algorithm '" + algo + "'");
    std::vector<std::string> ops;
    if (!op.empty()) {
      ops.push_back(op);
    } else {
      for (int c = 0; c < kCollCount; ++c) ops.push_back(collName(static_cast<Coll>(c)));
    }
    for (const auto& o : ops) {
      int c = -1;
      for (int i = 0; i < kCollCount; ++i) {
        if (o == collName(static_cast<Coll>(i))) c = i;
      }
      if (c < 0) return bad("unknown operation '" + o + "'");
      const Algo a = std::string(ours) == "ring" ? Algo::kRing
                     : std::string(ours) == "hd" ? Algo::kHalvingDoubling : Algo::kPairwise;
      if (!canRun(static_cast<Coll>(c), a)) {
        if (!op.empty()) return bad(std::string(ours) + " cannot run " + o);
        continue;  // a global choice applies where it can
      }
      *out += (out->empty() ? "" : ";") + o + "=" + ours;
    }
  }
  return Status::Ok();
}

Status AlgoOverrides::parse(const std::string& text, AlgoOverrides* out) {
  *out = AlgoOverrides{};
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ';')) {
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    const std::string coll = entry.substr(0, eq);
    const std::string algo = eq == std::string::npos ? "" : entry.substr(eq + 1);
    int c = -1, a = -1;
    for (int i = 0; i < kCollCount; ++i) {
      if (coll == collName(static_cast<Coll>(i))) c = i;
    }
    for (int i = 0; i < static_cast<int>(std::size(kAlgoNames)); ++i) {
      if (algo == kAlgoNames[i]) a = i;
    }
    if (c < 0 || a < 0 || !canRun(static_cast<Coll>(c), static_cast<Algo>(a))) {
      return makeError(ErrorCode::kConfigError,
                       "Value '{}' for environment variable COHORT_ALGO is invalid: entry '{}'. "
                       "Expected value: entries COLLECTIVE=ALGORITHM separated by ';' with "
                       "algorithms mesh, ring, hd, tree, chain, linear, pairwise, dissemination "
                       "that implement the collective",
                       text, entry);
    }
    out->forced[static_cast<std::size_t>(c)] = static_cast<Algo>(a);
  }
  return Status::Ok();
}

Status selectAlgorithm(const OpDesc& op, const Topology& topo, const AlgoOverrides& overrides,
                       Algo* out) {
  const Algo forced = overrides.forced[static_cast<std::size_t>(op.coll)];
  if (forced == Algo::kAuto) {
    *out = tableChoice(op, topo);
    return Status::Ok();
  }
  if (forced == Algo::kHierarchical && !hierarchicalFits(op.coll, topo)) {
    return makeError(ErrorCode::kInvalidUsage,
                     "COHORT_ALGO asks for hierarchical {} but the ranks are not spread evenly "
                     "over several nodes with more than one rank each{}", collName(op.coll),
                     topo.hierarchical ? ", numbered node by node" : "");
  }
  if (forced == Algo::kMesh && !topo.meshAvailable) {
    return makeError(ErrorCode::kInvalidUsage,
                     "COHORT_ALGO asks for mesh {} but the ranks are not all on one node linked "
                     "by shared memory", collName(op.coll));
  }
  *out = forced;
  return Status::Ok();
}

}  // namespace cohort::collective
