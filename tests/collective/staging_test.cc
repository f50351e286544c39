// COHORT_BUFFSIZE (1 MiB here): operations whose algorithm would take more
// communicator scratch run in pieces, or with a ring, and stay within it; every
// element is still right. Ranks as threads, buffers in plain host memory (which
// peers cannot map, so the mesh would stage them through scratch).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "collective/staging.h"
#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

constexpr std::size_t kLimit = 1 << 20;  // COHORT_BUFFSIZE in CMakeLists.txt

// Device memory this rank's communicator took while `run` ran (its scratch).
template <typename F>
std::string withinLimit(F run) {
  std::size_t freeBefore = 0, freeAfter = 0, total = 0;
  if (!runtime::getMemInfo(&freeBefore, &total).ok()) return "getMemInfo failed";
  std::string err = run();
  if (!err.empty()) return err;
  if (!runtime::getMemInfo(&freeAfter, &total).ok()) return "getMemInfo failed";
  if (freeBefore > freeAfter && freeBefore - freeAfter > kLimit + (64 << 10)) {
    return "scratch took " + std::to_string(freeBefore - freeAfter) + " bytes";
  }
  return "";
}

std::vector<float> values(int r, std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>(inputValue(ReduceOp::kSum, r, i));
  return v;
}

TEST(StagingTest, LargeAllReduceAndReduceOfHostBuffersRunInPieces) {
  RankPool pool(3);
  ASSERT_OK(pool.initStatus());
  const std::size_t count = (1 << 20) + 3;  // 4 MiB of fp32: 8 MiB staged by the mesh
  EXPECT_EQ(joinFailures(pool.run([&](int r) -> std::string {
              return withinLimit([&]() -> std::string {
                const std::vector<float> in = values(r, count);
                std::vector<float> out(count, -1), red(count, -1);
                Status s = pool.comm(r).allReduce(in.data(), out.data(), count, DataType::kFloat32,
                                                  ReduceOp::kSum, pool.stream(r));
                if (s.ok()) s = runtime::streamSynchronize(pool.stream(r));
                if (!s.ok()) return s.toString();
                if (pool.comm(r).lastChoice().find("in pieces") == std::string::npos) {
                  return "allreduce not in pieces: " + pool.comm(r).lastChoice();
                }
                std::string err = compare(DataType::kFloat32, out.data(), count, [](std::size_t i) {
                  return expectedReduce(ReduceOp::kSum, 3, i);
                });
                if (!err.empty()) return "allreduce: " + err;
                s = pool.comm(r).reduce(in.data(), red.data(), count, DataType::kFloat32,
                                        ReduceOp::kMax, 2, pool.stream(r));
                if (s.ok()) s = runtime::streamSynchronize(pool.stream(r));
                if (!s.ok()) return s.toString();
                if (r != 2) return "";
                err = compare(DataType::kFloat32, red.data(), count, [](std::size_t i) {
                  return expectedReduce(ReduceOp::kMax, 3, i);
                });
                return err.empty() ? "" : "reduce: " + err;
              });
            })),
            "");
}

TEST(StagingTest, LargeReduceScatterAndAllGatherOfHostBuffersUseTheRing) {
  RankPool pool(3);
  ASSERT_OK(pool.initStatus());
  const std::size_t count = 300001;  // per rank: 3.6 MB in, 1.2 MB out
  EXPECT_EQ(joinFailures(pool.run([&](int r) -> std::string {
              return withinLimit([&]() -> std::string {
                const std::vector<float> in = values(r, 3 * count);
                std::vector<float> out(count, -1);
                Status s = pool.comm(r).reduceScatter(in.data(), out.data(), count,
                                                      DataType::kFloat32, ReduceOp::kSum,
                                                      pool.stream(r));
                if (s.ok()) s = runtime::streamSynchronize(pool.stream(r));
                if (!s.ok()) return s.toString();
                if (pool.comm(r).lastChoice().find("=ring") == std::string::npos) {
                  return "reducescatter not on the ring: " + pool.comm(r).lastChoice();
                }
                std::string err = compare(DataType::kFloat32, out.data(), count, [&](std::size_t i) {
                  return expectedReduce(ReduceOp::kSum, 3, static_cast<std::size_t>(r) * count + i);
                });
                if (!err.empty()) return "reducescatter: " + err;
                std::vector<float> all(3 * count, -1);
                s = pool.comm(r).allGather(in.data(), all.data(), count, DataType::kFloat32,
                                           pool.stream(r));
                if (s.ok()) s = runtime::streamSynchronize(pool.stream(r));
                if (!s.ok()) return s.toString();
                err = compare(DataType::kFloat32, all.data(), 3 * count, [&](std::size_t i) {
                  return inputValue(ReduceOp::kSum, static_cast<int>(i / count), i % count);
                });
                return err.empty() ? "" : "allgather: " + err;
              });
            })),
            "");
}

// The plan depends only on the operation: every rank cuts the same pieces.
TEST(StagingTest, PlanCutsElementwiseOperationsAndMovesOthersToTheRing) {
  using collective::Algo;
  using collective::Coll;
  collective::OpDesc op;
  op.count = 1 << 20;
  op.type = DataType::kFloat32;
  auto plan = collective::planStaging(op, Algo::kMesh, 4, 200 << 20, {});
  EXPECT_EQ(plan.algo, Algo::kMesh);
  EXPECT_EQ(plan.pieceCount, 0u);
  plan = collective::planStaging(op, Algo::kMesh, 4, kLimit, {});
  EXPECT_EQ(plan.algo, Algo::kMesh);
  EXPECT_EQ(plan.pieceCount, (kLimit - 128) / 8);
  EXPECT_LE(collective::scratchBound(
                [&] {
                  auto p = op;
                  p.count = plan.pieceCount;
                  return p;
                }(),
                Algo::kMesh, 4, {}),
            kLimit);
  op.coll = Coll::kAllGather;
  plan = collective::planStaging(op, Algo::kMesh, 4, kLimit, {});
  EXPECT_EQ(plan.algo, Algo::kRing);
  EXPECT_EQ(plan.pieceCount, 0u);
  op.coll = Coll::kReduce;
  plan = collective::planStaging(op, Algo::kTree, 4, kLimit, {});
  EXPECT_EQ(plan.pieceCount, kLimit / 4);
  op.count = 0;
  EXPECT_EQ(collective::planStaging(op, Algo::kMesh, 4, kLimit, {}).pieceCount, 0u);
}

}  // namespace
}  // namespace cohort::testing
