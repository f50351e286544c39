// The floor under a small posted allreduce on this machine: two threads pinned to
// two processors exchange a float32 buffer through a ring of slots in one shared
// region, as the mesh's posted calls do, with nothing of a library around it. A
// call writes this thread's input into its next slot, publishes the call's
// number, waits for the peer's, and sums both slots into an output with the
// library's reduction kernel; a slot is reused once the peer finished the call
// that last used it. What a call of cohort-perf takes beyond this is the
// communicator's own work (checks, queue, stream, history). Both threads spin:
// it needs two processors.
//
//   build/bench/exchange_floor                      # 1 KiB, 3 rounds of 2 000 000 calls
//   build/bench/exchange_floor --bytes 4096 --calls 500000
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "cohort/communicator.h"
#include "kernels/reduce.h"
#include "launcher/launch_plan.h"

namespace {

constexpr int kSlots = 8;  // as many calls as a thread may run ahead of the other

// One thread's ring: its slots' data and call numbers, and the calls it finished.
// Each field that the other thread polls has a cache line of its own.
struct Ring {
  struct alignas(64) Call {
    std::atomic<long> number{0};
  };
  std::vector<char> data;  // kSlots slots of `bytes`
  Call posted[kSlots];
  alignas(64) std::atomic<long> finished{0};
};

// The first two processors this process may run on (-1 where there is none).
std::pair<int, int> twoProcessors() {
  std::vector<int> cpus = cohort::launcher::allowedCpus();
  cpus.resize(2, -1);
  return {cpus[0], cpus[1]};
}

void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Runs `calls` exchanges as thread `me` (0 or 1); returns microseconds per call.
double exchange(int me, Ring* rings, std::size_t bytes, long calls, int cpu, float* checksum) {
  pin(cpu);
  const auto& reduce =
      cohort::kernels::reductionFor(cohort::DataType::kFloat32, cohort::ReduceOp::kSum);
  std::vector<float> in(bytes / sizeof(float), static_cast<float>(me + 1));
  std::vector<float> out(in.size());
  Ring& mine = rings[me];
  Ring& theirs = rings[1 - me];
  const auto start = std::chrono::steady_clock::now();
  for (long c = 1; c <= calls; ++c) {
    const std::size_t i = static_cast<std::size_t>((c - 1) % kSlots);
    while (c > kSlots && theirs.finished.load(std::memory_order_acquire) < c - kSlots) {
    }
    std::memcpy(mine.data.data() + i * bytes, in.data(), bytes);
    mine.posted[i].number.store(c, std::memory_order_release);
    while (theirs.posted[i].number.load(std::memory_order_acquire) != c) {
    }
    // In rank order, as the mesh reduces.
    reduce.fn(out.data(), rings[0].data.data() + i * bytes, rings[1].data.data() + i * bytes, bytes,
              reduce.context);
    mine.finished.store(c, std::memory_order_release);
  }
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  *checksum = out.empty() ? 0.0f : out.back();
  return took.count() / static_cast<double>(calls);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t bytes = 1024;
  long calls = 2000000;
  int rounds = 3;
  CLI::App app{
      "Two pinned threads exchanging a buffer through a ring of slots: the floor "
      "under a small posted allreduce"};
  app.add_option("--bytes", bytes, "bytes per call (whole float32s)")
      ->check(CLI::Range(4, 1 << 20));
  app.add_option("--calls", calls, "calls per round")->check(CLI::Range(1L, 1L << 40));
  app.add_option("--rounds", rounds, "rounds")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  bytes -= bytes % sizeof(float);
  const auto [cpu0, cpu1] = twoProcessors();
  std::printf("# exchange_floor: %zu bytes, %ld calls a round, processors %d and %d\n", bytes,
              calls, cpu0, cpu1);
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    Ring rings[2];
    for (auto& ring : rings) ring.data.assign(bytes * kSlots, 0);
    double t1 = 0;
    float sum0 = 0, sum1 = 0;
    std::thread peer([&] { t1 = exchange(1, rings, bytes, calls, cpu1, &sum1); });
    const double t0 = exchange(0, rings, bytes, calls, cpu0, &sum0);
    peer.join();
    if (sum0 != 3.0f || sum1 != 3.0f) {
      std::fprintf(stderr, "exchange_floor: wrong sums %g and %g (want 3)\n", sum0, sum1);
      return 1;
    }
    std::printf("round %d: %.3f / %.3f us per call\n", r + 1, t0, t1);
    times.push_back(std::max(t0, t1));
  }
  std::sort(times.begin(), times.end());
  std::printf("median: %.3f us per call\n", times[times.size() / 2]);
  return 0;
}
