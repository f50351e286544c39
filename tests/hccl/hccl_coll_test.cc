// Every HCCL operation on 4 ranks (HcclCommInitAll, one thread per rank), each
// result checked element by element against a closed form of the ranks' inputs.
#include <cstdint>
#include <numeric>
#include <vector>

#include "hccl_test_util.h"

namespace {

using hccl_test::DeviceBuffer;

constexpr int kRanks = 4;

using HcclCollTest = hccl_test::RanksTest<kRanks>;

TEST_F(HcclCollTest, RankSizeAndIdsAreThoseOfInitAll) {
  for (int r = 0; r < kRanks; ++r) {
    uint32_t size = 0, rank = 99;
    ASSERT_HCCL_OK(HcclGetRankSize(comms_[r], &size));
    ASSERT_HCCL_OK(HcclGetRankId(comms_[r], &rank));
    EXPECT_EQ(size, 4u);
    EXPECT_EQ(rank, static_cast<uint32_t>(r));
  }
}

TEST_F(HcclCollTest, AllReduceSumMaxMinProdFp32AndInt32) {
  const std::size_t n = 1000;
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    DeviceBuffer in(n * 4), sum(n * 4), max(n * 4), min(n * 4), prod(n * 4);
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(r + 1 + i % 5);
    in.upload(x);
    ASSERT_HCCL_OK(
        HcclAllReduce(in.get(), sum.get(), n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    ASSERT_HCCL_OK(
        HcclAllReduce(in.get(), max.get(), n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, comm, s));
    ASSERT_HCCL_OK(
        HcclAllReduce(in.get(), min.get(), n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MIN, comm, s));
    DeviceBuffer ints(n * 4);
    ints.upload(std::vector<int32_t>(n, r + 1));
    ASSERT_HCCL_OK(
        HcclAllReduce(ints.get(), prod.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_PROD, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    const auto gotSum = sum.download<float>(n), gotMax = max.download<float>(n);
    const auto gotMin = min.download<float>(n);
    const auto gotProd = prod.download<int32_t>(n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(gotSum[i], 10.0f + 4 * (i % 5)) << "rank " << r << " sum[" << i << "]";
      ASSERT_EQ(gotMax[i], 4.0f + i % 5) << "max[" << i << "]";
      ASSERT_EQ(gotMin[i], 1.0f + i % 5) << "min[" << i << "]";
      ASSERT_EQ(gotProd[i], 24) << "prod[" << i << "]";
    }
  });
}

TEST_F(HcclCollTest, AllReduceInPlace) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    DeviceBuffer buf(64 * 4);
    buf.upload(std::vector<int32_t>(64, 1 << r));
    ASSERT_HCCL_OK(
        HcclAllReduce(buf.get(), buf.get(), 64, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    for (int32_t v : buf.download<int32_t>(64)) ASSERT_EQ(v, 15);
  });
}

// Every data type: each rank contributes 1 + rank in every element; the sum is 10.
TEST_F(HcclCollTest, AllReduceEveryDataType) {
  struct Case {
    HcclDataType type;
    std::size_t size;
    uint64_t one[4];  // the encodings of 1, 2, 3, 4
    uint64_t ten;
  };
  const Case cases[] = {
      {HCCL_DATA_TYPE_INT8, 1, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_UINT8, 1, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_INT16, 2, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_UINT16, 2, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_INT32, 4, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_UINT32, 4, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_INT64, 8, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_UINT64, 8, {1, 2, 3, 4}, 10},
      {HCCL_DATA_TYPE_FP16, 2, {0x3C00, 0x4000, 0x4200, 0x4400}, 0x4900},
      {HCCL_DATA_TYPE_BFP16, 2, {0x3F80, 0x4000, 0x4040, 0x4080}, 0x4120},
      {HCCL_DATA_TYPE_FP32, 4, {0x3F800000, 0x40000000, 0x40400000, 0x40800000}, 0x41200000},
      {HCCL_DATA_TYPE_FP64,
       8,
       {0x3FF0000000000000, 0x4000000000000000, 0x4008000000000000, 0x4010000000000000},
       0x4024000000000000},
  };
  const std::size_t n = 33;
  for (const Case& c : cases) {
    onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
      std::vector<uint8_t> bytes(n * c.size);
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&bytes[i * c.size], &c.one[r], c.size);
      DeviceBuffer in(bytes.size()), out(bytes.size());
      in.upload(bytes);
      ASSERT_HCCL_OK(HcclAllReduce(in.get(), out.get(), n, c.type, HCCL_REDUCE_SUM, comm, s));
      ASSERT_ACL_OK(aclrtSynchronizeStream(s));
      const auto got = out.download<uint8_t>(bytes.size());
      for (std::size_t i = 0; i < n; ++i) {
        uint64_t v = 0;
        std::memcpy(&v, &got[i * c.size], c.size);
        ASSERT_EQ(v, c.ten) << "type " << c.type << " element " << i << " rank " << r;
      }
    });
  }
}

TEST_F(HcclCollTest, AllGatherAndAllGatherV) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    DeviceBuffer in(3 * 4), out(12 * 4);
    in.upload(std::vector<int32_t>{100 * r, 100 * r + 1, 100 * r + 2});
    ASSERT_HCCL_OK(HcclAllGather(in.get(), out.get(), 3, HCCL_DATA_TYPE_INT32, comm, s));
    const uint64_t counts[kRanks] = {1, 2, 3, 4}, displs[kRanks] = {0, 1, 3, 6};
    DeviceBuffer vin(4 * 4), vout(10 * 4);
    std::vector<int32_t> mine;
    for (int j = 0; j <= r; ++j) mine.push_back(10 * r + j);
    vin.upload(mine);
    ASSERT_HCCL_OK(HcclAllGatherV(vin.get(), r + 1, vout.get(), counts, displs,
                                  HCCL_DATA_TYPE_INT32, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    const auto got = out.download<int32_t>(12);
    for (int q = 0; q < kRanks; ++q) {
      for (int j = 0; j < 3; ++j) ASSERT_EQ(got[q * 3 + j], 100 * q + j) << "rank " << r;
    }
    const auto gotV = vout.download<int32_t>(10);
    for (int q = 0; q < kRanks; ++q) {
      for (int j = 0; j <= q; ++j) ASSERT_EQ(gotV[displs[q] + j], 10 * q + j) << "rank " << r;
    }
  });
}

TEST_F(HcclCollTest, ReduceScatterAndReduceScatterV) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    std::vector<int32_t> x(20);
    std::iota(x.begin(), x.end(), r);  // x[k] = r + k
    DeviceBuffer in(20 * 4), out(5 * 4), vout(4 * 4);
    in.upload(x);
    ASSERT_HCCL_OK(
        HcclReduceScatter(in.get(), out.get(), 5, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
    const uint64_t counts[kRanks] = {1, 2, 3, 4}, displs[kRanks] = {0, 1, 3, 6};
    ASSERT_HCCL_OK(HcclReduceScatterV(in.get(), counts, displs, vout.get(), counts[r],
                                      HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    const auto got = out.download<int32_t>(5);
    for (int j = 0; j < 5; ++j) ASSERT_EQ(got[j], 6 + 4 * (5 * r + j)) << "rank " << r;
    const auto gotV = vout.download<int32_t>(counts[r]);
    for (uint64_t j = 0; j < counts[r]; ++j) {
      ASSERT_EQ(gotV[j], 6 + 4 * static_cast<int>(displs[r] + j)) << "rank " << r;
    }
  });
}

TEST_F(HcclCollTest, BroadcastReduceAndScatterFromTheirRoots) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    std::vector<int32_t> seven(50), zeros(50, 0);
    for (int i = 0; i < 50; ++i) seven[i] = 7 * i;
    DeviceBuffer buf(50 * 4), in(50 * 4), reduced(50 * 4), scatterIn(8 * 4), scatterOut(2 * 4);
    buf.upload(r == 2 ? seven : zeros);
    ASSERT_HCCL_OK(HcclBroadcast(buf.get(), 50, HCCL_DATA_TYPE_INT32, 2, comm, s));
    in.upload(std::vector<int32_t>(50, r));
    reduced.upload(zeros);
    ASSERT_HCCL_OK(
        HcclReduce(in.get(), reduced.get(), 50, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 1, comm, s));
    scatterIn.upload(std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
    ASSERT_HCCL_OK(
        HcclScatter(scatterIn.get(), scatterOut.get(), 2, HCCL_DATA_TYPE_INT32, 3, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    EXPECT_EQ(buf.download<int32_t>(50), seven) << "rank " << r;
    EXPECT_EQ(reduced.download<int32_t>(50), r == 1 ? std::vector<int32_t>(50, 6) : zeros);
    EXPECT_EQ(scatterOut.download<int32_t>(2), (std::vector<int32_t>{2 * r, 2 * r + 1}));
  });
}

// Pairs 0-1 and 2-3 exchange: even ranks send first, odd ranks receive first.
TEST_F(HcclCollTest, SendAndRecvInPairs) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    const uint32_t peer = static_cast<uint32_t>(r ^ 1);
    DeviceBuffer out(16 * 4), in(16 * 4);
    out.upload(std::vector<int32_t>(16, 1000 + r));
    if (r % 2 == 0) {
      ASSERT_HCCL_OK(HcclSend(out.get(), 16, HCCL_DATA_TYPE_INT32, peer, comm, s));
      ASSERT_HCCL_OK(HcclRecv(in.get(), 16, HCCL_DATA_TYPE_INT32, peer, comm, s));
    } else {
      ASSERT_HCCL_OK(HcclRecv(in.get(), 16, HCCL_DATA_TYPE_INT32, peer, comm, s));
      ASSERT_HCCL_OK(HcclSend(out.get(), 16, HCCL_DATA_TYPE_INT32, peer, comm, s));
    }
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    EXPECT_EQ(in.download<int32_t>(16), std::vector<int32_t>(16, 1000 + static_cast<int>(peer)));
  });
}

// A ring of sends and receives that only a group can run without deadlock.
TEST_F(HcclCollTest, GroupedRingOfSendsAndRecvs) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    DeviceBuffer out(8 * 4), in(8 * 4);
    out.upload(std::vector<int32_t>(8, r));
    ASSERT_HCCL_OK(HcclGroupStart());
    ASSERT_HCCL_OK(HcclSend(out.get(), 8, HCCL_DATA_TYPE_INT32, (r + 1) % kRanks, comm, s));
    ASSERT_HCCL_OK(HcclRecv(in.get(), 8, HCCL_DATA_TYPE_INT32, (r + 3) % kRanks, comm, s));
    ASSERT_HCCL_OK(HcclGroupEnd());
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    EXPECT_EQ(in.download<int32_t>(8), std::vector<int32_t>(8, (r + 3) % kRanks));
  });
}

TEST_F(HcclCollTest, BatchSendRecvWithEveryOtherRank) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    DeviceBuffer out(4 * 4), in(4 * 4);
    out.upload(std::vector<int32_t>{100 * r, 100 * r + 1, 100 * r + 2, 100 * r + 3});
    in.upload(std::vector<int32_t>(4, -1));
    std::vector<HcclSendRecvItem> items;
    for (uint32_t q = 0; q < kRanks; ++q) {
      if (q == static_cast<uint32_t>(r)) continue;
      items.push_back(
          {HCCL_SEND, static_cast<int32_t*>(out.get()) + q, 1, HCCL_DATA_TYPE_INT32, q});
      items.push_back({HCCL_RECV, static_cast<int32_t*>(in.get()) + q, 1, HCCL_DATA_TYPE_INT32, q});
    }
    ASSERT_HCCL_OK(HcclBatchSendRecv(items.data(), static_cast<uint32_t>(items.size()), comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    const auto got = in.download<int32_t>(4);
    for (int q = 0; q < kRanks; ++q) EXPECT_EQ(got[q], q == r ? -1 : 100 * q + r) << "rank " << r;
  });
}

TEST_F(HcclCollTest, AlltoAllAndAlltoAllV) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    std::vector<int32_t> x;
    for (int j = 0; j < kRanks; ++j) {
      for (int k = 0; k < 2; ++k) x.push_back(100 * r + 10 * j + k);
    }
    DeviceBuffer in(8 * 4), out(8 * 4);
    in.upload(x);
    ASSERT_HCCL_OK(HcclAlltoAll(in.get(), 2, HCCL_DATA_TYPE_INT32, out.get(), 2,
                                HCCL_DATA_TYPE_INT32, comm, s));
    // Rank r sends j + 1 elements to rank j and receives r + 1 from each.
    uint64_t sc[kRanks], sd[kRanks], rc[kRanks], rd[kRanks];
    std::vector<int32_t> v;
    for (int j = 0; j < kRanks; ++j) {
      sc[j] = j + 1;
      sd[j] = v.size();
      rc[j] = r + 1;
      rd[j] = static_cast<uint64_t>(j * (r + 1));
      for (int k = 0; k <= j; ++k) v.push_back(1000 * r + 10 * j + k);
    }
    DeviceBuffer vin(v.size() * 4), vout(kRanks * (r + 1) * 4);
    vin.upload(v);
    ASSERT_HCCL_OK(HcclAlltoAllV(vin.get(), sc, sd, HCCL_DATA_TYPE_INT32, vout.get(), rc, rd,
                                 HCCL_DATA_TYPE_INT32, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    const auto got = out.download<int32_t>(8);
    for (int q = 0; q < kRanks; ++q) {
      for (int k = 0; k < 2; ++k) ASSERT_EQ(got[q * 2 + k], 100 * q + 10 * r + k) << "rank " << r;
    }
    const auto gotV = vout.download<int32_t>(kRanks * (r + 1));
    for (int q = 0; q < kRanks; ++q) {
      for (int k = 0; k <= r; ++k) {
        ASSERT_EQ(gotV[q * (r + 1) + k], 1000 * q + 10 * r + k) << "rank " << r;
      }
    }
  });
}

TEST_F(HcclCollTest, BarrierAndNoAsyncErrorAfterwards) {
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    ASSERT_HCCL_OK(HcclBarrier(comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    HcclResult async = HCCL_E_RESERVED;
    ASSERT_HCCL_OK(HcclGetCommAsyncError(comm, &async));
    EXPECT_EQ(async, HCCL_SUCCESS) << "rank " << r;
  });
}

}  // namespace
