// The eager broadcast ring (staged sizes, up to 16 KiB): the root fills the next
// slot and goes on, up to eight calls ahead of its slowest reader. Checked with
// more ranks than processors (COHORT_PROCESSORS=2 in CMakeLists.txt, 5 ranks),
// where the root runs ahead most: every element of every call on every rank, a
// reader much slower than the root, calls of other kinds in between, and the
// failures. Ranks as threads.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "cohort/runtime.h"
#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kEagerRanks = 5;

// The value of element i of call k (a different one for every call, so that a
// reader given a slot of another call sees wrong elements).
double callValue(int k, std::size_t i) { return inputValue(ReduceOp::kSum, k % 7, i) + 8.0 * k; }

// Runs of ten broadcasts (more than the ring's eight slots) from a root that
// changes with every run, sizes up to the largest staged one; rank 3 sleeps
// before every call so that the root laps it and must wait for it. A barrier
// ends every run; in the last, every fifth call is an allreduce (which waits for
// everyone).
TEST(EagerBroadcastTest, ARootFarAheadNeverOverwritesWhatASlowReaderHasNotRead) {
  RankPool& pool = RankPool::shared(kEagerRanks);
  ASSERT_OK(pool.initStatus());
  struct Size {
    DataType type;
    std::size_t count;
  };
  const Size sizes[] = {{DataType::kFloat32, 1},    {DataType::kInt8, 16384},
                        {DataType::kFloat64, 2047}, {DataType::kBFloat16, 4099},
                        {DataType::kInt32, 4096},   {DataType::kUint8, 0}};
  constexpr int kCalls = 30;
  EXPECT_EQ(joinFailures(pool.run([&](int r) -> std::string {
              void* buf = nullptr;
              if (!runtime::deviceMalloc(&buf, 16384 * 2).ok()) return "deviceMalloc";
              auto* p = static_cast<char*>(buf);
              std::string failure;
              for (int k = 0; k < kCalls && failure.empty(); ++k) {
                if (r == 3) std::this_thread::sleep_for(2ms);
                Status st;
                std::string what;
                if (k >= 20 && k % 5 == 4) {
                  what = "allreduce";
                  encode(DataType::kFloat32, r + k, p);
                  st = pool.comm(r).allReduce(p, p, 1, DataType::kFloat32, ReduceOp::kSum,
                                              pool.stream(r));
                  if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
                  const double want = kEagerRanks * k + kEagerRanks * (kEagerRanks - 1) / 2;
                  if (st.ok())
                    failure = compare(DataType::kFloat32, p, 1, [&](std::size_t) { return want; });
                } else {
                  const Size z = sizes[k % 6];
                  const int root = (k / 10) % kEagerRanks;
                  const std::size_t e = dataTypeSize(z.type);
                  for (std::size_t i = 0; i < z.count; ++i) {
                    encode(z.type, r == root ? callValue(k, i) : -1.0, p + i * e);
                  }
                  what = std::string("broadcast of ") + dataTypeName(z.type) + " x " +
                         std::to_string(z.count) + " from root " + std::to_string(root);
                  st = pool.comm(r).broadcast(p, z.count, z.type, root, pool.stream(r));
                  if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
                  if (st.ok()) {
                    failure =
                        compare(z.type, p, z.count, [&](std::size_t i) { return callValue(k, i); });
                  }
                }
                if (!st.ok()) failure = st.toString();
                if (!failure.empty())
                  failure = "call " + std::to_string(k) + " (" + what + "): " + failure;
                if (k % 10 == 9) {
                  Status b = pool.comm(r).barrier(pool.stream(r));
                  if (b.ok()) b = runtime::streamSynchronize(pool.stream(r));
                  if (!b.ok() && failure.empty()) failure = "barrier: " + b.toString();
                }
              }
              (void)runtime::deviceFree(buf);
              return failure;
            })),
            "");
}

// A reader whose count differs from the root's fails at once, naming the root;
// the root, which never waits for its readers' calls, fails at its next call
// that waits for that reader, naming it. The others are unaffected.
TEST(EagerBroadcastTest, AReaderThatDiffersFailsAndTheRootFindsItAtItsNextWait) {
  RankPool pool(kEagerRanks);  // a fresh group: a failed communicator stays failed
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    void* buf = nullptr;
    if (!runtime::deviceMalloc(&buf, 4096).ok()) return "deviceMalloc";
    const std::size_t count = r == 2 ? 101 : 100;
    Status st = pool.comm(r).broadcast(buf, count, DataType::kFloat32, 0, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    std::string out = st.ok() ? "broadcast ok" : "broadcast: " + st.toString();
    if (r != 2) {  // the failed rank makes no further call
      st = pool.comm(r).allReduce(buf, buf, 4, DataType::kFloat32, ReduceOp::kSum, pool.stream(r));
      if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
      out += st.ok() ? "; allreduce ok" : "; allreduce: " + st.toString();
    }
    (void)runtime::deviceFree(buf);
    return out;
  });
  EXPECT_NE(results[2].find("mismatched collective between rank 2 and rank 0"), std::string::npos)
      << results[2];
  EXPECT_NE(results[2].find("count: 101 vs 100"), std::string::npos) << results[2];
  for (int r : {0, 1, 3, 4}) {
    EXPECT_EQ(results[r].rfind("broadcast ok; allreduce: ", 0), 0u)
        << "rank " << r << ": " << results[r];
    EXPECT_NE(results[r].find("remote rank 2"), std::string::npos)
        << "rank " << r << ": " << results[r];
  }
}

// The root made another call than its readers: they fail naming it, and the
// root fails too (its call waits for everyone and compares).
TEST(EagerBroadcastTest, ARootThatMadeAnotherCallFailsEveryRank) {
  RankPool pool(kEagerRanks);
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    void* buf = nullptr;
    if (!runtime::deviceMalloc(&buf, 4096).ok()) return "deviceMalloc";
    Status st = r == 0 ? pool.comm(r).allReduce(buf, buf, 100, DataType::kFloat32, ReduceOp::kSum,
                                                pool.stream(r))
                       : pool.comm(r).broadcast(buf, 100, DataType::kFloat32, 0, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    (void)runtime::deviceFree(buf);
    return st.ok() ? "ok" : st.toString();
  });
  EXPECT_NE(results[0].find("mismatched collective between rank 0 and rank"), std::string::npos)
      << results[0];
  EXPECT_NE(results[0].find("collective: allreduce vs broadcast"), std::string::npos)
      << results[0];
  for (int r = 1; r < kEagerRanks; ++r) {
    EXPECT_NE(
        results[r].find("mismatched collective between rank " + std::to_string(r) + " and rank 0"),
        std::string::npos)
        << "rank " << r << ": " << results[r];
    EXPECT_NE(results[r].find("allreduce"), std::string::npos)
        << "rank " << r << ": " << results[r];
  }
}

}  // namespace
}  // namespace cohort::testing
