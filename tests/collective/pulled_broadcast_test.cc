// The mesh broadcast with more than two ranks per processor (COHORT_PROCESSORS=2
// in CMakeLists.txt, 5 ranks), and up to 128 KiB with more ranks than processors
// (3 ranks): every rank copies the root's buffer itself and only the root waits
// for everyone. Every element of every rank is checked, and
// the failures reach the ranks concerned. Ranks as threads.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "cohort/runtime.h"
#include "common/wait.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kRanks = 5;

// The path is chosen by the rank count against the processors.
void expectPulledPath() { ASSERT_GT(kRanks, 2 * processors()) << "COHORT_PROCESSORS not set"; }

// A buffer of `bytes` in device memory or, for `host`, in plain host memory
// (which the root's peers cannot map: the mesh stages it through scratch).
struct Buffer {
  Buffer(std::size_t bytes, bool host) : host_(host), hostBytes_(host ? bytes : 0) {
    if (!host && !runtime::deviceMalloc(&dev_, bytes == 0 ? 1 : bytes).ok()) dev_ = nullptr;
  }
  ~Buffer() {
    if (dev_ != nullptr) (void)runtime::deviceFree(dev_);
  }
  void* data() { return host_ ? static_cast<void*>(hostBytes_.data()) : dev_; }
  bool host_;
  std::vector<char> hostBytes_;
  void* dev_ = nullptr;
};

// Every root of `ranks` broadcasts every size and type, from device and host
// buffers; every element of every rank is checked.
void everyRootEveryType(int ranks) {
  RankPool& pool = RankPool::shared(ranks);
  ASSERT_OK(pool.initStatus());
  struct Size {
    DataType type;
    std::size_t count;
  };
  // 16 KiB + 12 bytes is the smallest not staged; int8 makes an odd byte count.
  const Size sizes[] = {{DataType::kFloat32, 4099}, {DataType::kInt8, 70001},
                        {DataType::kFloat64, 50001}, {DataType::kBFloat16, (1u << 19) + 3}};
  // A rank keeps calling after a wrong result: the others would wait for it.
  EXPECT_EQ(joinFailures(pool.run([&](int r) -> std::string {
              std::string failure;
              int calls = 0;
              for (const Size& z : sizes) {
                const std::size_t e = dataTypeSize(z.type);
                for (int root = 0; root < ranks; ++root) {
                  const bool host = (root + r + calls) % 3 == 0;
                  Buffer buf(z.count * e, host);
                  if (buf.data() == nullptr) return "deviceMalloc";
                  auto* p = static_cast<char*>(buf.data());
                  for (std::size_t i = 0; i < z.count; ++i) {
                    encode(z.type, r == root ? inputValue(ReduceOp::kSum, root, i) : -1.0, p + i * e);
                  }
                  Status st = pool.comm(r).broadcast(buf.data(), z.count, z.type, root, pool.stream(r));
                  if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
                  const std::string where = std::string(dataTypeName(z.type)) + " x " +
                                            std::to_string(z.count) + " from root " +
                                            std::to_string(root) + (host ? " (host)" : "");
                  const std::string bad =
                      !st.ok() ? st.toString() : compare(z.type, p, z.count, [&](std::size_t i) {
                        return inputValue(ReduceOp::kSum, root, i);
                      });
                  if (!bad.empty() && failure.empty()) failure = where + ": " + bad;
                  ++calls;
                }
              }
              return failure;
            })),
            "");
}

TEST(PulledBroadcastTest, EveryRootEveryTypeDeviceAndHostBuffers) {
  expectPulledPath();
  everyRootEveryType(kRanks);
}

// With up to two ranks per processor only a broadcast of up to 128 KiB is
// pulled: the two smaller sizes take that path, the two larger the direct one.
TEST(PulledBroadcastTest, ThreeRanksPullUpTo128KiB) {
  ASSERT_GT(3, processors()) << "COHORT_PROCESSORS not set";
  everyRootEveryType(3);
}

// A rank whose count differs fails at once (it compares with the root); the
// root, which waits for everyone, finds it and fails too.
TEST(PulledBroadcastTest, AMismatchFailsTheRankThatDiffersAndTheRoot) {
  expectPulledPath();
  RankPool pool(kRanks);  // a fresh group: a failed communicator stays failed
  ASSERT_OK(pool.initStatus());
  constexpr std::size_t kCount = 20000;
  auto results = pool.run([&](int r) -> std::string {
    Buffer buf((kCount + 1) * 4, false);
    if (buf.data() == nullptr) return "deviceMalloc";
    const std::size_t count = r == 3 ? kCount + 1 : kCount;
    Status st = pool.comm(r).broadcast(buf.data(), count, DataType::kFloat32, 0, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    return st.ok() ? "" : st.toString();
  });
  EXPECT_NE(results[3].find("mismatched collective between rank 3 and rank 0"),
            std::string::npos) << results[3];
  EXPECT_NE(results[3].find("count: 20001 vs 20000"), std::string::npos) << results[3];
  EXPECT_NE(results[0].find("mismatched collective between rank 0 and rank 3"),
            std::string::npos) << results[0];
  EXPECT_NE(results[0].find("count: 20000 vs 20001"), std::string::npos) << results[0];
  for (int r : {1, 2, 4}) EXPECT_EQ(results[r], "") << "rank " << r;
}

// The others wait for the root only, but notice a rank that left: they fail
// naming it instead of waiting for the root forever.
TEST(PulledBroadcastTest, ARankThatLeavesFailsTheRanksWaitingForTheRoot) {
  expectPulledPath();
  RankPool pool(kRanks);
  ASSERT_OK(pool.initStatus());
  constexpr std::size_t kCount = 20000;
  auto results = pool.run([&](int r) -> std::string {
    if (r == 0) {  // the root never calls; it aborts rank 1, which is waiting for it
      std::this_thread::sleep_for(100ms);
      pool.comm(1).abort();
      return "";
    }
    Buffer buf(kCount * 4, false);
    if (buf.data() == nullptr) return "deviceMalloc";
    Status st = pool.comm(r).broadcast(buf.data(), kCount, DataType::kFloat32, 0, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    return st.ok() ? "returned ok" : st.toString();
  });
  EXPECT_EQ(results[0], "");
  EXPECT_NE(results[1].find("abort"), std::string::npos) << results[1];
  for (int r : {2, 3, 4}) {
    EXPECT_NE(results[r].find("rank 1"), std::string::npos) << "rank " << r << ": " << results[r];
  }
}

}  // namespace
}  // namespace cohort::testing
