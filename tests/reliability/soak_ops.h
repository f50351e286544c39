// The soak test's operations: a reproducible random mix of collectives, types,
// reduce ops, sizes and forced algorithms, each run by every rank and checked
// element by element against the closed forms of collective/expect.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cohort/communicator.h"

namespace cohort::testing {

enum class SoakKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
  kAllToAll,
  kBarrier,
  kSendRecv,
};
constexpr int kSoakKinds = 10;

/// One operation of the mix; every rank runs the same one. A plain value.
struct SoakOp {
  SoakKind kind = SoakKind::kAllReduce;
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::size_t count = 0;  ///< per rank, as the collective's count argument
  int root = 0;
  bool inPlace = false;
  std::string algorithm;  ///< Communicator::setAlgorithm spec; "" = the built-in table

  /// "allreduce 1234 x bfloat16 max in-place root 0 [allreduce=ring]".
  std::string describe() const;
};

/// `n` operations for `ranks` ranks from `seed` (the same list on every call).
std::vector<SoakOp> makeSoakOps(std::size_t n, std::uint32_t seed, int ranks);

/// Called around one operation (each may be empty): before it is issued, after it is
/// issued and before the stream is synchronized, and after the synchronization (before
/// the result is checked; the communicator is not used after it, so it may destroy it).
struct SoakHooks {
  std::function<void()> beforeIssue, beforeSync, afterSync;
};

/// Runs `op` as this rank of `comm` on `stream`, synchronizes and checks the
/// result; returns "" or what went wrong. Call on the rank's thread.
std::string runSoakOp(const SoakOp& op, Communicator& comm, runtime::Stream* stream,
                      const SoakHooks& hooks = {});

const char* soakKindName(SoakKind kind);

}  // namespace cohort::testing
