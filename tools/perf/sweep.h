// The measurement loop, as coll_bench_common.h's runBench does it: per size,
// warm-up calls, a barrier, `iters` back-to-back calls on one stream and one
// synchronize (time = elapsed / iters on each rank, then combined over ranks through
// the communicator), then the check: inputs re-filled, outputs poisoned, one more
// call, every element compared, wrong elements summed over ranks.
#pragma once

#include <functional>
#include <vector>

#include "cohort/communicator.h"
#include "tools/perf/options.h"
#include "tools/perf/results.h"

namespace cohort::perf {

/// Seconds on the steady clock, for timing loops.
double nowSeconds();

/// Called on every rank; only rank 0 prints.
class SweepListener {
 public:
  virtual ~SweepListener() = default;
  virtual void blockStarted(const BlockResult& block) = 0;
  /// A size is about to run (index of total, from 1).
  virtual void sizeStarted(const BlockResult& block, std::size_t bytes, int index, int total) = 0;
  virtual void rowDone(const BlockResult& block, const RowResult& row) = 0;
  virtual void blockDone(const BlockResult& block) = 0;
};

/// Runs the sweep of every block on one rank. Borrows the communicator and stream;
/// owns the buffers. One thread.
class Sweep {
 public:
  Sweep(Communicator* comm, runtime::Stream* stream, const PerfOptions& options);
  ~Sweep();
  Sweep(const Sweep&) = delete;
  Sweep& operator=(const Sweep&) = delete;

  /// Allocates the buffers (largest size of the sweep) and the statistics buffer.
  Status prepare();
  /// Runs one 8-byte allreduce and returns lastChoice(), e.g. "allreduce=mesh shm".
  Status probe(std::string* choice);
  /// Every block the options ask for, in order.
  std::vector<BlockResult> plan() const;
  Status runBlock(BlockResult* block, SweepListener* listener);
  /// --stream-overhead.
  Status measureStreamOverhead(StreamOverhead* out);

  /// v[0..n) combined over ranks (sum, min or max) through the communicator.
  Status reduceDoubles(double* v, int n, ReduceOp op);
  Status barrier();

 private:
  Status applyAlgorithm(BlockResult* block);
  Status runSize(const BlockResult& block, std::size_t requested, RowResult* row);
  Status timeCalls(const BenchCase& bench, int iters, double* seconds);
  std::vector<std::size_t> sizes() const;

  Communicator* comm_;
  runtime::Stream* stream_;
  PerfOptions options_;
  DeviceBuffers buffers_;
  void* stats_ = nullptr;  ///< 4 doubles of device memory
};

}  // namespace cohort::perf
