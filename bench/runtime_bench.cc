// Runtime microbenchmarks: empty-task round trip, event hand-off between two
// streams, and async D2D memcpy bandwidth against plain memcpy.
//
//   build/bench/runtime_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>

#include "cohort/runtime.h"

namespace rt = cohort::runtime;

namespace {

void check(const cohort::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "runtime_bench: %s\n", s.toString().c_str());
    std::abort();
  }
}

// Enqueue one empty kernel, then synchronize: the latency of one stream task.
void BM_EmptyTaskRoundTrip(benchmark::State& state) {
  check(rt::setDevice(0));
  rt::Stream* s = nullptr;
  check(rt::streamCreate(&s));
  for (auto _ : state) {
    check(rt::launchKernel(s, [](rt::Stream*) { return cohort::Status::Ok(); }));
    check(rt::streamSynchronize(s));
  }
  check(rt::streamDestroy(s));
  check(rt::resetDevice(0));
}
BENCHMARK(BM_EmptyTaskRoundTrip)->UseRealTime();

// Stream A records an event, stream B waits on it and runs an empty kernel; the
// host waits for B: one event hand-off between streams per iteration.
void BM_EventHandoff(benchmark::State& state) {
  check(rt::setDevice(0));
  rt::Stream *a = nullptr, *b = nullptr;
  rt::Event* e = nullptr;
  check(rt::streamCreate(&a));
  check(rt::streamCreate(&b));
  check(rt::eventCreate(&e));
  for (auto _ : state) {
    check(rt::eventRecord(e, a));
    check(rt::streamWaitEvent(b, e));
    check(rt::launchKernel(b, [](rt::Stream*) { return cohort::Status::Ok(); }));
    check(rt::streamSynchronize(b));
  }
  check(rt::eventDestroy(e));
  check(rt::streamDestroy(a));
  check(rt::streamDestroy(b));
  check(rt::resetDevice(0));
}
BENCHMARK(BM_EventHandoff)->UseRealTime();

constexpr std::size_t kCopyBytes = 64 << 20;

void BM_MemcpyAsyncD2D(benchmark::State& state) {
  check(rt::setDevice(0));
  void *src = nullptr, *dst = nullptr;
  check(rt::deviceMalloc(&src, kCopyBytes));
  check(rt::deviceMalloc(&dst, kCopyBytes));
  std::memset(src, 1, kCopyBytes);
  std::memset(dst, 0, kCopyBytes);
  rt::Stream* s = nullptr;
  check(rt::streamCreate(&s));
  for (auto _ : state) {
    check(rt::memcpyAsync(dst, kCopyBytes, src, kCopyBytes, rt::MemcpyKind::kDeviceToDevice, s));
    check(rt::streamSynchronize(s));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kCopyBytes));
  check(rt::streamDestroy(s));
  check(rt::deviceFree(src));
  check(rt::deviceFree(dst));
  check(rt::resetDevice(0));
}
BENCHMARK(BM_MemcpyAsyncD2D)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_PlainMemcpy(benchmark::State& state) {
  auto* src = static_cast<char*>(std::aligned_alloc(4096, kCopyBytes));
  auto* dst = static_cast<char*>(std::aligned_alloc(4096, kCopyBytes));
  std::memset(src, 1, kCopyBytes);
  std::memset(dst, 0, kCopyBytes);
  for (auto _ : state) {
    std::memcpy(dst, src, kCopyBytes);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kCopyBytes));
  std::free(src);
  std::free(dst);
}
BENCHMARK(BM_PlainMemcpy)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
