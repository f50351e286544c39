// Stream capture in the C++ runtime: a launch hands each kernel the stream it runs
// on, an event recorded in a model is recorded anew by every launch, a callback runs
// once per launch, and what a capture may not do.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cohort/runtime_capture.h"
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

// A model with a joined lane launches that lane on a stream of its own; after a
// teardown of the device that stream is gone, and the next launch makes another
// (never taking a new stream of the program's, maybe at the same address, for it).
TEST(CaptureResetTest, ALaneStreamIsMadeAgainAfterTheDeviceIsTornDown) {
  ASSERT_OK(setDevice(0));
  Stream* main = nullptr;
  Stream* side = nullptr;
  Event* fork = nullptr;
  Event* join = nullptr;
  ASSERT_OK(streamCreate(&main));
  ASSERT_OK(streamCreate(&side));
  ASSERT_OK(eventCreate(&fork));
  ASSERT_OK(eventCreate(&join));
  std::atomic<int> sideRuns{0};
  std::atomic<Stream*> laneRanOn{nullptr};
  ASSERT_OK(captureBegin(main, CaptureMode::kGlobal));
  ASSERT_OK(eventRecord(fork, main));
  ASSERT_OK(streamWaitEvent(side, fork));
  ASSERT_OK(launchKernel(side, [&](Stream* s) {
    laneRanOn = s;
    ++sideRuns;
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(join, side));
  ASSERT_OK(streamWaitEvent(main, join));
  Model* model = nullptr;
  ASSERT_OK(captureEnd(main, &model));
  ModelDescription d;
  ASSERT_OK(modelDescribe(model, &d));
  EXPECT_EQ(d.lanes, 2);
  ASSERT_OK(modelLaunch(model, main));
  ASSERT_OK(streamSynchronize(main));
  EXPECT_EQ(sideRuns.load(), 1);
  EXPECT_NE(laneRanOn.load(), side) << "a launch runs the lane on the model's own stream";
  EXPECT_NE(laneRanOn.load(), main);

  ASSERT_OK(streamDestroy(main));
  ASSERT_OK(streamDestroy(side));
  ASSERT_OK(resetDeviceForce(0));  // tears down the model's lane stream too
  ASSERT_OK(setDevice(0));
  Stream* again = nullptr;
  ASSERT_OK(streamCreate(&again));
  ASSERT_OK(modelLaunch(model, again));
  ASSERT_OK(streamSynchronize(again));
  EXPECT_EQ(sideRuns.load(), 2);
  EXPECT_NE(laneRanOn.load(), again);
  ASSERT_OK(modelDestroy(model));
  ASSERT_OK(streamSynchronize(again));  // the program's stream outlives the model
  ASSERT_OK(streamDestroy(again));
  ASSERT_OK(eventDestroy(fork));
  ASSERT_OK(eventDestroy(join));
  ASSERT_OK(resetDevice(0));
}

}  // namespace
}  // namespace cohort::runtime
