// The collective layer's size decisions, in one place: every threshold an algorithm
// choice, a launch mode, a pipeline or the mesh's blocking reads. Built once per
// communicator from the node's shape (Tuning::forNode); collective/TUNING.md keeps
// the measurements behind each value. The kernels' own sizes are kernels/tuning.h,
// the mesh's shared slots collective/mesh_layout.h (part of the protocol).
#pragma once

#include <cstddef>

namespace cohort::collective {

/// A plain value, copied into whoever decides by it (the communicator's Topology,
/// its mesh). All sizes are bytes.
struct Tuning {
  /// More ranks on this node than processors: waits yield to the awaited rank,
  /// and work stays off extra threads.
  bool crowded = false;

  // Algorithm choice (selector.cc, comm_run.cc, hierarchy.cc, staging.cc).
  /// Allreduce by halving-doubling (latency-bound) up to here, by ring above.
  std::size_t halvingDoublingMax = 64 << 10;
  /// "hd" allreduce exchanges whole vectors (recursive doubling) up to here.
  std::size_t recursiveDoublingMax = 16 << 10;
  /// Broadcast by tree up to here, by chain above.
  std::size_t treeBroadcastMax = 256 << 10;
  /// One round with every message in flight while a rank receives (a broadcast's
  /// root sends) at most this much: allgather, alltoall, reduce-scatter, broadcast.
  std::size_t linearMax = 64 << 10;
  /// The hierarchical allreduce's cross-node step by halving-doubling up to here.
  std::size_t crossHalvingDoublingMax = 64 << 10;

  // Pipelines (comm_run.cc, hierarchy.cc).
  /// The ring allreduce's chunk: blocks above it move through the ring a round apart.
  std::size_t ringChunkBytes = 512 << 10;
  /// The chain broadcast's chunk.
  std::size_t chainChunkBytes = 512 << 10;

  // The executor (executor.cc).
  /// A first round receiving at most this much carries the argument check.
  std::size_t fusedCheckBytes = 64 << 10;

  // The mesh (its schedules, algorithms_direct.cc; mesh.cc, mesh_sync.cc).
  /// What a rank may read from its peers' slots for a staged (posted or eager)
  /// call; a reducing call half of it.
  std::size_t meshStagedBytes = 16 << 10;
  /// Reduction blocks kept in cache: several inputs, two inputs, and a block
  /// reduced into an output that the others copy from.
  std::size_t meshChunkBytes = 32 << 10;
  std::size_t meshPairChunkBytes = 4 << 10;
  std::size_t meshIntoChunkBytes = 8 << 10;
  /// On a crowded node, a broadcast's ranks copy the root's buffer themselves up
  /// to here (0: never; with more than two ranks per processor, at every size).
  std::size_t meshPulledBroadcastMax = 0;
  /// Pauses before a barrier's first timed wait (0 on a crowded node).
  int meshQuickLooks = 128;
  /// Non-temporal stores once an operation's buffers on all ranks together
  /// outgrow this (the last-level cache); below it the outputs stay in cache.
  std::size_t meshStreamingBytes = 32 << 20;

  /// The values for a node of `ranksOnNode` ranks sharing `processors` (<= 0:
  /// unknown, taken as enough) and a last-level cache of `cacheBytes`.
  static Tuning forNode(int ranksOnNode, long processors, std::size_t cacheBytes);
  /// forNode with this machine's processors (common/wait.h's processors()) and
  /// cache (COHORT_CACHE_BYTES, else sysfs, else 32 MiB).
  static Tuning forThisNode(int ranksOnNode);
};

}  // namespace cohort::collective
