// The same collectives give the same bits on every SIMD path: this test runs itself
// once per path the processor has (COHORT_SIMD fixes a process's path), each run
// digests the results of allreduce and reduce-scatter over every algorithm for the
// 16-bit float types, fp32 and the small integers, and the digests must be equal.
// Ranks as threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collective/rank_pool.h"
#include "kernels/simd.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

constexpr const char* kChildVariable = "COHORT_TEST_SIMD_DIGEST";
constexpr std::size_t kCount = 4099;  // per rank and block: odd, so every path has a tail

// FNV-1a over bytes.
void digest(std::uint64_t* h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) *h = (*h ^ p[i]) * 0x100000001b3ull;
}

// Inputs whose sums are inexact in every type (the bits of small random floats, or
// random integers), different on every rank.
void fill(DataType type, int rank, void* at, std::size_t count) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(rank + 1);
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  const std::size_t e = dataTypeSize(type);
  std::vector<float> f(count);
  for (auto& v : f) v = static_cast<float>(next() % 200001) / 997.0f - 100.0f;
  if (type == DataType::kFloat32) {
    std::memcpy(at, f.data(), count * 4);
  } else if (type == DataType::kFloat16 || type == DataType::kBFloat16) {
    ASSERT_OK(convertElements(f.data(), DataType::kFloat32, at, type, count));
  } else {
    for (std::size_t i = 0; i < count * e; ++i) {
      static_cast<unsigned char*>(at)[i] = static_cast<unsigned char>(next());
    }
  }
}

// Rank 0's digest of every case on this process's path.
std::uint64_t digestEveryCase() {
  RankPool& pool = RankPool::shared(3);
  EXPECT_OK(pool.initStatus());
  const int n = pool.size();
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char* algo : {"", "allreduce=ring;reducescatter=ring", "allreduce=hd",
                           "allreduce=mesh;reducescatter=mesh"}) {
    for (DataType type : {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32,
                          DataType::kInt8, DataType::kInt16}) {
      const bool isFloat =
          type == DataType::kBFloat16 || type == DataType::kFloat16 || type == DataType::kFloat32;
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kAvg}) {
        if (op == ReduceOp::kAvg && !isFloat) continue;
        for (bool scatter : {false, true}) {
          std::vector<std::vector<unsigned char>> out(static_cast<std::size_t>(n));
          const auto failures = pool.run([&](int r) -> std::string {
            if (!pool.comm(r).setAlgorithm(algo).ok()) return "setAlgorithm";
            const std::size_t e = dataTypeSize(type);
            const std::size_t in = scatter ? kCount * n : kCount;
            void *src = nullptr, *dst = nullptr;
            if (!runtime::deviceMalloc(&src, in * e).ok() ||
                !runtime::deviceMalloc(&dst, kCount * e).ok()) {
              return "alloc";
            }
            fill(type, r, src, in);
            Status st = scatter
                            ? pool.comm(r).reduceScatter(src, dst, kCount, type, op, pool.stream(r))
                            : pool.comm(r).allReduce(src, dst, kCount, type, op, pool.stream(r));
            if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
            const auto* bytes = static_cast<const unsigned char*>(dst);
            out[static_cast<std::size_t>(r)].assign(bytes, bytes + kCount * e);
            (void)runtime::deviceFree(src);
            (void)runtime::deviceFree(dst);
            return st.ok() ? "" : st.toString();
          });
          EXPECT_EQ(joinFailures(failures), "") << algo << " " << dataTypeName(type);
          for (const auto& o : out) digest(&h, o.data(), o.size());
        }
      }
    }
  }
  pool.run([&](int r) { return pool.comm(r).setAlgorithm("").ok() ? "" : "reset"; });
  return h;
}

// The digest a run of this test with COHORT_SIMD=path prints ("" if it failed).
std::string digestOnPath(kernels::SimdPath path) {
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0) return "";
  const std::string command = std::string("COHORT_SIMD=") + kernels::simdPathName(path) + " " +
                              kChildVariable + "=1 '" + self +
                              "' --gtest_filter='SimdPathsTest.*' 2>&1";
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) return "";
  std::string digestLine, line;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), child) != nullptr) {
    line = buf;
    if (line.rfind("digest ", 0) == 0) digestLine = line.substr(7);
  }
  return pclose(child) == 0 ? digestLine : "";
}

TEST(SimdPathsTest, CollectivesGiveTheSameBitsOnEveryPath) {
  if (std::getenv(kChildVariable) != nullptr) {  // one path's run: print its digest
    std::printf("digest %016llx (%s path)\n", static_cast<unsigned long long>(digestEveryCase()),
                kernels::simdPathName(kernels::activePath()));
    return;
  }
  std::string first;
  for (int p = 0; p < kernels::kSimdPathCount; ++p) {
    const auto path = static_cast<kernels::SimdPath>(p);
    if (!kernels::pathSupported(path)) {
      std::printf("the %s path is not compared: this processor lacks %s\n",
                  kernels::simdPathName(path),
                  kernels::missingFeatures(path, kernels::CpuFeatures::detect()).c_str());
      continue;
    }
    const std::string d = digestOnPath(path);
    ASSERT_NE(d, "") << "the run on the " << kernels::simdPathName(path) << " path failed";
    std::printf("%s: %s", kernels::simdPathName(path), d.c_str());
    if (first.empty()) first = d;
    EXPECT_EQ(d.substr(0, 16), first.substr(0, 16))
        << "the " << kernels::simdPathName(path) << " path gives other bits than the scalar one";
  }
}

}  // namespace
}  // namespace cohort::testing
