#include "collective/datatype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace cohort::collective {
namespace {

TEST(DataTypeTest, HalfConversionsMatchTheCompilerForEveryValue) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    _Float16 ref;
    std::memcpy(&ref, &h, 2);
    const float f = halfToFloat(h);
    if (std::isnan(static_cast<float>(ref))) {
      EXPECT_TRUE(std::isnan(f));
      continue;
    }
    ASSERT_EQ(f, static_cast<float>(ref)) << bits;
    ASSERT_EQ(floatToHalf(f), h) << bits;
  }
  // Rounding to nearest even, overflow and underflow, against the compiler.
  for (float f : {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65519.0f, 65520.0f, 1e6f, 5.96e-8f,
                  2.98e-8f, 2.99e-8f, -3.1415926f, 1e-5f, 6.1e-5f}) {
    const _Float16 ref = static_cast<_Float16>(f);
    std::uint16_t want;
    std::memcpy(&want, &ref, 2);
    EXPECT_EQ(floatToHalf(f), want) << f;
  }
}

TEST(DataTypeTest, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even wins (1.0).
  EXPECT_EQ(floatToBf16(1.0f + 1.0f / 256), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::numeric_limits<float>::quiet_NaN()))));
}

template <typename T>
std::vector<T> apply(DataType t, ReduceOp op, std::vector<T> a, const std::vector<T>& b) {
  reductionFor(t, op).fn(a.data(), a.data(), b.data(), a.size() * sizeof(T), nullptr);
  return a;
}

TEST(DataTypeTest, KernelsForEveryOp) {
  EXPECT_EQ(apply<int>(DataType::kInt32, ReduceOp::kSum, {1, -2, 3}, {10, 20, -30}), (std::vector<int>{11, 18, -27}));
  EXPECT_EQ(apply<int>(DataType::kInt32, ReduceOp::kProd, {2, -3, 0}, {5, 7, 9}), (std::vector<int>{10, -21, 0}));
  EXPECT_EQ(apply<int>(DataType::kInt32, ReduceOp::kMax, {2, -3, 9}, {5, -7, 1}), (std::vector<int>{5, -3, 9}));
  EXPECT_EQ(apply<int>(DataType::kInt32, ReduceOp::kMin, {2, -3, 9}, {5, -7, 1}), (std::vector<int>{2, -7, 1}));
  // Wrap-around, not undefined behaviour.
  EXPECT_EQ(apply<std::int8_t>(DataType::kInt8, ReduceOp::kSum, {127}, {1}), (std::vector<std::int8_t>{-128}));
  EXPECT_EQ(apply<std::uint16_t>(DataType::kUint16, ReduceOp::kProd, {65535}, {65535}), (std::vector<std::uint16_t>{1}));
  EXPECT_EQ(apply<double>(DataType::kFloat64, ReduceOp::kSum, {0.5, 1e300}, {0.25, 1e300}), (std::vector<double>{0.75, 2e300}));
  const std::uint16_t one = floatToHalf(1.0f), two = floatToHalf(2.0f);
  EXPECT_EQ(apply<std::uint16_t>(DataType::kFloat16, ReduceOp::kSum, {one}, {two}), (std::vector<std::uint16_t>{floatToHalf(3.0f)}));
  // Avg reduces as sum; finishAverage divides.
  std::vector<float> f = apply<float>(DataType::kFloat32, ReduceOp::kAvg, {1, 2}, {3, 5});
  finishAverage(f.data(), 2, DataType::kFloat32, 2);
  EXPECT_EQ(f, (std::vector<float>{2, 3.5}));
}

TEST(DataTypeTest, NamesAndSizes) {
  EXPECT_EQ(dataTypeSize(DataType::kBFloat16), 2u);
  EXPECT_EQ(dataTypeSize(DataType::kUint64), 8u);
  EXPECT_EQ(dataTypeSize(static_cast<DataType>(77)), 0u);
  EXPECT_STREQ(dataTypeName(DataType::kFloat32), "float");
  EXPECT_STREQ(reduceOpName(ReduceOp::kAvg), "avg");
}

}  // namespace
}  // namespace cohort::collective

#include "collective/selector.h"

namespace cohort::collective {
namespace {

TEST(SelectorTest, CohortAlgoSyntax) {
  AlgoOverrides o;
  ASSERT_TRUE(AlgoOverrides::parse("allreduce=ring;broadcast=tree", &o).ok());
  EXPECT_EQ(o.forced[static_cast<int>(Coll::kAllReduce)], Algo::kRing);
  EXPECT_EQ(o.forced[static_cast<int>(Coll::kBroadcast)], Algo::kTree);
  EXPECT_EQ(o.forced[static_cast<int>(Coll::kAllGather)], Algo::kAuto);
  Status s = AlgoOverrides::parse("allreduce=tree", &o);  // tree cannot run allreduce
  EXPECT_EQ(s.code(), ErrorCode::kConfigError);
  EXPECT_NE(s.message().find("entry 'allreduce=tree'"), std::string::npos) << s.message();
  EXPECT_EQ(AlgoOverrides::parse("allreduce=warp", &o).code(), ErrorCode::kConfigError);
}

TEST(SelectorTest, HcclAlgoSyntaxTranslates) {
  std::string ours;
  ASSERT_TRUE(translateHcclAlgo("level0:NA;level1:H-D_R", &ours).ok());
  EXPECT_EQ(ours, "allreduce=hd");
  ASSERT_TRUE(translateHcclAlgo("allreduce=level0:NA;level1:ring/alltoall=level0:NA;level1:pairwise", &ours).ok());
  EXPECT_EQ(ours, "allreduce=ring;alltoall=pairwise");
  ASSERT_TRUE(translateHcclAlgo("level0:NA;level1:NHR", &ours).ok());
  EXPECT_EQ(ours, "allreduce=ring;allgather=ring;reducescatter=ring");
  Status s = translateHcclAlgo("level0:NA;level1:quantum", &ours);
  EXPECT_EQ(s.code(), ErrorCode::kConfigError);
  EXPECT_NE(s.message().find("HCCL_ALGO"), std::string::npos);
  EXPECT_NE(s.message().find("quantum"), std::string::npos);
}

TEST(SelectorTest, TableAndOverrides) {
  OpDesc op;
  op.coll = Coll::kAllReduce;
  op.count = 1 << 20;
  Topology one{4, 1, true}, two{4, 2, false};
  AlgoOverrides none;
  Algo a;
  ASSERT_TRUE(selectAlgorithm(op, one, none, &a).ok());
  EXPECT_EQ(a, Algo::kMesh);
  ASSERT_TRUE(selectAlgorithm(op, two, none, &a).ok());
  EXPECT_EQ(a, Algo::kRing);
  op.count = 16;
  ASSERT_TRUE(selectAlgorithm(op, two, none, &a).ok());
  EXPECT_EQ(a, Algo::kHalvingDoubling);
  AlgoOverrides mesh;
  ASSERT_TRUE(AlgoOverrides::parse("allreduce=mesh", &mesh).ok());
  Status s = selectAlgorithm(op, two, mesh, &a);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidUsage);
  EXPECT_NE(s.message().find("not all on one node"), std::string::npos);
}

}  // namespace
}  // namespace cohort::collective
