#include "tools/perf/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "common/config.h"
#include "tools/perf/data_pattern.h"

namespace cohort::perf {

namespace {

// The raw strings and presence of options that need more than a type conversion.
struct RawArgs {
  std::string collective, minBytes, maxBytes, stepBytes, budget;
  bool hasMin = false, hasMax = false, hasFactor = false, hasStep = false, hasAverage = false;
};

void addOptions(CLI::App& app, PerfOptions* o, RawArgs* raw) {
  app.add_option("collective", raw->collective,
                 "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv, "
                 "a comma list of them, or all")
      ->required();
  app.add_option("-b,--minbytes", raw->minBytes, "Smallest size (default 1K; K/M/G suffixes)");
  app.add_option("-e,--maxbytes", raw->maxBytes, "Largest size (default 64M)");
  app.add_option("-f,--stepfactor", o->factor, "Size multiplier between steps (default 4)");
  app.add_option("-i,--stepbytes", raw->stepBytes, "Additive step between sizes (without -f)");
  app.add_option("-n,--iters", o->iters, "Timed iterations per size (default 20)")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("-w,--warmup_iters", o->warmup, "Warm-up iterations per size (default 5)")
      ->check(CLI::Range(0, 1 << 30));
  app.add_option(
      "-B,--budget", raw->budget,
      "Bytes per size: iters = min(n, max(2, B/size)), warmup = min(w, max(1, iters/4))");
  app.add_option("-a,--average", o->average, "Time over ranks: 0 rank 0, 1 mean, 2 min, 3 max")
      ->check(CLI::Range(0, 3));
  app.add_option("-c,--check", o->check, "Check every element (1, default) or not (0)")
      ->check(CLI::Range(0, 2));
  app.add_option("-d,--datatype", o->typeArg,
                 "float, half, bfloat16, double, int8, uint8, int16, uint16, int32, uint32, "
                 "int64, uint64 (or fp32, fp16, bfp16, fp64) or all");
  app.add_option("-o,--op", o->opArg, "sum, prod, max, min, avg or all");
  app.add_option("-r,--root", o->root, "Root of broadcast and reduce (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("-z,--inplace", o->inPlace, "1: also run in place");
  app.add_option("-A,--algorithm", o->algorithm,
                 "Algorithm for the collective (ring, hd, mesh, tree, chain, ...) or a whole "
                 "COHORT_ALGO spec");
  app.add_option("-t,--transport", o->transport, "COHORT_TRANSPORT for this run")
      ->check(CLI::IsMember({"auto", "shm", "tcp", "rdma"}));
  app.add_option("-L,--label", o->label, "Transport label printed (default: the one chosen)");
  app.add_option("--json", o->jsonPath, "Also write the results as JSON to this file");
  app.add_option("--plot", o->plotPath, "Draw busbw against size to this SVG file");
  app.add_flag("--hccl", o->hccl, "hccl_test's output columns and size rules");
  app.add_option("-p,--npus", o->npus, "hccl_test: NPUs per node (checked against devices)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--trace", o->traceDir,
                 "Write each rank's timeline (Chrome trace) into this folder (COHORT_TRACE); "
                 "cohort-trace merge DIR joins them");
  app.add_flag("--stream-overhead", o->streamOverhead,
               "Also time an 8-byte allreduce: pipelined, synchronized after every call, and "
               "on the default stream synchronized after every call");
  app.add_flag("--inject-error", o->injectError, "Corrupt one checked element (tests)")->group("");
}

int usageError(const std::string& message) {
  std::fprintf(stderr, "cohort-perf: %s\n", message.c_str());
  return 2;
}

int resolveSizes(const RawArgs& raw, PerfOptions* o) {
  if (o->hccl) {  // hccl_test's defaults: one size, 64M, additive steps
    if (!raw.hasMin) o->minBytes = std::size_t(64) << 20;
    if (!raw.hasFactor) o->factor = 0;
  }
  if (raw.hasMin && !parseSize(raw.minBytes, &o->minBytes)) {
    return usageError("-b " + raw.minBytes + ": expected a size such as 1024, 1K, 64M or 1G");
  }
  if (raw.hasMax && !parseSize(raw.maxBytes, &o->maxBytes)) {
    return usageError("-e " + raw.maxBytes + ": expected a size such as 1024, 1K, 64M or 1G");
  }
  if (raw.hasStep && !parseSize(raw.stepBytes, &o->stepBytes)) {
    return usageError("-i " + raw.stepBytes + ": expected a size");
  }
  if (!raw.budget.empty() && !parseSize(raw.budget, &o->budget)) {
    return usageError("-B " + raw.budget + ": expected a size such as 512M");
  }
  if (o->minBytes == 0 || o->maxBytes < o->minBytes) {
    return usageError("sizes: -b must be > 0 and -e >= -b (got " + std::to_string(o->minBytes) +
                      " and " + std::to_string(o->maxBytes) + ")");
  }
  if (raw.hasFactor && o->factor <= 1.0) {
    return usageError("-f " + std::to_string(o->factor) + ": the factor must be greater than 1");
  }
  if (raw.hasStep && !raw.hasFactor) o->factor = 0;  // additive steps
  if (o->factor <= 1.0 && !raw.hasStep) {
    o->stepBytes = std::max<std::size_t>(1, (o->maxBytes - o->minBytes) / 10);
  }
  return -1;
}

int resolveTypesAndOps(PerfOptions* o) {
  if (o->typeArg == "all") {
    o->types = allTypes();
  } else {
    DataType t;
    if (!parseType(o->typeArg, &t)) return usageError("-d " + o->typeArg + ": unknown type");
    o->types = {t};
  }
  if (o->opArg == "all") {
    o->ops = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg};
    return -1;
  }
  ReduceOp op;
  if (!parseOp(o->opArg, &op)) {
    return usageError("-o " + o->opArg + ": expected sum, prod, max, min, avg or all");
  }
  o->ops = {op};
  if (op == ReduceOp::kAvg && o->typeArg != "all" && !isFloatType(o->types[0])) {
    return usageError("-o avg needs a floating-point type (float, half, bfloat16, double), not " +
                      o->typeArg);
  }
  return -1;
}

int resolve(const RawArgs& raw, PerfOptions* o) {
  if (raw.collective == "all") {
    o->allCollectives = true;
    o->collectives = allCollectives();
  } else {
    std::stringstream list(raw.collective);
    std::string name;
    while (std::getline(list, name, ',')) {
      Coll c;
      if (!parseColl(name, &c)) {
        return usageError("unknown collective '" + name +
                          "'; expected allreduce, allgather, reducescatter, broadcast, reduce, "
                          "alltoall, sendrecv, a comma list of them, or all");
      }
      o->collectives.push_back(c);
    }
    if (o->collectives.empty()) return usageError("no collective given");
  }
  if (o->hccl && !raw.hasAverage) o->average = 0;  // hccl_test reports the root's own time
  int rc = resolveSizes(raw, o);
  if (rc >= 0) return rc;
  rc = resolveTypesAndOps(o);
  if (rc >= 0) return rc;
  if (!o->plotPath.empty() &&
      (o->plotPath.size() < 4 || o->plotPath.compare(o->plotPath.size() - 4, 4, ".svg") != 0)) {
    return usageError("--plot " + o->plotPath +
                      ": only SVG is written (name it .svg; convert with rsvg-convert for PNG)");
  }
  return -1;
}

}  // namespace

bool parseSize(const std::string& text, std::size_t* bytes) {
  std::string t = text;
  const auto unit = std::find_if(t.begin(), t.end(), [](char c) { return std::isalpha(c); });
  if (unit != t.end()) *unit = static_cast<char>(std::toupper(static_cast<unsigned char>(*unit)));
  std::uint64_t v = 0;
  if (!parseByteSize(t, &v)) return false;
  *bytes = static_cast<std::size_t>(v);
  return true;
}

void budgetIterations(const PerfOptions& options, std::size_t bytes, int* iters, int* warmup) {
  *iters = options.iters;
  *warmup = options.warmup;
  if (options.budget == 0 || bytes == 0) return;
  const std::size_t capped = std::max<std::size_t>(2, options.budget / bytes);
  *iters = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(options.iters), capped));
  *warmup = std::min(options.warmup, std::max(1, *iters / 4));
}

int parseOptions(int argc, char** argv, PerfOptions* out) {
  CLI::App app{
      "cohort-perf: nccl-tests/hccl_test-style benchmark of Cohort's collectives. "
      "Run one process per rank: cohortrun -n N cohort-perf allreduce -b 1K -e 64M"};
  PerfOptions o;
  RawArgs raw;
  addOptions(app, &o, &raw);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  raw.hasMin = app.count("-b") > 0;
  raw.hasMax = app.count("-e") > 0;
  raw.hasFactor = app.count("-f") > 0;
  raw.hasStep = app.count("-i") > 0;
  raw.hasAverage = app.count("-a") > 0;
  const int rc = resolve(raw, &o);
  if (rc >= 0) return rc;
  *out = std::move(o);
  return -1;
}

}  // namespace cohort::perf
