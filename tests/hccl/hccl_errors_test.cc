// The HCCL layer's refusals: HcclGetErrorString's texts, the error table, and for
// every function the null pointers (HCCL_E_PTR), invalid values (HCCL_E_PARA with
// EI0003's words), unsupported types (HCCL_E_NOT_SUPPORT) and dead handles.
#include <cstdint>
#include <string>
#include <thread>

#include "common/config.h"
#include "hccl/result_map.h"
#include "hccl_test_util.h"

namespace {

using cohort::ErrorCode;
using hccl_test::DeviceBuffer;

// aclInit once for the whole binary (all of its files).
[[maybe_unused]] auto* const gAcl =
    ::testing::AddGlobalTestEnvironment(new hccl_test::AclEnvironment());

TEST(HcclErrorString, EveryResultHasHcclsText) {
  const char* texts[] = {"no error",
                         "parameter error",
                         "empty pointer",
                         "memory error",
                         "internal error",
                         "not support feature",
                         "not found specific resource",
                         "resource unavailable",
                         "call system interface error",
                         "timeout",
                         "open file fail",
                         "tcp connect fail",
                         "roce connect fail",
                         "tcp transfer fail",
                         "roce transfer fail",
                         "call runtime api fail",
                         "call driver api fail",
                         "call profiling api fail",
                         "call cce api fail",
                         "call network api fail",
                         "try again",
                         "error cqe",
                         "error communicator suspending",
                         "retry constraint",
                         "out of memory"};
  for (int code = 0; code <= 24; ++code) {
    EXPECT_STREQ(HcclGetErrorString(static_cast<HcclResult>(code)), texts[code]) << code;
  }
  for (int code : {25, 1041, 1042, -1, 9999}) {
    EXPECT_STREQ(HcclGetErrorString(static_cast<HcclResult>(code)), "unknown error") << code;
  }
}

TEST(HcclErrorMap, EveryCohortCodeHasItsResult) {
  using cohort::hccl::toHcclResult;
  const std::pair<ErrorCode, HcclResult> table[] = {
      {ErrorCode::kSuccess, HCCL_SUCCESS},
      {ErrorCode::kInvalidArgument, HCCL_E_PARA},
      {ErrorCode::kNotInitialized, HCCL_E_RUNTIME},
      {ErrorCode::kInvalidDevice, HCCL_E_RUNTIME},
      {ErrorCode::kOutOfMemory, HCCL_E_OOM},
      {ErrorCode::kInvalidPointer, HCCL_E_PARA},
      {ErrorCode::kDoubleFree, HCCL_E_MEMORY},
      {ErrorCode::kInvalidMemcpyKind, HCCL_E_RUNTIME},
      {ErrorCode::kSizeOverflow, HCCL_E_PARA},
      {ErrorCode::kTimeout, HCCL_E_TIMEOUT},
      {ErrorCode::kTaskFailed, HCCL_E_RUNTIME},
      {ErrorCode::kInvalidHandle, HCCL_E_RUNTIME},
      {ErrorCode::kNotReady, HCCL_E_AGAIN},
      {ErrorCode::kVersionMismatch, HCCL_E_PARA},
      {ErrorCode::kSystemError, HCCL_E_SYSCALL},
      {ErrorCode::kInternal, HCCL_E_INTERNAL},
      {ErrorCode::kAborted, HCCL_E_INTERNAL},
      {ErrorCode::kRemoteError, HCCL_E_REMOTE},
      {ErrorCode::kInvalidUsage, HCCL_E_PARA},
      {ErrorCode::kConfigError, HCCL_E_PARA},
      {ErrorCode::kParseError, HCCL_E_PARA},
      {ErrorCode::kValidationError, HCCL_E_PARA},
      {ErrorCode::kUnavailable, HCCL_E_UNAVAIL},
      {ErrorCode::kConnectionError, HCCL_E_TCP_CONNECT},
      {ErrorCode::kMismatch, HCCL_E_PARA},
      {ErrorCode::kNotSupported, HCCL_E_NOT_SUPPORT},
  };
  EXPECT_EQ(sizeof(table) / sizeof(table[0]), 26u) << "a new ErrorCode needs a row";
  for (const auto& [code, result] : table) {
    EXPECT_EQ(toHcclResult(code), result) << cohort::errorString(code);
  }
  EXPECT_STREQ(cohort::hccl::resultName(HCCL_E_TCP_CONNECT), "HCCL_E_TCP_CONNECT");
}

// A 2-rank communicator (device 0 and 1); the main thread is on device 0 with a stream.
class HcclRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int32_t devices[2] = {0, 1};
    ASSERT_HCCL_OK(HcclCommInitAll(2, devices, comms_));
    ASSERT_ACL_OK(aclrtSetDevice(0));
    ASSERT_ACL_OK(aclrtCreateStream(&stream_));
  }
  void TearDown() override {
    for (HcclComm c : comms_) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
  }
  HcclComm comms_[2] = {};
  aclrtStream stream_ = nullptr;
};

TEST_F(HcclRefusalTest, NullPointersAreEmptyPointerErrors) {
  DeviceBuffer b(64);
  void* p = b.get();
  HcclComm c = comms_[0];
  uint32_t u = 0;
  uint64_t counts[2] = {1, 1};
  EXPECT_HCCL(HcclAllReduce(nullptr, p, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, stream_),
              HCCL_E_PTR, "parameter sendBuf is a null pointer");
  EXPECT_HCCL(HcclAllReduce(p, nullptr, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, stream_),
              HCCL_E_PTR, "HcclAllReduce: parameter recvBuf");
  EXPECT_HCCL(HcclAllReduce(p, p, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, nullptr, stream_),
              HCCL_E_PTR, "parameter comm");
  EXPECT_HCCL(HcclAllReduce(p, p, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, nullptr), HCCL_E_PTR,
              "parameter stream");
  EXPECT_HCCL(HcclBroadcast(nullptr, 1, HCCL_DATA_TYPE_FP32, 0, c, stream_), HCCL_E_PTR, "buf");
  EXPECT_HCCL(HcclReduceScatter(p, nullptr, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, stream_),
              HCCL_E_PTR, "recvBuf");
  EXPECT_HCCL(HcclReduceScatterV(p, nullptr, counts, p, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c,
                                 stream_),
              HCCL_E_PTR, "sendCounts");
  EXPECT_HCCL(HcclAllGather(nullptr, p, 1, HCCL_DATA_TYPE_FP32, c, stream_), HCCL_E_PTR, "sendBuf");
  EXPECT_HCCL(HcclAllGatherV(p, 1, p, counts, nullptr, HCCL_DATA_TYPE_FP32, c, stream_), HCCL_E_PTR,
              "recvDispls");
  EXPECT_HCCL(HcclReduce(p, nullptr, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, c, stream_),
              HCCL_E_PTR, "recvBuf");
  EXPECT_HCCL(HcclScatter(nullptr, p, 1, HCCL_DATA_TYPE_FP32, 0, c, stream_), HCCL_E_PTR,
              "sendBuf");
  EXPECT_HCCL(HcclSend(nullptr, 1, HCCL_DATA_TYPE_FP32, 1, c, stream_), HCCL_E_PTR, "sendBuf");
  EXPECT_HCCL(HcclRecv(nullptr, 1, HCCL_DATA_TYPE_FP32, 1, c, stream_), HCCL_E_PTR, "recvBuf");
  EXPECT_HCCL(HcclBatchSendRecv(nullptr, 1, c, stream_), HCCL_E_PTR, "sendRecvInfo");
  HcclSendRecvItem item{HCCL_SEND, nullptr, 1, HCCL_DATA_TYPE_FP32, 1};
  EXPECT_HCCL(HcclBatchSendRecv(&item, 1, c, stream_), HCCL_E_PTR, "sendRecvInfo[0].buf");
  EXPECT_HCCL(HcclAlltoAll(p, 1, HCCL_DATA_TYPE_FP32, nullptr, 1, HCCL_DATA_TYPE_FP32, c, stream_),
              HCCL_E_PTR, "recvBuf");
  EXPECT_HCCL(HcclAlltoAllV(p, counts, counts, HCCL_DATA_TYPE_FP32, p, counts, nullptr,
                            HCCL_DATA_TYPE_FP32, c, stream_),
              HCCL_E_PTR, "rdispls");
  EXPECT_HCCL(HcclBarrier(c, nullptr), HCCL_E_PTR, "stream");
  EXPECT_HCCL(HcclGetRankSize(c, nullptr), HCCL_E_PTR, "rankSize");
  EXPECT_HCCL(HcclGetRankId(nullptr, &u), HCCL_E_PTR, "comm");
  EXPECT_HCCL(HcclGetCommName(c, nullptr), HCCL_E_PTR, "commName");
  EXPECT_HCCL(HcclGetCommAsyncError(c, nullptr), HCCL_E_PTR, "asyncError");
  // Nothing to destroy: HCCL's own unit tests expect success.
  EXPECT_EQ(HcclCommDestroy(nullptr), HCCL_SUCCESS);
  EXPECT_HCCL(HcclGetRootInfo(nullptr), HCCL_E_PTR, "rootInfo");
  HcclComm out = nullptr;
  EXPECT_HCCL(HcclCommInitRootInfo(2, nullptr, 0, &out), HCCL_E_PTR, "rootInfo");
  EXPECT_HCCL(HcclCommInitClusterInfo(nullptr, 0, &out), HCCL_E_PTR, "clusterInfo");
  EXPECT_HCCL(HcclCommInitClusterInfo("t.json", 0, nullptr), HCCL_E_PTR, "comm");
  EXPECT_HCCL(HcclCommInitAll(2, nullptr, &out), HCCL_E_PTR, "devices");
  EXPECT_HCCL(HcclCreateSubCommConfig(nullptr, 1, &u, 0, 0, nullptr, &out), HCCL_E_PTR, "comm");
  EXPECT_HCCL(HcclCreateSubCommConfig(&c, 1, &u, 0, 0, nullptr, nullptr), HCCL_E_PTR, "subComm");
  // A rank list without a sub-communicator id, or an id without a list (HCCL's answers).
  EXPECT_HCCL(HcclCreateSubCommConfig(&c, 1, nullptr, 5, 0, nullptr, &out), HCCL_E_PARA,
              "rankIds");
  EXPECT_HCCL(HcclCreateSubCommConfig(&c, 1, &u, 0xFFFFFFFFu, 0, nullptr, &out), HCCL_E_PARA,
              "subCommId");
}

TEST_F(HcclRefusalTest, TypesAndOperationsOutsideHcclsEnums) {
  DeviceBuffer b(64);
  void* p = b.get();
  for (HcclDataType t : {HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_HIF8, HCCL_DATA_TYPE_FP8E4M3,
                         HCCL_DATA_TYPE_FP8E5M2, HCCL_DATA_TYPE_FP8E8M0}) {
    EXPECT_HCCL(HcclAllReduce(p, p, 1, t, HCCL_REDUCE_SUM, comms_[0], stream_), HCCL_E_NOT_SUPPORT,
                "is not supported by Cohort");
  }
  for (int t : {13, 18, 255, -1}) {
    EXPECT_HCCL(
        HcclAllGather(p, p, 1, static_cast<HcclDataType>(t), comms_[0], stream_),
        HCCL_E_NOT_SUPPORT,
        "EI0003: Failed to verify parameters of operator HcclAllGather. Value " +
            std::to_string(t) + " for parameter dataType is invalid. The expected value is");
  }
  for (int op : {4, 255, -3}) {
    EXPECT_HCCL(HcclAllReduce(p, p, 1, HCCL_DATA_TYPE_FP32, static_cast<HcclReduceOp>(op),
                              comms_[0], stream_),
                HCCL_E_NOT_SUPPORT,
                "Value " + std::to_string(op) + " for parameter op is invalid");
  }
  EXPECT_HCCL(
      HcclAlltoAll(p, 1, HCCL_DATA_TYPE_FP32, p, 1, HCCL_DATA_TYPE_INT8, comms_[0], stream_),
      HCCL_E_PARA, "parameter recvType");
  HcclSendRecvItem item{HCCL_SEND, p, 1, HCCL_DATA_TYPE_INT128, 1};
  EXPECT_HCCL(HcclBatchSendRecv(&item, 1, comms_[0], stream_), HCCL_E_NOT_SUPPORT,
              "sendRecvInfo[0].dataType");
}

TEST_F(HcclRefusalTest, RanksCountsAndBuffersOutOfRange) {
  DeviceBuffer b(64), small(16);
  void* p = b.get();
  HcclComm c = comms_[0];
  uint64_t counts[2] = {2, 1}, displs[2] = {0, 2};
  EXPECT_HCCL(HcclBroadcast(p, 1, HCCL_DATA_TYPE_FP32, 2, c, stream_), HCCL_E_PARA,
              "Value 2 for parameter root is invalid. The expected value is a rank in [0, 2)");
  EXPECT_HCCL(HcclReduce(p, p, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 7, c, stream_), HCCL_E_PARA,
              "parameter root");
  EXPECT_HCCL(HcclScatter(p, p, 1, HCCL_DATA_TYPE_FP32, 9, c, stream_), HCCL_E_PARA, "root");
  EXPECT_HCCL(HcclSend(p, 1, HCCL_DATA_TYPE_FP32, 0, c, stream_), HCCL_E_PARA,
              "Value 0 for parameter destRank is invalid. The expected value is a rank other");
  EXPECT_HCCL(HcclRecv(p, 1, HCCL_DATA_TYPE_FP32, 5, c, stream_), HCCL_E_PARA, "srcRank");
  HcclSendRecvItem item{HCCL_SEND, p, 1, HCCL_DATA_TYPE_FP32, 1};
  EXPECT_HCCL(HcclBatchSendRecv(&item, 0, c, stream_), HCCL_E_PARA, "parameter itemNum");
  item.sendRecvType = static_cast<HcclSendRecvType>(7);
  EXPECT_HCCL(HcclBatchSendRecv(&item, 1, c, stream_), HCCL_E_PARA, "sendRecvInfo[0].sendRecvType");
  item = {HCCL_RECV, p, 1, HCCL_DATA_TYPE_FP32, 0};
  EXPECT_HCCL(HcclBatchSendRecv(&item, 1, c, stream_), HCCL_E_PARA, "sendRecvInfo[0].remoteRank");
  EXPECT_HCCL(HcclAllGatherV(p, 1, p, counts, displs, HCCL_DATA_TYPE_FP32, c, stream_), HCCL_E_PARA,
              "Value 1 for parameter sendCount is invalid. The expected value is "
              "recvCounts[0] = 2");
  EXPECT_HCCL(
      HcclReduceScatterV(p, counts, displs, p, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, stream_),
      HCCL_E_PARA, "parameter recvCount");
  EXPECT_HCCL(HcclAlltoAll(p, 2, HCCL_DATA_TYPE_FP32, p, 1, HCCL_DATA_TYPE_FP32, c, stream_),
              HCCL_E_PARA,
              "Value 1 for parameter recvCount is invalid. The expected value is "
              "sendCount (2)");
  // The runtime knows the allocation: 16 bytes cannot hold 1000 floats.
  EXPECT_HCCL(HcclAllReduce(small.get(), p, 1000, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, stream_),
              HCCL_E_PARA, "holds 16 bytes");
  // A stream of device 1 for the communicator of device 0.
  aclrtStream other = nullptr;
  std::thread([&] {
    ASSERT_ACL_OK(aclrtSetDevice(1));
    ASSERT_ACL_OK(aclrtCreateStream(&other));
  }).join();
  EXPECT_HCCL(HcclBarrier(c, other), HCCL_E_PARA, "the stream belongs to device 1");
  EXPECT_EQ(aclrtDestroyStream(other), ACL_SUCCESS);
  EXPECT_HCCL(HcclGroupEnd(), HCCL_E_PARA, "groupEnd without groupStart");
}

TEST_F(HcclRefusalTest, DeadAndForeignHandlesAreRefusedNotDereferenced) {
  DeviceBuffer b(64);
  uint32_t size = 0;
  HcclComm fake = reinterpret_cast<HcclComm>(static_cast<uintptr_t>(0x1234));
  EXPECT_HCCL(HcclGetRankSize(fake, &size), HCCL_E_PARA,
              "Value 0x1234 for parameter comm is invalid. The expected value is a communicator "
              "made by an HcclCommInit* call");
  HcclComm extra[1] = {};
  int32_t device = 2;
  ASSERT_HCCL_OK(HcclCommInitAll(1, &device, extra));
  ASSERT_HCCL_OK(HcclCommDestroy(extra[0]));
  EXPECT_HCCL(HcclCommDestroy(extra[0]), HCCL_E_PARA, "not destroyed");
  EXPECT_HCCL(HcclGetRankId(extra[0], &size), HCCL_E_PARA, "parameter comm is invalid");
  EXPECT_HCCL(
      HcclAllReduce(b.get(), b.get(), 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, extra[0], stream_),
      HCCL_E_PARA, "operator HcclAllReduce");
  // A new communicator never takes over a dead handle.
  HcclComm again[1] = {};
  ASSERT_HCCL_OK(HcclCommInitAll(1, &device, again));
  EXPECT_NE(again[0], extra[0]);
  EXPECT_HCCL(HcclGetRankId(extra[0], &size), HCCL_E_PARA, "comm");
  EXPECT_EQ(HcclCommDestroy(again[0]), HCCL_SUCCESS);
}

TEST_F(HcclRefusalTest, ADestroyedStreamIsARuntimeError) {
  aclrtStream gone = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&gone));
  ASSERT_ACL_OK(aclrtDestroyStream(gone));
  EXPECT_HCCL(HcclBarrier(comms_[0], gone), HCCL_E_RUNTIME, "is not a live stream");
}

// The refusal is in the log as HCCL writes it: errNo, result name, EI0003 text.
TEST_F(HcclRefusalTest, RefusalsAreLogged) {
  uint32_t size = 0;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(HcclGetRankSize(reinterpret_cast<HcclComm>(static_cast<uintptr_t>(0x40)), &size),
            HCCL_E_PARA);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("[hccl] HcclGetRankSize: errNo[0x0000000005000001] HCCL_E_PARA (1): EI0003: "
                     "Failed to verify parameters of operator HcclGetRankSize. Value 0x40 for "
                     "parameter comm is invalid. The expected value is"),
            std::string::npos)
      << log;
}

TEST(HcclInitAll, RefusesBadDeviceLists) {
  HcclComm comms[3] = {};
  int32_t dup[3] = {0, 1, 0}, bad[2] = {0, 99};
  EXPECT_HCCL(HcclCommInitAll(0, dup, comms), HCCL_E_PARA, "Value 0 for parameter ndev");
  EXPECT_HCCL(HcclCommInitAll(3, dup, comms), HCCL_E_PARA,
              "Value 0 for parameter devices[2] is invalid. The expected value is a device id "
              "not listed before");
  EXPECT_HCCL(HcclCommInitAll(2, bad, comms), HCCL_E_PARA, "parameter devices[1]");
  EXPECT_HCCL(HcclCommInitAll(2, bad, nullptr), HCCL_E_PTR, "comms");
}

}  // namespace
