// Streams: create, destroy, synchronize, wait on events, sticky task failures.
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

class AclStreamTest : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
  }
};

TEST_F(AclStreamTest, CreateSynchronizeDestroy) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_NE(stream, nullptr);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  ASSERT_ACL_OK(aclrtSynchronizeStreamWithTimeout(stream, 100));
  ASSERT_ACL_OK(aclrtSynchronizeStream(nullptr));  // the default stream
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  EXPECT_ACL_ERROR(aclrtDestroyStream(stream), ACL_ERROR_RT_INVALID_HANDLE, "is not a live stream");
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
}

TEST_F(AclStreamTest, CreateWithConfigAcceptsEveryDocumentedFlag) {
  const uint32_t flags[] = {0,
                            ACL_STREAM_FAST_LAUNCH,
                            ACL_STREAM_FAST_SYNC,
                            ACL_STREAM_PERSISTENT,
                            ACL_STREAM_HUGE,
                            ACL_STREAM_CPU_SCHEDULE,
                            ACL_STREAM_DEVICE_USE_ONLY,
                            ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC};
  for (uint32_t flag : flags) {
    aclrtStream stream = nullptr;
    ASSERT_ACL_OK(aclrtCreateStreamWithConfig(&stream, /*priority=*/flag % 8, flag));
    ASSERT_ACL_OK(aclrtDestroyStream(stream));
  }
  aclrtStream stream = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateStreamWithConfig(&stream, 0, 0x100), ACL_ERROR_INVALID_PARAM,
                   "flag 0x100 has unknown bits 0x100");
  EXPECT_EQ(stream, nullptr);
}

TEST_F(AclStreamTest, NullArgumentsAndMissingDevice) {
  EXPECT_ACL_ERROR(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM, "stream is null");
  EXPECT_ACL_ERROR(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM, "stream is null");
  EXPECT_ACL_ERROR(aclrtStreamWaitEvent(nullptr, nullptr), ACL_ERROR_INVALID_PARAM,
                   "event is null");
  ASSERT_ACL_OK(aclrtResetDevice(0));
  aclrtStream stream = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateStream(&stream), ACL_ERROR_RT_CONTEXT_NULL, "no current device");
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(nullptr), ACL_ERROR_RT_CONTEXT_NULL,
                   "aclrtSynchronizeStream: no current device");
}

TEST_F(AclStreamTest, SynchronizeWithTimeoutReportsTheTimeout) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  Gate gate;
  gate.hold(stream);
  EXPECT_ACL_ERROR(aclrtSynchronizeStreamWithTimeout(stream, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                   "timed out with 1 task(s) pending");
  EXPECT_ACL_ERROR(aclrtSynchronizeStreamWithTimeout(stream, 0), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                   "timed out");
  EXPECT_ACL_ERROR(aclrtSynchronizeStreamWithTimeout(stream, -5), ACL_ERROR_INVALID_PARAM,
                   "timeout -5 ms is invalid");
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStreamWithTimeout(stream, -1));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclStreamTest, WaitEventOrdersTwoStreams) {
  aclrtStream producer = nullptr, consumer = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&producer));
  ASSERT_ACL_OK(aclrtCreateStream(&consumer));
  aclrtEvent ready = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&ready));
  const size_t size = 1 << 20;
  void *dev = nullptr, *in = nullptr, *out = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMallocHost(&in, size));
  ASSERT_ACL_OK(aclrtMallocHost(&out, size));
  std::memset(in, 0x3c, size);
  std::memset(out, 0, size);
  Gate gate;
  gate.hold(producer);  // the producer is held until the consumer has queued its copy
  ASSERT_ACL_OK(aclrtMemcpyAsync(dev, size, in, size, ACL_MEMCPY_HOST_TO_DEVICE, producer));
  ASSERT_ACL_OK(aclrtRecordEvent(ready, producer));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(consumer, ready));
  ASSERT_ACL_OK(aclrtMemcpyAsync(out, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST, consumer));
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(consumer, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(consumer));
  EXPECT_EQ(std::memcmp(in, out, size), 0);
}

TEST_F(AclStreamTest, FailedTaskCrossesEventsAndIsReportedOnce) {
  aclrtStream bad = nullptr, waiter = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&bad));
  ASSERT_ACL_OK(aclrtCreateStream(&waiter));
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&event));
  failStream(bad, ErrorCode::kTaskFailed);
  ASSERT_ACL_OK(aclrtRecordEvent(event, bad));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(waiter, event));
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(bad), ACL_ERROR_RT_AICPU_EXCEPTION,
                   "injected task failure");
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(waiter), ACL_ERROR_RT_AICPU_EXCEPTION,
                   "which had failed");
  // ACL_CONTINUE_ON_FAILURE (the default): each synchronize reported its error.
  ASSERT_ACL_OK(aclrtSynchronizeDevice());
  // ACL_STOP_ON_FAILURE: the error stays for every later synchronize.
  ASSERT_ACL_OK(aclrtSetStreamFailureMode(bad, ACL_STOP_ON_FAILURE));
  failStream(bad, ErrorCode::kTaskFailed);
  EXPECT_EQ(aclrtSynchronizeStream(bad), ACL_ERROR_RT_AICPU_EXCEPTION);
  EXPECT_ACL_ERROR(aclrtSynchronizeDevice(), ACL_ERROR_RT_AICPU_EXCEPTION, "failed");
}

TEST_F(AclStreamTest, DestroyWaitsForPendingWork) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  const size_t size = 4 << 20;
  void *dev = nullptr, *host = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMallocHost(&host, size));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, size, 0x7e, size, stream));
  ASSERT_ACL_OK(aclrtMemcpyAsync(host, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST, stream));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  const auto* bytes = static_cast<const unsigned char*>(host);
  EXPECT_EQ(bytes[0], 0x7e);
  EXPECT_EQ(bytes[size - 1], 0x7e);
}

}  // namespace
}  // namespace cohort::acltest
