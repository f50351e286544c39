#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

class EventTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(setDevice(0));
    ASSERT_OK(streamCreate(&a_));
    ASSERT_OK(streamCreate(&b_));
    ASSERT_OK(eventCreate(&event_));
  }
  void TearDown() override {
    ASSERT_OK(eventDestroy(event_));
    ASSERT_OK(streamDestroy(a_));
    ASSERT_OK(streamDestroy(b_));
    ASSERT_OK(resetDevice(0));
  }
  // A kernel that blocks until release_ is set.
  Kernel gate() {
    return [this](Stream*) {
      while (!release_.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
      return Status::Ok();
    };
  }
  Stream* a_ = nullptr;
  Stream* b_ = nullptr;
  Event* event_ = nullptr;
  std::atomic<bool> release_{false};
};

TEST_F(EventTest, StreamWaitEventOrdersTwoStreams) {
  std::atomic<int> value{0};
  ASSERT_OK(launchKernel(a_, gate()));
  ASSERT_OK(launchKernel(a_, [&](Stream*) {
    value = 42;
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(event_, a_));
  ASSERT_OK(streamWaitEvent(b_, event_));
  int seen = -1;
  ASSERT_OK(launchKernel(b_, [&](Stream*) {
    seen = value.load();
    return Status::Ok();
  }));
  EXPECT_ERROR(eventQuery(event_), kNotReady, "not run");
  EXPECT_ERROR(streamSynchronize(b_, 20), kTimeout, "timed out");  // b_ is held by a_
  release_ = true;
  ASSERT_OK(streamSynchronize(b_));
  EXPECT_EQ(seen, 42);
  ASSERT_OK(eventQuery(event_));
}

TEST_F(EventTest, NeverRecordedEventIsComplete) {
  ASSERT_OK(eventQuery(event_));
  ASSERT_OK(eventSynchronize(event_, 0));
  ASSERT_OK(streamWaitEvent(b_, event_));
  ASSERT_OK(streamSynchronize(b_, 1000));
}

TEST_F(EventTest, SynchronizeWaitsForTheLatestRecord) {
  ASSERT_OK(launchKernel(a_, gate()));
  ASSERT_OK(eventRecord(event_, a_));
  EXPECT_ERROR(eventSynchronize(event_, 20), kTimeout, "timed out after 20 ms");
  release_ = true;
  ASSERT_OK(eventSynchronize(event_));
  ASSERT_OK(eventQuery(event_));
}

TEST_F(EventTest, ElapsedTime) {
  Event* end = nullptr;
  ASSERT_OK(eventCreate(&end));
  float ms = 0;
  EXPECT_ERROR(eventElapsedTime(&ms, event_, end), kInvalidUsage, "never recorded");
  ASSERT_OK(eventRecord(event_, a_));
  ASSERT_OK(launchKernel(a_, [](Stream*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(end, a_));
  ASSERT_OK(eventSynchronize(end));
  ASSERT_OK(eventElapsedTime(&ms, event_, end));
  EXPECT_GE(ms, 29.0f);
  EXPECT_LT(ms, 5000.0f);
  // Pending end event: not ready.
  ASSERT_OK(launchKernel(a_, gate()));
  ASSERT_OK(eventRecord(end, a_));
  EXPECT_ERROR(eventElapsedTime(&ms, event_, end), kNotReady, "end event has not completed");
  release_ = true;
  ASSERT_OK(streamSynchronize(a_));
  ASSERT_OK(eventDestroy(end));
}

TEST_F(EventTest, ErrorsCrossEventsToWaitingStreams) {
  ASSERT_OK(launchKernel(a_, [](Stream*) { return Status(ErrorCode::kRemoteError, "peer died"); }));
  ASSERT_OK(eventRecord(event_, a_));
  ASSERT_OK(streamWaitEvent(b_, event_));
  const Status s = streamSynchronize(b_);
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();  // the original code
  EXPECT_NE(s.message().find("peer died"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("device 0 stream"), std::string::npos) << s.message();
}

TEST_F(EventTest, WaitWorksAcrossDevices) {
  std::atomic<int> value{0};
  ASSERT_OK(launchKernel(a_, gate()));
  ASSERT_OK(launchKernel(a_, [&](Stream*) {
    value = 7;
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(event_, a_));
  int seen = -1;
  std::thread other([&] {
    ASSERT_OK(setDevice(1));
    ASSERT_OK(streamWaitEvent(nullptr, event_));
    ASSERT_OK(launchKernel(nullptr, [&](Stream*) {
      seen = value.load();
      return Status::Ok();
    }));
    ASSERT_OK(streamSynchronize(nullptr));
    ASSERT_OK(resetDevice(1));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  release_ = true;
  other.join();
  EXPECT_EQ(seen, 7);
}

TEST_F(EventTest, DestroyedEventHandleIsRejectedButQueuedWaitsComplete) {
  Event* e = nullptr;
  ASSERT_OK(eventCreate(&e));
  ASSERT_OK(launchKernel(a_, gate()));
  ASSERT_OK(eventRecord(e, a_));
  ASSERT_OK(streamWaitEvent(b_, e));
  ASSERT_OK(eventDestroy(e));  // tasks hold the event's state, not the handle
  release_ = true;
  ASSERT_OK(streamSynchronize(b_));
  EXPECT_ERROR(eventQuery(e), kInvalidHandle, "not a live event");
  EXPECT_ERROR(eventRecord(e, a_), kInvalidHandle, "eventRecord");
  EXPECT_ERROR(eventDestroy(e), kInvalidHandle, "not a live event");
}

TEST_F(EventTest, ResetMakesTheEventCompleteAgain) {
  ASSERT_OK(launchKernel(a_, gate()));
  ASSERT_OK(eventRecord(event_, a_));
  EXPECT_ERROR(eventQuery(event_), kNotReady, "");
  ASSERT_OK(eventReset(event_));
  ASSERT_OK(eventQuery(event_));
  release_ = true;
  ASSERT_OK(streamSynchronize(a_));
}

}  // namespace
}  // namespace cohort::runtime
