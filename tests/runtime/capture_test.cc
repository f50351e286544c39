// Stream capture in the C++ runtime: a launch hands each kernel the stream it runs
// on, an event recorded in a model is recorded anew by every launch, a callback runs
// once per launch, and what a capture may not do.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "cohort/runtime_capture.h"
#include "common/error.h"
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
// A task recorded by a layer above (captureRecordIssuer) is asked at every launch
// what to run: its kernel runs at its place, between the tasks around it; an event
// it records on a stream outside the model and waits for orders that stream too.
TEST_F(CaptureTest, AnIssuerAddsItsWorkAtItsPlaceAtEveryLaunch) {
  std::vector<int> order;  // written by stream_'s worker only, read after synchronizing
  std::atomic<int> issued{0};
  Event* outside = nullptr;
  ASSERT_OK(eventCreate(&outside));
  ASSERT_OK(captureBegin(stream_, CaptureMode::kThreadLocal));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    order.push_back(1);
    return Status::Ok();
  }));
  ASSERT_OK(captureRecordIssuer(stream_, "test issuer", [&](LaunchContext& launch) {
    ++issued;
    if (launch.stream() == nullptr || launch.device() != 0) {
      return Status(ErrorCode::kInternal, "the launch's stream is not described");
    }
    // other_ (outside the model) is ordered before the kernel below through `outside`.
    COHORT_RETURN_IF_ERROR(launch.recordEvent(outside, other_));
    COHORT_RETURN_IF_ERROR(launch.waitEvent(outside));
    launch.run([&order, on = launch.stream()](Stream* s) {  // the context dies with the call
      order.push_back(s == on ? 2 : -2);
      return Status::Ok();
    });
    return Status::Ok();
  }));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    order.push_back(3);
    return Status::Ok();
  }));
  ASSERT_OK(captureEnd(stream_, &model_));
  EXPECT_EQ(issued.load(), 0);
  ModelDescription d;
  ASSERT_OK(modelDescribe(model_, &d));
  ASSERT_EQ(d.tasks.size(), 3u);
  EXPECT_EQ(d.tasks[1].kind, "test issuer");
  // other_ is busy until `gate` opens: the issuer's kernel must wait for it.
  std::atomic<bool> gate{false};
  ASSERT_OK(launchKernel(other_, [&](Stream*) {
    while (!gate.load()) std::this_thread::yield();
    return Status::Ok();
  }));
  ASSERT_OK(modelLaunch(model_, stream_));
  EXPECT_EQ(issued.load(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(streamQuery(stream_).code(), ErrorCode::kNotReady);
  gate = true;
  ASSERT_OK(modelLaunch(model_, stream_));
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_EQ(issued.load(), 2);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 1, 2, 3}));
  EXPECT_OK(eventDestroy(outside));
}

// An issuer's error ends the launch with that error; what came before it still runs,
// what comes after it does not.
TEST_F(CaptureTest, AnIssuersErrorIsTheLaunchsAndStopsItThere) {
  std::atomic<int> before{0}, after{0};
  bool fail = false;
  ASSERT_OK(captureBegin(stream_, CaptureMode::kThreadLocal));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    ++before;
    return Status::Ok();
  }));
  ASSERT_OK(captureRecordIssuer(stream_, "refuser", [&](LaunchContext&) {
    return fail ? Status(ErrorCode::kAborted, "the issuer's communicator was aborted")
                : Status::Ok();
  }));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    ++after;
    return Status::Ok();
  }));
  ASSERT_OK(captureEnd(stream_, &model_));
  ASSERT_OK(modelLaunch(model_, stream_));
  fail = true;
  const Status st = modelLaunch(model_, stream_);
  EXPECT_EQ(st.code(), ErrorCode::kAborted) << st.toString();
  EXPECT_NE(st.message().find("aborted"), std::string::npos) << st.toString();
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_EQ(before.load(), 2);
  EXPECT_EQ(after.load(), 1);
  // Not on a stream that does not capture.
  EXPECT_EQ(captureRecordIssuer(stream_, "x", [](LaunchContext&) { return Status::Ok(); }).code(),
            ErrorCode::kInvalidUsage);
}

// A kernel of a model that fails fails its stream, as a task would; the lane that
// waits on an event recorded after it gets the error instead of waiting forever, and
// the kernels behind the failure do not run. The model's own lane stream does not
// keep the error: the next launch, on a sound stream, runs whole.
TEST_F(CaptureTest, AFailedKernelInAModelFailsItsLanesAndSkipsTheRest) {
  Event *fork = nullptr, *join = nullptr;
  ASSERT_OK(eventCreate(&fork));
  ASSERT_OK(eventCreate(&join));
  std::atomic<int> sideRuns{0}, afterFailure{0};
  std::atomic<bool> fail{true};
  ASSERT_OK(captureBegin(stream_, CaptureMode::kThreadLocal));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    return fail.load() ? Status(ErrorCode::kTaskFailed, "the kernel found a bad value")
                       : Status::Ok();
  }));
  ASSERT_OK(eventRecord(fork, stream_));
  ASSERT_OK(streamWaitEvent(other_, fork));  // other_ joins: a lane of the model
  ASSERT_OK(launchKernel(other_, [&](Stream*) {
    ++sideRuns;
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(join, other_));
  ASSERT_OK(streamWaitEvent(stream_, join));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    ++afterFailure;
    return Status::Ok();
  }));
  ASSERT_OK(captureEnd(stream_, &model_));
  ASSERT_OK(modelLaunch(model_, stream_));
  const Status st = streamSynchronize(stream_);
  EXPECT_NE(st.message().find("bad value"), std::string::npos) << st.toString();
  EXPECT_EQ(afterFailure.load(), 0);
  EXPECT_EQ(sideRuns.load(), 0);  // its wait got the error from the failed lane
  fail = false;
  Stream* fresh = nullptr;
  ASSERT_OK(streamCreate(&fresh));
  ASSERT_OK(modelLaunch(model_, fresh));
  EXPECT_OK(streamSynchronize(fresh));
  // The first launch's side lane may not have run its wait before the second launch
  // recorded the event anew (an event keeps its latest record's state, as CANN's):
  // then it ran its kernel too.
  EXPECT_GE(sideRuns.load(), 1);
  EXPECT_LE(sideRuns.load(), 2);
  EXPECT_EQ(afterFailure.load(), 1);
  EXPECT_OK(streamDestroy(fresh));
  EXPECT_OK(eventDestroy(fork));
  EXPECT_OK(eventDestroy(join));
}

// An abort drops the launches queued on the stream as it drops tasks: none of their
// kernels runs, and the stream runs later launches again.
TEST_F(CaptureTest, AnAbortDropsQueuedLaunches) {
  std::atomic<int> runs{0};
  std::atomic<bool> gate{false};
  ASSERT_OK(captureBegin(stream_, CaptureMode::kThreadLocal));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    ++runs;
    return Status::Ok();
  }));
  ASSERT_OK(captureEnd(stream_, &model_));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    while (!gate.load()) std::this_thread::yield();
    return Status::Ok();
  }));
  ASSERT_OK(modelLaunch(model_, stream_));
  ASSERT_OK(modelLaunch(model_, stream_));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate = true;
  });
  const Status aborted = streamAbort(stream_);
  opener.join();
  ASSERT_OK(aborted);
  EXPECT_EQ(runs.load(), 0);
  ASSERT_OK(modelLaunch(model_, stream_));
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_EQ(runs.load(), 1);
}

// A model destroyed while another thread launches it: each launch either queues the
// whole model or says the model is gone; what was queued runs (ASan and TSan check
// that nothing is used after it is freed).
TEST_F(CaptureTest, ADestroyWhileAnotherThreadLaunchesIsSafe) {
  std::atomic<int> runs{0};
  Event *fork = nullptr, *join = nullptr;
  ASSERT_OK(eventCreate(&fork));
  ASSERT_OK(eventCreate(&join));
  ASSERT_OK(captureBegin(stream_, CaptureMode::kRelaxed));
  ASSERT_OK(eventRecord(fork, stream_));
  ASSERT_OK(streamWaitEvent(other_, fork));  // a lane of the model's own
  ASSERT_OK(launchKernel(other_, [&](Stream*) {
    ++runs;
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(join, other_));
  ASSERT_OK(streamWaitEvent(stream_, join));
  Model* model = nullptr;
  ASSERT_OK(captureEnd(stream_, &model));
  std::atomic<int> queued{0};
  std::atomic<bool> gone{false};
  std::thread launcher([&] {
    (void)setDevice(0);
    for (int i = 0; i < 2000 && !gone.load(); ++i) {
      const Status st = modelLaunch(model, stream_);
      if (st.ok()) {
        ++queued;
      } else {
        EXPECT_EQ(st.code(), ErrorCode::kInvalidHandle) << st.toString();
        gone = true;
      }
    }
  });
  while (queued.load() < 20) std::this_thread::yield();
  ASSERT_OK(modelDestroy(model));
  launcher.join();
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_EQ(runs.load(), queued.load());
  EXPECT_EQ(modelDestroy(model).code(), ErrorCode::kInvalidHandle);
  EXPECT_OK(eventDestroy(fork));
  EXPECT_OK(eventDestroy(join));
}

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
