// One collective at one size on one rank: issue the call, fill the inputs, check
// the outputs. The buffers are device memory allocated once at the largest size of
// the sweep and reused (first-touch page faults are slow: they would be measured).
#pragma once

#include <cstddef>

#include "cohort/communicator.h"
#include "cohort/runtime.h"
#include "tools/perf/collectives.h"
#include "tools/perf/data_pattern.h"

namespace cohort::perf {

/// What one block of the output measures.
struct CaseSpec {
  Coll coll = Coll::kAllReduce;
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;  ///< reductions only
  bool inPlace = false;          ///< nccl-tests in-place pointers (broadcast: always)
  int root = 0;                  ///< broadcast and reduce
};

/// A rank's send and receive buffers on its device. Owns them; frees them on
/// destruction. Not thread-safe.
class DeviceBuffers {
 public:
  DeviceBuffers() = default;
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;

  /// Allocates both buffers with `bytes` each on the current device and touches
  /// every page once, on `stream`, so no timed call takes a page fault.
  Status allocate(std::size_t bytes, runtime::Stream* stream);
  char* send() const { return send_; }
  char* recv() const { return recv_; }
  std::size_t bytes() const { return bytes_; }

 private:
  char* send_ = nullptr;
  char* recv_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Borrows everything it is given; lives for one size of one block.
class BenchCase {
 public:
  BenchCase(Communicator* comm, runtime::Stream* stream, const DeviceBuffers& buffers,
            const CaseSpec& spec, const Layout& layout, const Pattern& pattern);

  /// Enqueues one call of the collective on the stream.
  Status launch() const;
  /// Enqueues the filling of the inputs with the pattern; poison: outputs that are
  /// separate buffers are set to a sentinel no correct result has (all bits set).
  Status fill(bool poison) const;
  /// Enqueues the comparison of every checked output element with its closed form
  /// and waits for it. injectError: first flips one bit of this rank's output if it
  /// is the rank whose output is checked (rank 1, or the root for reduce).
  Status check(bool injectError, long long* wrong) const;

 private:
  std::size_t elementSize() const { return typeInfo(spec_.type).size; }
  char* at(char* base, std::size_t elements) const { return base + elements * elementSize(); }
  /// Where this rank's checked output starts and how many elements it has.
  char* checkedOutput(std::size_t* count) const;
  long long countWrong() const;

  Communicator* comm_;
  runtime::Stream* stream_;
  const DeviceBuffers& buffers_;
  CaseSpec spec_;
  Layout layout_;
  const Pattern& pattern_;
  int rank_;
  int size_;
};

}  // namespace cohort::perf
