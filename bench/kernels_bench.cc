// Kernel microbenchmark: dst = a (op) b for every type, op and SIMD path this
// processor runs, against memcpy of the same bytes (and the streaming copy), from
// 4 KiB (the size of the mesh's blocks, which stay in L1: the kernels' compute
// shows) to 64 MiB of output. GB/s counts output bytes per second; after the runs
// a table puts every kernel beside memcpy at each size.
//
//   build/bench/kernels_bench                                    # everything (minutes)
//   build/bench/kernels_bench --benchmark_filter='memcpy|sum/(bfloat16|float16|float)/'
//   build/bench/kernels_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"

namespace kernels = cohort::kernels;
using cohort::DataType;
using cohort::ReduceOp;

namespace {

constexpr std::size_t kMinBytes = 4 << 10;
constexpr std::size_t kMaxBytes = 64 << 20;
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin};

std::string sizeName(std::size_t bytes) {
  return bytes >= (1 << 20) ? fmt::format("{}MiB", bytes >> 20) : fmt::format("{}KiB", bytes >> 10);
}

// Three page-aligned buffers of kMaxBytes, written once so that no run takes page
// faults. Inputs are small integers (exact in every type: no NaN or denormal slows
// a path down).
struct Buffers {
  unsigned char* a;
  unsigned char* b;
  unsigned char* d;
  Buffers() {
    a = alloc(0x01);
    b = alloc(0x02);
    d = alloc(0x00);
  }
  static unsigned char* alloc(int fill) {
    auto* p = static_cast<unsigned char*>(std::aligned_alloc(4096, kMaxBytes));
    if (p == nullptr) std::abort();
    std::memset(p, fill, kMaxBytes);
    return p;
  }
};

Buffers& buffers() {
  static Buffers b;
  return b;
}

// What the summary needs of a benchmark: the row it belongs to and its size.
struct Entry {
  std::string row;  // "sum bfloat16 avx512", "memcpy", "stream copy avx512"
  std::size_t bytes;
};
std::map<std::string, Entry>& entries() {
  static std::map<std::string, Entry> e;
  return e;
}

template <typename Fn>
void add(const std::string& name, const std::string& row, std::size_t bytes, Fn fn) {
  entries()[name] = Entry{row, bytes};
  benchmark::RegisterBenchmark(name.c_str(), [bytes, fn](benchmark::State& state) {
    Buffers& buf = buffers();
    for (auto _ : state) {
      fn(buf, bytes);
      benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  })->UseRealTime();
}

void registerAll() {
  for (std::size_t bytes = kMinBytes; bytes <= kMaxBytes; bytes *= 4) {
    const std::string size = sizeName(bytes);
    add("memcpy/" + size, "memcpy", bytes,
        [](Buffers& b, std::size_t n) { std::memcpy(b.d, b.a, n); });
    for (int p = 0; p < kernels::kSimdPathCount; ++p) {
      const auto path = static_cast<kernels::SimdPath>(p);
      if (!kernels::pathSupported(path)) continue;
      const std::string pathName = kernels::simdPathName(path);
      add("stream_copy/" + pathName + "/" + size, "stream copy " + pathName, bytes,
          [path](Buffers& b, std::size_t n) { kernels::streamCopy(b.d, b.a, n, path); });
      for (int t = 0; t < cohort::kDataTypeCount; ++t) {
        const auto type = static_cast<DataType>(t);
        for (ReduceOp op : kOps) {
          const kernels::Reduction* r = &kernels::reductionFor(type, op, path);
          const std::string row = fmt::format("{} {} {}", cohort::reduceOpName(op),
                                              cohort::dataTypeName(type), pathName);
          add(fmt::format("{}/{}/{}/{}", cohort::reduceOpName(op), cohort::dataTypeName(type),
                          pathName, size),
              row, bytes, [r](Buffers& b, std::size_t n) { r->fn(b.d, b.a, b.b, n, r->context); });
        }
      }
    }
  }
}

// The console output, and every run's GB/s kept for the table (the median when
// there are repetitions).
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const bool single = r.repetitions <= 1 && r.run_type == Run::RT_Iteration;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      const auto it = r.counters.find("bytes_per_second");
      if ((single || median) && !r.error_occurred && it != r.counters.end()) {
        gbps[r.run_name.function_name] = it->second.value / 1e9;
      }
    }
  }
  std::map<std::string, double> gbps;
};

void printTable(const Collector& c) {
  std::map<std::string, std::map<std::size_t, double>> rows;  // row -> size -> GB/s
  std::vector<std::string> order;
  for (const auto& [name, e] : entries()) {
    const auto it = c.gbps.find(name);
    if (it == c.gbps.end()) continue;
    if (rows.count(e.row) == 0) order.push_back(e.row);
    rows[e.row][e.bytes] = it->second;
  }
  if (rows.empty()) return;
  const auto& copy = rows["memcpy"];
  std::string header = fmt::format("\n{:<28}", "GB/s (x memcpy)");
  for (std::size_t b = kMinBytes; b <= kMaxBytes; b *= 4) {
    header += fmt::format("{:>16}", sizeName(b));
  }
  fmt::print("{}\n", header);
  std::sort(order.begin(), order.end());
  for (const std::string& row : order) {
    std::string line = fmt::format("{:<28}", row);
    for (std::size_t b = kMinBytes; b <= kMaxBytes; b *= 4) {
      const auto it = rows[row].find(b);
      const auto ref = copy.find(b);
      if (it == rows[row].end()) {
        line += fmt::format("{:>16}", "-");
      } else if (ref == copy.end() || row == "memcpy") {
        line += fmt::format("{:>16.1f}", it->second);
      } else {
        const double ratio = it->second / ref->second;
        line += fmt::format("{:>16}", fmt::format("{:.1f} ({:.2f})", it->second, ratio));
      }
    }
    fmt::print("{}\n", line);
  }
  fmt::print("(output bytes per second; dst = a (op) b reads twice the bytes it writes)\n");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fmt::print("kernels_bench: the process's path is {}; paths run here:",
             kernels::simdPathName(kernels::activePath()));
  for (int p = 0; p < kernels::kSimdPathCount; ++p) {
    const auto path = static_cast<kernels::SimdPath>(p);
    fmt::print(" {}{}", kernels::simdPathName(path),
               kernels::pathSupported(path) ? "" : " (not this processor)");
  }
  fmt::print("\n");
  registerAll();
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  printTable(collector);
  benchmark::Shutdown();
  return 0;
}
