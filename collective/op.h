// One collective operation as the communicator passes it down to algorithms.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cohort/communicator.h"

namespace cohort::collective {

enum class Coll : int {
  kAllReduce = 0, kAllGather, kAllGatherV, kReduceScatter, kReduceScatterV, kBroadcast,
  kReduce, kGather, kScatter, kAllToAll, kAllToAllV, kSendRecv, kBarrier,
};
constexpr int kCollCount = 13;
const char* collName(Coll c);

struct OpDesc {
  Coll coll = Coll::kAllReduce;
  const void* input = nullptr;
  void* output = nullptr;
  std::size_t count = 0;  // nccl-tests meaning: allreduce total, allgather per rank, ...
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  // V-variants: counts and displacements in elements.
  std::vector<std::size_t> counts, displs, counts2, displs2;
  std::vector<SendRecvItem> items;  // batch send/recv
  std::uint64_t seq = 0;

  bool inPlace() const { return input == output; }
  /// *this = from, without touching the vectors when neither has any (a small
  /// call's bookkeeping copies its description a few times).
  void assign(const OpDesc& from);
  /// Bytes of this rank's input / output on `n` ranks (fixed-size collectives).
  std::size_t inputBytes(int n) const;
  std::size_t outputBytes(int n) const;
  /// What every rank must agree on: checked against the peers' before data moves.
  std::array<std::uint64_t, 4> fingerprint() const;
  /// "allreduce #12 (1024 x float, sum)".
  std::string describe() const;
};

/// Explains the first difference between two fingerprints: "count: 1024 vs 2048".
std::string fingerprintDiff(const std::array<std::uint64_t, 4>& mine,
                            const std::array<std::uint64_t, 4>& theirs);
/// The one error of every argument check (the executor's exchange, the mesh's
/// slots): kMismatch naming this rank and `peer`, the `difference` and this
/// rank's call (OpDesc::describe()).
Status mismatchError(int rank, int peer, const std::string& difference,
                     const std::string& thisCall);

}  // namespace cohort::collective
