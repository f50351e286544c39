// An AscendC kernel against a plain C++ loop: z = x + y over two vectors of
// 64 Mi floats, the kernel as 16 blocks on the device's AI Cores, the loop split over
// as many threads as the device has AI Core threads (COHORT_AICORE_THREADS, by
// default one per processor). Prints the median of each over `rounds` interleaved
// rounds and the kernel's speed as a fraction of the loop's (issue floor: 0.5).
//   ascendc_bench [elements (default 67108864)] [rounds (default 3)] [blocks (default 16)]
#include <acl/acl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/config.h"
#include "common/wait.h"

uint32_t LaunchBenchAdd(uint32_t blockDim, void* stream, float* x, float* y, float* z,
                        uint64_t perBlock);

namespace {

double seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The reference: the same sum, as a plain loop on `threads` threads.
__attribute__((noinline)) void plainAdd(const float* x, const float* y, float* z, uint64_t n,
                                        int threads) {
  std::vector<std::thread> pool;
  const uint64_t per = n / threads;
  for (int t = 0; t < threads; ++t) {
    const uint64_t begin = per * t;
    const uint64_t end = t + 1 == threads ? n : begin + per;
    pool.emplace_back([=] {
      for (uint64_t i = begin; i < end; ++i) z[i] = x[i] + y[i];
    });
  }
  for (auto& th : pool) th.join();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int check(aclError e, const char* what) {
  if (e != ACL_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d: %s\n", what, e, aclGetRecentErrMsg());
    std::exit(1);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (64ull << 20);
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const uint32_t blocks = argc > 3 ? static_cast<uint32_t>(std::atoi(argv[3])) : 16;
  int threads = cohort::Config::global().aicoreThreads;
  if (threads == 0) threads = static_cast<int>(std::max(cohort::processors(), 1L));

  check(aclInit(nullptr), "aclInit");
  check(aclrtSetDevice(0), "aclrtSetDevice");
  aclrtStream stream = nullptr;
  check(aclrtCreateStream(&stream), "aclrtCreateStream");
  const size_t bytes = n * sizeof(float);
  float *x = nullptr, *y = nullptr, *z = nullptr;
  check(aclrtMalloc(reinterpret_cast<void**>(&x), bytes, ACL_MEM_MALLOC_HUGE_FIRST), "x");
  check(aclrtMalloc(reinterpret_cast<void**>(&y), bytes, ACL_MEM_MALLOC_HUGE_FIRST), "y");
  check(aclrtMalloc(reinterpret_cast<void**>(&z), bytes, ACL_MEM_MALLOC_HUGE_FIRST), "z");
  for (uint64_t i = 0; i < n; ++i) {  // also faults every page in before timing
    x[i] = static_cast<float>(i % 1000);
    y[i] = 0.5f;
    z[i] = 0;
  }
  std::vector<float> reference(n);

  std::vector<double> kernelTimes, loopTimes;
  for (int r = 0; r < rounds + 1; ++r) {  // round 0 warms up
    auto start = std::chrono::steady_clock::now();
    check(LaunchBenchAdd(blocks, stream, x, y, z, n / blocks), "kernel launch");
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    const double k = seconds(start);
    start = std::chrono::steady_clock::now();
    plainAdd(x, y, reference.data(), n, threads);
    const double l = seconds(start);
    if (r > 0) {
      kernelTimes.push_back(k);
      loopTimes.push_back(l);
    }
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (z[i] != reference[i]) {
      std::fprintf(stderr, "element %llu: kernel %g, loop %g\n", static_cast<unsigned long long>(i),
                   z[i], reference[i]);
      return 1;
    }
  }
  const double k = median(kernelTimes), l = median(loopTimes);
  const double gb = 3.0 * bytes / 1e9;
  std::printf("elements %llu, kernel %u blocks, loop and AI Cores %d threads, %d rounds\n",
              static_cast<unsigned long long>(n), blocks, threads, rounds);
  std::printf("kernel      median %8.2f ms  %6.2f GB/s\n", k * 1e3, gb / k);
  std::printf("plain loop  median %8.2f ms  %6.2f GB/s\n", l * 1e3, gb / l);
  std::printf("kernel speed / loop speed: %.2f (floor 0.5)\n", l / k);
  aclrtFree(x);
  aclrtFree(y);
  aclrtFree(z);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
