// The hierarchical collectives as data: a builder returns the parts one rank
// runs (collectives over the node's ranks, schedules over the ranks with this
// local index, one per node, and local moves and divisions), and one runner in
// hierarchy.cc runs any plan. Plans print, so tests check their composition
// without any I/O. Private to collective/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collective/op.h"
#include "collective/schedule.h"
#include "collective/tuning.h"

namespace cohort::collective {

/// The buffer a part reads or writes: the caller's input or output, the call's
/// staging (HierPlan::stagingBytes of device memory), the block that an open
/// node allreduce hands to the parts inside it, or none.
enum class HierBuf : std::uint8_t { kNone, kInput, kOutput, kStaging, kSlice };

struct HierRef {
  HierBuf buf = HierBuf::kNone;
  std::size_t offset = 0;  // bytes
};

struct HierPart {
  enum class Kind : std::uint8_t {
    kNode,       // `coll` over the node's ranks (the mesh)
    kNodeOpen,   // a node allreduce's first half: the node's sum of this rank's block (kSlice)
    kNodeClose,  // its second half: every member's block into every member's output
    kCross,      // `schedule` over the ranks of this local index, one per node
    kMove,       // `bytes` from `in` to `out`, unless they are one place
    kAverage,    // `count` elements of `out` divided by the world's size
  };
  Kind kind = Kind::kNode;
  Coll coll = Coll::kAllReduce;  // kNode, kNodeOpen, kCross: the group's collective
  HierRef in, out;
  std::size_t count = 0;   // elements, OpDesc's meaning for the part's group
  int root = 0;            // in the part's group
  std::size_t bytes = 0;   // kMove
  std::size_t stride = 0;  // kCross allgather: bytes between blocks (its schedule has them too)
  Schedule schedule;       // kCross
};

/// Every part of one rank's call, in order; a kNodeOpen encloses the parts up to
/// its kNodeClose (they run on its slice while the node waits).
struct HierPlan {
  std::vector<HierPart> parts;
  std::size_t stagingBytes = 0;
  /// One line per part: "cross allreduce 500 slice+0 -> slice+0 (halving-doubling)".
  std::string toString() const;
};

/// Where this rank sits, and the call. The world's ranks are numbered node by
/// node when the collective is an allgather or a reduce-scatter.
struct HierShape {
  Coll coll = Coll::kAllReduce;
  std::size_t count = 0;  // elements, OpDesc's meaning
  std::size_t elem = 0;   // bytes per element
  bool average = false;   // ReduceOp::kAvg
  int rank = 0;           // in the world
  int size = 0;
  int localRank = 0;  // on this node
  int localSize = 0;
  int crossRank = 0;  // this rank's node among the ranks of its local index
  int nodes = 0;
  int root = 0;       // broadcast, reduce: the root's world rank,
  int rootLocal = 0;  // its local index
  int rootNode = 0;   // and its node
};

/// The plan of an allreduce, broadcast, reduce, allgather or reduce-scatter (no
/// parts for another collective). `stagingLimit` (COHORT_BUFFSIZE): what a
/// reduce-scatter's staging and the partial sums its cross ring holds in flight
/// may take together.
HierPlan hierarchicalPlan(const HierShape& shape, const Tuning& tuning, std::size_t stagingLimit);

}  // namespace cohort::collective
