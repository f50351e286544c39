// Which algorithm runs an operation: a table by collective, topology and size,
// overridable per collective with COHORT_ALGO ("allreduce=ring;allgather=mesh").
#pragma once

#include <array>
#include <string>

#include "collective/op.h"
#include "collective/tuning.h"

namespace cohort::collective {

enum class Algo : int {
  kAuto = 0, kMesh, kRing, kHalvingDoubling, kTree, kChain, kLinear, kPairwise, kDissemination,
  kHierarchical,
};
const char* algoName(Algo a);

struct Topology {
  int size = 1;
  int nodes = 1;
  bool meshAvailable = false;  // every rank on this node, linked by shm
  bool hierarchical = false;   // several nodes, the same number of ranks on each (> 1)
  bool nodeBlocks = false;     // and ranks numbered node by node
  Tuning tuning;               // the size decisions for this node's shape
};

/// Parsed COHORT_ALGO: one choice per collective (kAuto = the table's).
struct AlgoOverrides {
  std::array<Algo, kCollCount> forced{};
  /// kConfigError naming the bad entry and the names accepted.
  static Status parse(const std::string& text, AlgoOverrides* out);
};

/// HCCL_ALGO's syntax ("level0:NA;level1:ring", or per op joined by '/') in
/// COHORT_ALGO's; kConfigError naming the bad part.
Status translateHcclAlgo(const std::string& hccl, std::string* cohort);

/// The algorithm for `op`; an override that cannot run here (mesh across nodes)
/// is an error naming it.
Status selectAlgorithm(const OpDesc& op, const Topology& topo, const AlgoOverrides& overrides,
                       Algo* out);

}  // namespace cohort::collective
