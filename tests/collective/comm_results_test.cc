// Communicator behaviour: grouped point-to-point calls, and results that are
// bit-identical across ranks and runs. Ranks as threads.
#include <gtest/gtest.h>

#include <cstring>

#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

#define EXPECT_ALL_OK(results) EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results)

// Sends and receives inside a group progress together: every rank sends to all
// others before receiving from anyone, which would deadlock without the group.
TEST(CommTest, GroupedSendsAndReceivesDoNotDeadlock) {
  RankPool& pool = RankPool::shared(4);
  ASSERT_OK(pool.initStatus());
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    const int n = pool.size();
    constexpr std::size_t count = 1 << 16;  // larger than any socket buffer would absorb
    std::vector<void*> out(n, nullptr), in(n, nullptr);
    for (int p = 0; p < n; ++p) {
      if (!runtime::deviceMalloc(&out[p], count * 4).ok() || !runtime::deviceMalloc(&in[p], count * 4).ok()) return "alloc";
      for (std::size_t i = 0; i < count; ++i) static_cast<int*>(out[p])[i] = r * 1000 + p + static_cast<int>(i);
    }
    Communicator& c = pool.comm(r);
    runtime::Stream* s = pool.stream(r);
    Status st = Communicator::groupStart();
    for (int p = 0; p < n && st.ok(); ++p) {
      if (p != r) st = c.send(out[p], count, DataType::kInt32, p, s);
    }
    for (int p = 0; p < n && st.ok(); ++p) {
      if (p != r) st = c.recv(in[p], count, DataType::kInt32, p, s);
    }
    if (st.ok()) st = Communicator::groupEnd();
    if (st.ok()) st = runtime::streamSynchronize(s);
    if (!st.ok()) return st.toString();
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      for (std::size_t i = 0; i < count; ++i) {
        if (static_cast<int*>(in[p])[i] != p * 1000 + r + static_cast<int>(i)) return "wrong data from " + std::to_string(p);
      }
    }
    for (int p = 0; p < n; ++p) {
      (void)runtime::deviceFree(out[p]);
      (void)runtime::deviceFree(in[p]);
    }
    return "";
  }));
  EXPECT_EQ(Communicator::groupEnd().code(), ErrorCode::kInvalidUsage);
}

// Floating-point sums depend on the order of additions. Every algorithm must give
// bit-identical results on every rank, and the same bits on every run.
TEST(CommTest, ResultsAreBitIdenticalAcrossRanksAndRuns) {
  RankPool& pool = RankPool::shared(5);
  ASSERT_OK(pool.initStatus());
  constexpr std::size_t count = 100003;
  for (const char* algo : {"", "allreduce=ring", "allreduce=hd"}) {
    std::vector<std::vector<float>> results(5);
    for (int run = 0; run < 3; ++run) {
      EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
        if (!pool.comm(r).setAlgorithm(algo).ok()) return "setAlgorithm";
        void* buf = nullptr;
        if (!runtime::deviceMalloc(&buf, count * 4).ok()) return "alloc";
        auto* f = static_cast<float*>(buf);
        std::uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(r + 1);
        for (std::size_t i = 0; i < count; ++i) {
          x ^= x << 13;
          x ^= x >> 7;
          x ^= x << 17;
          f[i] = static_cast<float>(x % 100000) / 977.0f - 40.0f;  // inexact sums
        }
        Status st = pool.comm(r).allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, pool.stream(r));
        if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
        std::vector<float> got(f, f + count);
        (void)runtime::deviceFree(buf);
        if (!st.ok()) return st.toString();
        if (run == 0) {
          results[r] = got;
        } else if (std::memcmp(results[r].data(), got.data(), count * 4) != 0) {
          return std::string("run ") + std::to_string(run) + " differs from run 0";
        }
        return "";
      }));
    }
    for (int r = 1; r < 5; ++r) {
      EXPECT_EQ(std::memcmp(results[0].data(), results[r].data(), count * 4), 0)
          << algo << ": rank " << r << " differs from rank 0";
    }
  }
  pool.run([&](int r) { return pool.comm(r).setAlgorithm("").ok() ? "" : "reset"; });
}

}  // namespace
}  // namespace cohort::testing
