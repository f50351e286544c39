// The direct (mesh) reductions that write with streaming stores: COHORT_CACHE_BYTES
// (1 MiB in CMakeLists.txt) makes operations of a few hundred KiB outgrow the
// cache the mesh assumes, so this path runs on any machine. Allreduce and
// reduce-scatter on 2 and 3 ranks, every type and operation, an odd count past
// 256 KiB, every element of every rank checked. Ranks as threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "collective/datatype.h"
#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "cohort/runtime.h"
#include "common/config.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

constexpr std::size_t kBytes = 256 << 10;  // per rank and block, past 1 MiB over all buffers

// One rank's side of every case: allreduce over `count` elements, and a
// reduce-scatter whose every block has `count` elements.
std::string everyCase(RankPool& pool, int r, void* in, void* out) {
  const int n = pool.size();
  for (int t = 0; t < kDataTypeCount; ++t) {
    const auto type = static_cast<DataType>(t);
    const std::size_t e = dataTypeSize(type);
    const std::size_t count = kBytes / e + 3;
    for (int o = 0; o < kReduceOpCount; ++o) {
      const auto op = static_cast<ReduceOp>(o);
      if (op == ReduceOp::kAvg && !collective::isFloat(type)) continue;
      const double tol = op != ReduceOp::kAvg ? 0
                         : type == DataType::kFloat16 || type == DataType::kBFloat16 ? 1e-2
                                                                                     : 1e-6;
      for (bool scatter : {false, true}) {
        const std::size_t inCount = scatter ? count * static_cast<std::size_t>(n) : count;
        for (std::size_t i = 0; i < inCount; ++i) {
          encode(type, inputValue(op, r, i), static_cast<char*>(in) + i * e);
        }
        Status st = scatter ? pool.comm(r).reduceScatter(in, out, count, type, op, pool.stream(r))
                            : pool.comm(r).allReduce(in, out, count, type, op, pool.stream(r));
        if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
        const std::size_t first = scatter ? count * static_cast<std::size_t>(r) : 0;
        const std::string bad =
            !st.ok() ? st.toString()
                     : compare(type, out, count,
                               [&](std::size_t i) { return expectedReduce(op, n, first + i); },
                               tol);
        if (!bad.empty()) {
          return std::string(scatter ? "reduce-scatter " : "allreduce ") + dataTypeName(type) +
                 " op " + std::to_string(o) + " x " + std::to_string(count) + ": " + bad;
        }
      }
    }
  }
  return "";
}

void runOn(int n) {
  ASSERT_EQ(Config::global().cacheBytes, 1u << 20) << "COHORT_CACHE_BYTES not set";
  RankPool& pool = RankPool::shared(n);
  ASSERT_OK(pool.initStatus());
  // A rank keeps calling after a wrong result: the others would wait for it.
  EXPECT_EQ(joinFailures(pool.run([&](int r) -> std::string {
              const std::size_t bytes = (kBytes + 3 * 8) * static_cast<std::size_t>(n);
              void *in = nullptr, *out = nullptr;
              if (!runtime::deviceMalloc(&in, bytes).ok()) return "deviceMalloc";
              if (!runtime::deviceMalloc(&out, bytes).ok()) {
                (void)runtime::deviceFree(in);
                return "deviceMalloc";
              }
              const std::string failure = everyCase(pool, r, in, out);
              (void)runtime::deviceFree(in);
              (void)runtime::deviceFree(out);
              return failure;
            })),
            "");
}

TEST(StreamingReductionTest, TwoRanksEveryTypeAndOp) { runOn(2); }
TEST(StreamingReductionTest, ThreeRanksEveryTypeAndOp) { runOn(3); }

}  // namespace
}  // namespace cohort::testing
