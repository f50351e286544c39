// What a cohort-perf run measured, as plain values the reporters (text, hccl_test
// text, JSON, SVG) turn into output.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/perf/bench_case.h"

namespace cohort::perf {

/// One size of one block: the nine nccl-tests columns plus iterations and algorithm.
struct RowResult {
  std::size_t bytes = 0;  ///< "size" (nccl-tests) or data_size (hccl_test)
  std::size_t count = 0;
  int iters = 0;
  double timeUs = 0;  ///< per call, combined over ranks as -a says
  double algbw = 0;   ///< GB/s, 1 GB = 1e9 B
  double busbw = 0;
  long long wrong = -1;  ///< summed over ranks; -1 = not checked (-c 0)
  std::string algo;      ///< what the communicator chose, e.g. "mesh/shm"
};

/// One "# Collective:" block.
struct BlockResult {
  CaseSpec spec;
  std::string name;  ///< e.g. allreduce, reduce_scatter_half_max_inplace
  std::string note;  ///< e.g. why -A did not apply; empty if none
  std::vector<RowResult> rows;
  long long wrong = 0;
  double avgBusbw = 0;
};

/// The header facts.
struct RunInfo {
  std::string libraryVersion;
  int apiVersion = 0;
  int protocolVersion = 0;
  int nranks = 0;
  int nodes = 0;
  int localRanks = 0;
  int device = -1;
  std::string transport;  ///< label printed in every "# Collective:" line
  std::string choice;     ///< lastChoice() after the warm-up probe
};

/// --stream-overhead: an 8-byte float sum allreduce, per call.
struct StreamOverhead {
  int calls = 0;
  double pipelinedUs = 0;     ///< back to back, one synchronize at the end
  double synchronizedUs = 0;  ///< synchronize after every call
  double blockingUs = 0;      ///< the default stream, synchronized after every call
};

}  // namespace cohort::perf
