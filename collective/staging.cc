#include "collective/staging.h"

#include <algorithm>

#include "collective/schedule.h"


namespace cohort::collective {

namespace {

constexpr std::size_t kAlignSlack = 128;  // the mesh aligns the output copy

std::size_t slackOf(Algo algo) {
  return algo == Algo::kMesh || algo == Algo::kHierarchical ? kAlignSlack : 0;
}

bool elementwise(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kBroadcast || c == Coll::kReduce;
}

}  // namespace

std::size_t scratchBound(const OpDesc& op, Algo algo, int size, const Tuning& tuning) {
  switch (algo) {
    case Algo::kMesh:  // buffers peers cannot map are copied in and out
      return op.inputBytes(size) + op.outputBytes(size) + kAlignSlack;
    case Algo::kHierarchical:  // the same, and a node's sums kept for the cross step
      return op.inputBytes(size) + op.outputBytes(size) + kAlignSlack +
             (op.coll == Coll::kReduce || op.coll == Coll::kReduceScatter ? op.inputBytes(size) : 0);
    case Algo::kHalvingDoubling:  // small vectors: the partner's whole vector
      return op.coll == Coll::kAllReduce &&
                     op.count * dataTypeSize(op.type) <= tuning.recursiveDoublingMax
                 ? op.count * dataTypeSize(op.type)
                 : 0;
    case Algo::kTree:  // a reduce's partial sums (broadcast trees take none)
      return op.coll == Coll::kReduce ? op.count * dataTypeSize(op.type) : 0;
    case Algo::kLinear:  // a reduce-scatter's blocks from every peer
      return op.coll == Coll::kReduceScatter
                 ? static_cast<std::size_t>(size - 1) * op.count * dataTypeSize(op.type)
                 : 0;
    default:  // ring reduce-scatter pieces itself (comm_run.cc); the rest take none
      return 0;
  }
}

StagingPlan planStaging(const OpDesc& op, Algo algo, int size, std::size_t limit,
                        const Tuning& tuning) {
  StagingPlan plan{algo, 0};
  const std::size_t need = scratchBound(op, algo, size, tuning);
  if (need <= limit || op.count == 0) return plan;
  if (!elementwise(op.coll)) {
    plan.algo = Algo::kRing;
    return plan;
  }
  const std::size_t slack = slackOf(algo);
  const std::size_t perElement = (need - slack + op.count - 1) / op.count;
  plan.pieceCount = std::max<std::size_t>(1, (limit - std::min(limit, slack)) / perElement);
  return plan;
}

}  // namespace cohort::collective
