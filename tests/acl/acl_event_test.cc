// Events: record, query, synchronize, reset, elapsed time.
#include <chrono>
#include <thread>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclEventTest = AclDevice0StreamTest;

TEST_F(AclEventTest, CreateWithEveryDocumentedFlag) {
  const uint32_t flags[] = {0,
                            ACL_EVENT_SYNC,
                            ACL_EVENT_CAPTURE_STREAM_PROGRESS,
                            ACL_EVENT_TIME_LINE,
                            ACL_EVENT_DEVICE_USE_ONLY,
                            ACL_EVENT_EXTERNAL,
                            ACL_EVENT_IPC,
                            ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE};
  for (uint32_t flag : flags) {
    aclrtEvent event = nullptr;
    ASSERT_ACL_OK(aclrtCreateEventWithFlag(&event, flag));
    ASSERT_ACL_OK(aclrtRecordEvent(event, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeEvent(event));
    ASSERT_ACL_OK(aclrtDestroyEvent(event));
  }
  aclrtEvent event = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateEventWithFlag(&event, 0x4), ACL_ERROR_INVALID_PARAM,
                   "flag 0x4 has unknown bits 0x4");
  EXPECT_ACL_ERROR(aclrtCreateEvent(nullptr), ACL_ERROR_INVALID_PARAM, "event is null");
}

TEST_F(AclEventTest, QueryReportsBothStatusEnums) {
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&event));
  aclrtEventRecordedStatus recorded = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  aclrtEventStatus status = ACL_EVENT_STATUS_NOT_READY;
  ASSERT_ACL_OK(aclrtQueryEventStatus(event, &recorded));  // never recorded: complete
  EXPECT_EQ(recorded, ACL_EVENT_RECORDED_STATUS_COMPLETE);
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtRecordEvent(event, stream_));
  ASSERT_ACL_OK(aclrtQueryEventStatus(event, &recorded));
  EXPECT_EQ(recorded, ACL_EVENT_RECORDED_STATUS_NOT_READY);
  ASSERT_ACL_OK(aclrtQueryEvent(event, &status));
  EXPECT_EQ(status, ACL_EVENT_STATUS_NOT_READY);
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeEvent(event));
  ASSERT_ACL_OK(aclrtQueryEventStatus(event, &recorded));
  EXPECT_EQ(recorded, ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_ACL_OK(aclrtQueryEvent(event, &status));
  EXPECT_EQ(status, ACL_EVENT_STATUS_COMPLETE);
  EXPECT_ACL_ERROR(aclrtQueryEventStatus(event, nullptr), ACL_ERROR_INVALID_PARAM,
                   "status is null");
  EXPECT_ACL_ERROR(aclrtQueryEvent(nullptr, &status), ACL_ERROR_INVALID_PARAM, "event is null");
}

TEST_F(AclEventTest, SynchronizeWithTimeoutReportsTheTimeout) {
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&event));
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtRecordEvent(event, stream_));
  EXPECT_ACL_ERROR(aclrtSynchronizeEventWithTimeout(event, 20), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                   "eventSynchronize timed out after 20 ms");
  EXPECT_ACL_ERROR(aclrtSynchronizeEventWithTimeout(event, -3), ACL_ERROR_INVALID_PARAM,
                   "timeout -3 ms is invalid");
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeEventWithTimeout(event, -1));
  EXPECT_ACL_ERROR(aclrtSynchronizeEvent(nullptr), ACL_ERROR_INVALID_PARAM, "event is null");
}

TEST_F(AclEventTest, ElapsedTimeBetweenRecords) {
  aclrtEvent start = nullptr, end = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&start));
  ASSERT_ACL_OK(aclrtCreateEvent(&end));
  ASSERT_ACL_OK(aclrtRecordEvent(start, stream_));
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream_), [](runtime::Stream*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclrtRecordEvent(end, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeEvent(end));
  float ms = 0;
  ASSERT_ACL_OK(aclrtEventElapsedTime(&ms, start, end));
  EXPECT_GE(ms, 29.0f);
  EXPECT_LT(ms, 5000.0f);
  EXPECT_ACL_ERROR(aclrtEventElapsedTime(&ms, end, start), ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
                   "the end event completed");
  EXPECT_ACL_ERROR(aclrtEventElapsedTime(nullptr, start, end), ACL_ERROR_INVALID_PARAM,
                   "ms is null");
  EXPECT_ACL_ERROR(aclrtEventElapsedTime(&ms, start, nullptr), ACL_ERROR_INVALID_PARAM,
                   "an event is null");
}

TEST_F(AclEventTest, ElapsedTimeNeedsRecordedCompletedEvents) {
  aclrtEvent start = nullptr, end = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&start));
  ASSERT_ACL_OK(aclrtCreateEvent(&end));
  float ms = 0;
  EXPECT_ACL_ERROR(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                   "the start event was never recorded");
  ASSERT_ACL_OK(aclrtRecordEvent(start, stream_));
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtRecordEvent(end, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeEvent(start));
  EXPECT_ACL_ERROR(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                   "the end event has not completed");
}

TEST_F(AclEventTest, ResetHappensInStreamOrder) {
  aclrtEvent start = nullptr, end = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&start));
  ASSERT_ACL_OK(aclrtCreateEvent(&end));
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtRecordEvent(start, stream_));
  ASSERT_ACL_OK(aclrtRecordEvent(end, stream_));
  ASSERT_ACL_OK(aclrtResetEvent(start, stream_));  // queued behind the records
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  float ms = 0;
  EXPECT_ACL_ERROR(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                   "never recorded");
  aclrtEventRecordedStatus recorded = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  ASSERT_ACL_OK(aclrtQueryEventStatus(start, &recorded));
  EXPECT_EQ(recorded, ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_ACL_OK(aclrtEventElapsedTime(&ms, end, end));  // end is still recorded
  EXPECT_EQ(ms, 0.0f);
  ASSERT_ACL_OK(aclrtResetEvent(end, nullptr));  // the default stream works too
  ASSERT_ACL_OK(aclrtSynchronizeStream(nullptr));
  EXPECT_ACL_ERROR(aclrtEventElapsedTime(&ms, end, end), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                   "never recorded");
}

TEST_F(AclEventTest, DestroyedEventIsAnInvalidHandle) {
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&event));
  ASSERT_ACL_OK(aclrtDestroyEvent(event));
  EXPECT_ACL_ERROR(aclrtDestroyEvent(event), ACL_ERROR_RT_INVALID_HANDLE, "is not a live event");
  EXPECT_ACL_ERROR(aclrtRecordEvent(event, stream_), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live event");
  EXPECT_ACL_ERROR(aclrtResetEvent(event, stream_), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live event");
  EXPECT_ACL_ERROR(aclrtStreamWaitEvent(stream_, event), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live event");
  EXPECT_ACL_ERROR(aclrtDestroyEvent(nullptr), ACL_ERROR_INVALID_PARAM, "event is null");
  EXPECT_ACL_ERROR(aclrtRecordEvent(nullptr, stream_), ACL_ERROR_INVALID_PARAM, "event is null");
}

TEST_F(AclEventTest, EventsNeedACurrentDevice) {
  ASSERT_ACL_OK(aclrtDestroyStream(stream_));
  stream_ = nullptr;
  ASSERT_ACL_OK(aclrtResetDevice(0));
  aclrtEvent event = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateEvent(&event), ACL_ERROR_RT_CONTEXT_NULL, "no current device");
}

}  // namespace
}  // namespace cohort::acltest
