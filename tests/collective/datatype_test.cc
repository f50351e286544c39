#include "collective/datatype.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "test_util.h"

namespace cohort::collective {
namespace {

// The public conversion (what a program communicating in fp16 or bf16 calls); the
// kernels behind it are tested in tests/kernels.
TEST(DataTypeTest, ConvertElements) {
  const std::vector<float> f = {1.0f, -2.5f, 1.0f + 1.0f / 256, 65504.0f, 0.0f};
  std::vector<std::uint16_t> h(f.size()), b(f.size());
  ASSERT_OK(convertElements(f.data(), DataType::kFloat32, h.data(), DataType::kFloat16, f.size()));
  EXPECT_EQ(h, (std::vector<std::uint16_t>{0x3c00, 0xc100, 0x3c04, 0x7bff, 0x0000}));
  ASSERT_OK(convertElements(f.data(), DataType::kFloat32, b.data(), DataType::kBFloat16, f.size()));
  EXPECT_EQ(b, (std::vector<std::uint16_t>{0x3f80, 0xc020, 0x3f80, 0x4780, 0x0000}));
  std::vector<float> back(f.size());
  ASSERT_OK(
      convertElements(h.data(), DataType::kFloat16, back.data(), DataType::kFloat32, h.size()));
  EXPECT_EQ(back, (std::vector<float>{1.0f, -2.5f, 1.0f + 1.0f / 256, 65504.0f, 0.0f}));
  ASSERT_OK(convertElements(f.data(), DataType::kFloat32, back.data(), DataType::kFloat32, 2));
  EXPECT_ERROR(convertElements(f.data(), DataType::kFloat32, back.data(), DataType::kInt32, 1),
               kInvalidArgument, "float -> int32 is not supported");
  EXPECT_ERROR(convertElements(nullptr, DataType::kFloat16, back.data(), DataType::kFloat32, 1),
               kInvalidArgument, "null");
  EXPECT_OK(convertElements(nullptr, DataType::kFloat16, nullptr, DataType::kFloat32, 0));
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
  Topology one, two;  // 4 ranks: on one node with the mesh, on two nodes
  one.size = two.size = 4;
  two.nodes = 2;
  one.meshAvailable = true;
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
