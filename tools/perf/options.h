// cohort-perf's command line: nccl-tests' letters and meaning (-b -e -f -i -n -w -c
// -d -o -r -z -a), the peers harness's -B budget and -L label, Cohort's -A algorithm
// and -t transport, and hccl_test's mode (--hccl, -p).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "tools/perf/collectives.h"

namespace cohort::perf {

/// Everything the command line decides. A plain value.
struct PerfOptions {
  std::vector<Coll> collectives;                 ///< COLLECTIVE: one, a comma list, or "all"
  bool allCollectives = false;                   ///< COLLECTIVE was "all"
  std::size_t minBytes = 1024;                   ///< -b
  std::size_t maxBytes = std::size_t(64) << 20;  ///< -e
  double factor = 4.0;                           ///< -f (<= 1: additive steps of stepBytes)
  std::size_t stepBytes = 0;                     ///< -i
  int iters = 20;                                ///< -n
  int warmup = 5;                                ///< -w
  std::size_t budget = 0;  ///< -B: iters = min(n, max(2, B/size)), warmup = min(w, max(1, iters/4))
  int average = 1;         ///< -a: 0 rank 0, 1 mean, 2 min, 3 max over ranks
  int check = 1;           ///< -c
  std::vector<DataType> types;  ///< -d (several for "all")
  std::string typeArg = "float";
  std::vector<ReduceOp> ops;  ///< -o (several for "all")
  std::string opArg = "sum";
  int root = 0;                 ///< -r
  bool inPlace = false;         ///< -z 1: also in place
  std::string algorithm;        ///< -A: "ring" or a whole spec "allreduce=ring;..."
  std::string transport;        ///< -t: COHORT_TRANSPORT for this run
  std::string label;            ///< -L: transport label in the output (default: chosen)
  std::string jsonPath;         ///< --json
  std::string plotPath;         ///< --plot
  bool hccl = false;            ///< --hccl: hccl_test's output and size rules
  int npus = 0;                 ///< -p (hccl_test): NPUs per node, checked against devices
  bool streamOverhead = false;  ///< --stream-overhead
  std::string traceDir;         ///< --trace: COHORT_TRACE for this run
  bool injectError = false;     ///< --inject-error (hidden): corrupt one checked element
};

/// Parses argv. Returns -1 when the program should go on, otherwise the exit status
/// (0 after --help, 2 for a bad command line, with the message on stderr).
int parseOptions(int argc, char** argv, PerfOptions* out);

/// "1K" -> 1024, "64M", "1G", "4096", "1KiB"; lower-case units too. False if malformed.
bool parseSize(const std::string& text, std::size_t* bytes);

/// The measured iterations and warm-up calls for one size (-B budget applied).
void budgetIterations(const PerfOptions& options, std::size_t bytes, int* iters, int* warmup);

}  // namespace cohort::perf
