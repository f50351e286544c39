// The direct algorithms among the ranks of one node, which map each other's
// buffers (the mesh): schedule builders, pure rank and block arithmetic. Each
// rank takes a share of the data and reads and writes every member's buffers in
// place, in cache-sized chunks, between an arrival and a completion barrier.
// Private to collective/.
#pragma once

#include <cstddef>

#include "collective/op.h"
#include "collective/schedule.h"
#include "collective/tuning.h"

namespace cohort::collective {

/// What a direct schedule depends on besides the rank and the group's size.
struct DirectShape {
  Coll coll = Coll::kAllReduce;
  std::size_t count = 0;  // elements, OpDesc's meaning
  std::size_t elem = 0;   // bytes per element
  int root = 0;
  bool average = false;  // ReduceOp::kAvg: the reduced blocks are divided by the size
  /// This rank's output lies over its input where its share of the work would
  /// reduce into it (allreduce: in place; reduce-scatter: the output is the
  /// input's own block), or, for an allgather, its input is its block of the output.
  bool overInput = false;
  /// The buffers of all ranks together outgrow the last-level cache
  /// (Tuning::meshStreamingBytes): copies into outputs bypass the cache.
  bool streaming = false;
  /// An allreduce's node part in a hierarchical allreduce: round 1 reduces this
  /// rank's block into its output (the caller reduces it across nodes), round 2
  /// puts it into the other members' outputs.
  bool hierarchical = false;
  bool operator==(const DirectShape& o) const {
    return coll == o.coll && count == o.count && elem == o.elem && root == o.root &&
           average == o.average && overInput == o.overInput && streaming == o.streaming &&
           hierarchical == o.hierarchical;
  }
};

/// The schedule (Schedule::shared) of `shape` for group rank `rank` of `size`:
/// allreduce, reduce-scatter, reduce, allgather, broadcast, gather, scatter,
/// alltoall and barrier. The scratch it uses (Buf::kScratch, scratchBytes) is
/// one chunk for reductions that cannot run in an output.
Schedule directSchedule(int rank, int size, const DirectShape& shape, const Tuning& tuning);

}  // namespace cohort::collective
