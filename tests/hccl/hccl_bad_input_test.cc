// Bad input as an NPU sees it (issue 47), ranks as threads: a count of 0 succeeds before
// any other check, whatever the other arguments are; a buffer no device can reach is
// refused naming the parameter; and the communicator works on after each refusal.
// hccl_mp_test covers the same with ranks as processes.
#include <cstdint>
#include <vector>

#include "hccl_test_util.h"

namespace {

using hccl_test::DeviceBuffer;

constexpr int kBadInputRanks = 2;

using HcclBadInputTest = hccl_test::RanksTest<kBadInputRanks>;

// A sum allreduce of 5 floats (rank r gives r + 1 + i) in `in` and `out`, checked.
void allReduceIsRight(int r, HcclComm comm, aclrtStream s, void* in, void* out) {
  std::vector<float> x(5);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(r + 1) + i;
  ASSERT_ACL_OK(aclrtMemcpy(in, 20, x.data(), 20, ACL_MEMCPY_DEFAULT));
  ASSERT_HCCL_OK(HcclAllReduce(in, out, 5, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
  ASSERT_ACL_OK(aclrtSynchronizeStream(s));
  std::vector<float> got(5);
  ASSERT_ACL_OK(aclrtMemcpy(got.data(), 20, out, 20, ACL_MEMCPY_DEFAULT));
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], 3.0f + 2.0f * i) << "rank " << r << " element " << i;
  }
}

TEST(HcclZeroCount, SucceedsBeforeAnyOtherCheck) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  // No communicator, no stream, no buffer, no valid type, operation or root: HCCL looks
  // at the count first.
  const auto badType = static_cast<HcclDataType>(99);
  const auto badOp = static_cast<HcclReduceOp>(99);
  EXPECT_EQ(HcclAllReduce(nullptr, nullptr, 0, badType, badOp, nullptr, nullptr), HCCL_SUCCESS);
  EXPECT_EQ(HcclBroadcast(nullptr, 0, badType, 99, nullptr, nullptr), HCCL_SUCCESS);
  EXPECT_EQ(HcclAllGather(nullptr, nullptr, 0, badType, nullptr, nullptr), HCCL_SUCCESS);
  EXPECT_EQ(HcclReduceScatter(nullptr, nullptr, 0, badType, badOp, nullptr, nullptr),
            HCCL_SUCCESS);
  EXPECT_EQ(HcclReduce(nullptr, nullptr, 0, badType, badOp, 99, nullptr, nullptr), HCCL_SUCCESS);
  EXPECT_EQ(HcclScatter(nullptr, nullptr, 0, badType, 99, nullptr, nullptr), HCCL_SUCCESS);
  EXPECT_EQ(HcclSend(nullptr, 0, badType, 99, nullptr, nullptr), HCCL_SUCCESS);
  EXPECT_EQ(HcclRecv(nullptr, 0, badType, 99, nullptr, nullptr), HCCL_SUCCESS);
  EXPECT_EQ(HcclAlltoAll(nullptr, 0, badType, nullptr, 0, badType, nullptr, nullptr),
            HCCL_SUCCESS);
}

TEST_F(HcclBadInputTest, AllToAllNeedsBothCountsZeroToSkip) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream s = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&s));
  DeviceBuffer b(64);
  EXPECT_HCCL(HcclAlltoAll(b.get(), 0, HCCL_DATA_TYPE_FP32, b.get(), 1, HCCL_DATA_TYPE_FP32,
                           comms_[0], s),
              HCCL_E_PARA, "recvCount");
  EXPECT_HCCL(HcclAlltoAll(nullptr, 1, HCCL_DATA_TYPE_FP32, b.get(), 0, HCCL_DATA_TYPE_FP32,
                           comms_[0], s),
              HCCL_E_PTR, "sendBuf");
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// The variable-count collectives: a rank whose counts are 0 may pass no buffer; nothing
// to move at all is success (gather, reduce-scatter) or still a collective (all-to-all),
// as in HCCL. Every element that moves is checked.
TEST_F(HcclBadInputTest, ZeroCountsOfTheVariableCollectives) {
  onEveryRank([](int r, HcclComm comm, aclrtStream s) {
    const uint64_t none[kBadInputRanks] = {0, 0};
    EXPECT_EQ(HcclAllGatherV(nullptr, 0, nullptr, none, none, HCCL_DATA_TYPE_FP32, comm, s),
              HCCL_SUCCESS);
    EXPECT_EQ(HcclReduceScatterV(nullptr, none, none, nullptr, 0, HCCL_DATA_TYPE_FP32,
                                 HCCL_REDUCE_SUM, comm, s),
              HCCL_SUCCESS);
    EXPECT_EQ(HcclAlltoAllV(nullptr, none, none, HCCL_DATA_TYPE_FP32, nullptr, none, none,
                            HCCL_DATA_TYPE_FP32, comm, s),
              HCCL_SUCCESS);
    EXPECT_EQ(HcclSend(nullptr, 0, HCCL_DATA_TYPE_FP32, 1 - r, comm, s), HCCL_SUCCESS);

    // Rank 0 gives nothing (no send buffer), rank 1 gives 3 elements.
    const uint64_t counts[kBadInputRanks] = {0, 3}, displs[kBadInputRanks] = {0, 0};
    DeviceBuffer in(64), out(64);
    in.upload(std::vector<int32_t>{10 * r + 1, 10 * r + 2, 10 * r + 3});
    ASSERT_HCCL_OK(HcclAllGatherV(r == 0 ? nullptr : in.get(), counts[r], out.get(), counts,
                                  displs, HCCL_DATA_TYPE_INT32, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    EXPECT_EQ(out.download<int32_t>(3), (std::vector<int32_t>{11, 12, 13})) << "rank " << r;

    // Rank 0 receives nothing (no receive buffer), rank 1 the sum of both ranks' 3.
    DeviceBuffer reduced(64);
    in.upload(std::vector<int32_t>{0, 0, 0, 100 * r + 1, 100 * r + 2, 100 * r + 3});
    const uint64_t sendDispls[kBadInputRanks] = {0, 3};
    ASSERT_HCCL_OK(HcclReduceScatterV(in.get(), counts, sendDispls,
                                      r == 0 ? nullptr : reduced.get(), counts[r],
                                      HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    if (r == 1) {
      EXPECT_EQ(reduced.download<int32_t>(3), (std::vector<int32_t>{102, 104, 106}));
    }

    // All-to-all-vc: rank 0 sends nothing (no send buffer); rank 1 sends 2 to each rank.
    const uint64_t matrix[kBadInputRanks * kBadInputRanks] = {0, 0, 2, 2};
    DeviceBuffer got(64);
    in.upload(std::vector<int32_t>{7, 8, 9, 10});
    ASSERT_HCCL_OK(HcclAlltoAllVC(r == 0 ? nullptr : in.get(), matrix, HCCL_DATA_TYPE_INT32,
                                  got.get(), HCCL_DATA_TYPE_INT32, comm, s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    EXPECT_EQ(got.download<int32_t>(2),
              (r == 0 ? std::vector<int32_t>{7, 8} : std::vector<int32_t>{9, 10}))
        << "rank " << r;
  });
}

// Plain host memory (malloc, a vector) is refused in every call that moves data, naming
// the parameter, before anything is queued; memory from aclrtMallocHost is accepted.
TEST_F(HcclBadInputTest, HostMemoryNoDeviceCanReachIsRefusedNamingTheParameter) {
  onEveryRank([](int r, HcclComm comm, aclrtStream s) {
    std::vector<float> host(64);
    void* h = host.data();
    DeviceBuffer d(256);
    void* p = d.get();
    const char* plain = "plain host memory";
    const auto fp32 = HCCL_DATA_TYPE_FP32;
    const auto sum = HCCL_REDUCE_SUM;
    EXPECT_HCCL(HcclAllReduce(h, p, 4, fp32, sum, comm, s), HCCL_E_PARA, "parameter sendBuf");
    EXPECT_HCCL(HcclAllReduce(p, h, 4, fp32, sum, comm, s), HCCL_E_PARA, "parameter recvBuf");
    EXPECT_HCCL(HcclAllReduce(p, h, 4, fp32, sum, comm, s), HCCL_E_PARA, plain);
    EXPECT_HCCL(HcclBroadcast(h, 4, fp32, 0, comm, s), HCCL_E_PARA, "parameter buf");
    EXPECT_HCCL(HcclAllGather(h, p, 4, fp32, comm, s), HCCL_E_PARA, "parameter sendBuf");
    EXPECT_HCCL(HcclReduceScatter(p, h, 4, fp32, sum, comm, s), HCCL_E_PARA,
                "parameter recvBuf");
    EXPECT_HCCL(HcclReduce(h, p, 4, fp32, sum, 0, comm, s), HCCL_E_PARA, "parameter sendBuf");
    if (r == 0) {  // the root's buffers
      EXPECT_HCCL(HcclReduce(p, h, 4, fp32, sum, 0, comm, s), HCCL_E_PARA, "parameter recvBuf");
      EXPECT_HCCL(HcclScatter(h, p, 4, fp32, 0, comm, s), HCCL_E_PARA, "parameter sendBuf");
    }
    EXPECT_HCCL(HcclScatter(p, h, 4, fp32, 0, comm, s), HCCL_E_PARA, "parameter recvBuf");
    EXPECT_HCCL(HcclAlltoAll(h, 4, fp32, p, 4, fp32, comm, s), HCCL_E_PARA, "parameter sendBuf");
    const uint64_t counts[kBadInputRanks] = {4, 4}, displs[kBadInputRanks] = {0, 4};
    EXPECT_HCCL(HcclAlltoAllV(p, counts, displs, fp32, h, counts, displs, fp32, comm, s),
                HCCL_E_PARA, "parameter recvBuf");
    const uint64_t matrix[kBadInputRanks * kBadInputRanks] = {1, 1, 1, 1};
    EXPECT_HCCL(HcclAlltoAllVC(h, matrix, fp32, p, fp32, comm, s), HCCL_E_PARA,
                "parameter sendBuf");
    const uint64_t mine[kBadInputRanks] = {4, 4};
    EXPECT_HCCL(HcclAllGatherV(h, 4, p, mine, displs, fp32, comm, s), HCCL_E_PARA,
                "parameter sendBuf");
    EXPECT_HCCL(HcclReduceScatterV(p, mine, displs, h, 4, fp32, sum, comm, s), HCCL_E_PARA,
                "parameter recvBuf");
    EXPECT_HCCL(HcclSend(h, 4, fp32, 1 - r, comm, s), HCCL_E_PARA, "parameter sendBuf");
    EXPECT_HCCL(HcclRecv(h, 4, fp32, 1 - r, comm, s), HCCL_E_PARA, "parameter recvBuf");
    HcclSendRecvItem item{HCCL_SEND, h, 4, fp32, static_cast<uint32_t>(1 - r)};
    EXPECT_HCCL(HcclBatchSendRecv(&item, 1, comm, s), HCCL_E_PARA, "sendRecvInfo[0].buf");

    // Nothing was queued: the communicator works on, with device memory and with host
    // memory made for devices.
    allReduceIsRight(r, comm, s, p, static_cast<char*>(p) + 128);
    void* pinned = nullptr;
    ASSERT_ACL_OK(aclrtMallocHost(&pinned, 64));
    allReduceIsRight(r, comm, s, pinned, static_cast<char*>(pinned) + 32);
    ASSERT_ACL_OK(aclrtFreeHost(pinned));
  });
}

}  // namespace
