// Stream capture in the C++ runtime: a launch hands each kernel the stream it runs
// on, an event recorded in a model is recorded anew by every launch, a callback runs
// once per launch, and what a capture may not do.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

class CaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(setDevice(0));
    ASSERT_OK(streamCreate(&stream_));
    ASSERT_OK(streamCreate(&other_));
  }
  void TearDown() override {
    if (model_ != nullptr) EXPECT_OK(modelDestroy(model_));
    ASSERT_OK(streamDestroy(stream_));
    ASSERT_OK(streamDestroy(other_));
    ASSERT_OK(resetDevice(0));
  }
  Stream* stream_ = nullptr;
  Stream* other_ = nullptr;
  Model* model_ = nullptr;
};

TEST_F(CaptureTest, AKernelIsHandedTheStreamOfEachLaunch) {
  std::atomic<Stream*> ranOn{nullptr};
  std::atomic<int> runs{0};
  ASSERT_OK(captureBegin(stream_, CaptureMode::kGlobal));
  ASSERT_OK(launchKernel(stream_, [&](Stream* s) {
    ranOn = s;
    ++runs;
    return Status::Ok();
  }));
  ASSERT_OK(captureEnd(stream_, &model_));
  EXPECT_EQ(runs.load(), 0);
  ASSERT_OK(modelLaunch(model_, other_));
  ASSERT_OK(streamSynchronize(other_));
  EXPECT_EQ(ranOn.load(), other_);
  ASSERT_OK(modelLaunch(model_, stream_));
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_EQ(ranOn.load(), stream_);
  EXPECT_EQ(runs.load(), 2);
}

TEST_F(CaptureTest, AnEventRecordedInAModelIsRecordedByEveryLaunch) {
  Event* event = nullptr;
  ASSERT_OK(eventCreate(&event));
  std::atomic<bool> open{false};
  ASSERT_OK(captureBegin(stream_, CaptureMode::kRelaxed));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    while (!open.load()) std::this_thread::yield();
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(event, stream_));
  ASSERT_OK(captureEnd(stream_, &model_));
  EXPECT_TRUE(eventQuery(event).ok()) << "the capture recorded nothing for real";
  for (int launch = 0; launch < 2; ++launch) {
    open = false;
    ASSERT_OK(modelLaunch(model_, stream_));
    EXPECT_EQ(eventQuery(event).code(), ErrorCode::kNotReady) << "launch " << launch;
    // A stream outside the model waits for this launch's record.
    std::atomic<bool> after{false};
    ASSERT_OK(streamWaitEvent(other_, event));
    ASSERT_OK(launchKernel(other_, [&](Stream*) {
      after = true;
      return Status::Ok();
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(after.load()) << "launch " << launch;
    open = true;
    ASSERT_OK(eventSynchronize(event));
    ASSERT_OK(streamSynchronize(other_));
    EXPECT_TRUE(after.load());
  }
  ASSERT_OK(eventDestroy(event));
}

TEST_F(CaptureTest, ACallbackRunsOncePerLaunch) {
  std::atomic<int> calls{0};
  ASSERT_OK(captureBegin(stream_, CaptureMode::kGlobal));
  ASSERT_OK(launchCallback(stream_, [&] { ++calls; }, CallbackMode::kBlocking));
  ASSERT_OK(launchCallback(stream_, [&] { ++calls; }, CallbackMode::kNonBlocking));
  ASSERT_OK(captureEnd(stream_, &model_));
  ModelDescription d;
  ASSERT_OK(modelDescribe(model_, &d));
  ASSERT_EQ(d.tasks.size(), 2u);
  EXPECT_EQ(d.tasks[0].kind, "callback");
  for (int i = 0; i < 3; ++i) ASSERT_OK(modelLaunch(model_, stream_));
  ASSERT_OK(streamSynchronize(stream_));
  ASSERT_OK(synchronizeDevice());
  for (int i = 0; i < 100 && calls.load() < 6; ++i) {  // the non-blocking ones run aside
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(calls.load(), 6);
}

TEST_F(CaptureTest, WhatACaptureRefuses) {
  ASSERT_OK(captureBegin(stream_, CaptureMode::kGlobal));
  EXPECT_TRUE(captureActive());
  EXPECT_EQ(captureBegin(stream_, CaptureMode::kGlobal).code(), ErrorCode::kCaptured);
  EXPECT_EQ(synchronizeDevice().code(), ErrorCode::kCaptured);
  Model* inner = nullptr;
  ASSERT_OK(captureModel(stream_, &inner));
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(modelDestroy(inner).code(), ErrorCode::kInvalidUsage);
  EXPECT_EQ(captureEnd(other_, &model_).code(), ErrorCode::kInvalidUsage);
  ASSERT_OK(captureEnd(stream_, &model_));
  EXPECT_FALSE(captureActive());
  EXPECT_EQ(model_, inner);
  // A model cannot be launched into another capture.
  ASSERT_OK(captureBegin(other_, CaptureMode::kRelaxed));
  EXPECT_EQ(modelLaunch(model_, other_).code(), ErrorCode::kCaptured);
  Model* empty = nullptr;
  ASSERT_OK(captureEnd(other_, &empty));
  ASSERT_OK(modelDestroy(empty));
  EXPECT_EQ(modelLaunch(empty, stream_).code(), ErrorCode::kInvalidHandle);
  CaptureMode bad = static_cast<CaptureMode>(9);
  EXPECT_EQ(captureExchangeMode(&bad).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace cohort::runtime
