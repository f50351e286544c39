// The tuning table: what a node's shape changes, and that the choices read it.
#include "collective/tuning.h"

#include <gtest/gtest.h>

#include <limits>

#include "collective/selector.h"
#include "collective/staging.h"

namespace cohort::collective {
namespace {

TEST(TuningTest, ACrowdedNodeRunsMorePulled) {
  const Tuning roomy = Tuning::forNode(2, 2, 8 << 20);
  EXPECT_FALSE(roomy.crowded);
  EXPECT_EQ(roomy.ringChunkBytes, 512u << 10);
  EXPECT_EQ(roomy.meshStagedBytes, 16u << 10);
  EXPECT_EQ(roomy.meshPulledBroadcastMax, 0u);  // never pulled
  EXPECT_EQ(roomy.meshQuickLooks, 128);
  EXPECT_EQ(roomy.meshStreamingBytes, 8u << 20);  // the cache it was given

  const Tuning crowded = Tuning::forNode(4, 2, 8 << 20);
  EXPECT_TRUE(crowded.crowded);
  EXPECT_EQ(crowded.ringChunkBytes, 256u << 10);
  EXPECT_EQ(crowded.meshStagedBytes, 16u << 10);
  EXPECT_EQ(crowded.meshPulledBroadcastMax, 128u << 10);
  EXPECT_EQ(crowded.meshQuickLooks, 0);
  // More than two ranks per processor: pulled at every size.
  EXPECT_EQ(Tuning::forNode(5, 2, 8 << 20).meshPulledBroadcastMax,
            std::numeric_limits<std::size_t>::max());
  // Processors unknown: taken as enough.
  EXPECT_FALSE(Tuning::forNode(64, 0, 8 << 20).crowded);
}

TEST(TuningTest, TheAlgorithmChoiceReadsTheTopologysTuning) {
  OpDesc op;
  op.coll = Coll::kAllReduce;
  op.type = DataType::kFloat32;
  op.count = 1024;  // 4 KiB
  Topology two;  // 4 ranks on 2 nodes
  two.size = 4;
  two.nodes = 2;
  const AlgoOverrides none;
  Algo a = Algo::kAuto;
  ASSERT_TRUE(selectAlgorithm(op, two, none, &a).ok());
  EXPECT_EQ(a, Algo::kHalvingDoubling);
  two.tuning.halvingDoublingMax = 1 << 10;
  ASSERT_TRUE(selectAlgorithm(op, two, none, &a).ok());
  EXPECT_EQ(a, Algo::kRing);
  op.coll = Coll::kBroadcast;
  op.count = 32 << 10;  // 128 KiB: tree by default
  ASSERT_TRUE(selectAlgorithm(op, two, none, &a).ok());
  EXPECT_EQ(a, Algo::kTree);
  two.tuning.treeBroadcastMax = 64 << 10;
  ASSERT_TRUE(selectAlgorithm(op, two, none, &a).ok());
  EXPECT_EQ(a, Algo::kChain);
}

TEST(TuningTest, StagingBoundsFollowTheRecursiveDoublingLimit) {
  OpDesc op;
  op.coll = Coll::kAllReduce;
  op.type = DataType::kFloat32;
  op.count = 2048;  // 8 KiB: recursive doubling takes the partner's vector
  Tuning t;
  EXPECT_EQ(scratchBound(op, Algo::kHalvingDoubling, 4, t), 8u << 10);
  t.recursiveDoublingMax = 4 << 10;
  EXPECT_EQ(scratchBound(op, Algo::kHalvingDoubling, 4, t), 0u);
}

}  // namespace
}  // namespace cohort::collective
