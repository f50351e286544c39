// cohort-perf's text output on stdout (rank 0 only): the peers' format
// (../shared/peers/README.md "Output format") line for line, or hccl_test's table
// with --hccl; and a progress line on stderr while a sweep runs.
#pragma once

#include <cstdio>

#include "tools/perf/options.h"
#include "tools/perf/results.h"
#include "tools/perf/sweep.h"

namespace cohort::perf {

/// Prints as the sweep goes. Holds no state but what it prints; one thread.
class TextReport : public SweepListener {
 public:
  /// print: this rank writes the tables (rank 0); progress: also the stderr line.
  TextReport(const PerfOptions& options, bool print, bool progress, std::FILE* out = stdout);

  void header(const RunInfo& info);
  void blockStarted(const BlockResult& block) override;
  void sizeStarted(const BlockResult& block, std::size_t bytes, int index, int total) override;
  void rowDone(const BlockResult& block, const RowResult& row) override;
  void blockDone(const BlockResult& block) override;
  void streamOverhead(const StreamOverhead& overhead);

 private:
  void clearProgress();

  const PerfOptions& options_;
  bool print_;
  bool progress_;
  std::FILE* out_;
  int blocksStarted_ = 0;
  RunInfo info_;
};

}  // namespace cohort::perf
