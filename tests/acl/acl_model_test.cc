// Captured models (aclmdlRICapture*, aclmdlRIExecute*): what a capture records runs
// only when the model is launched, once per launch, with the data in memory at that
// time; the capture modes refuse unsafe calls where CANN documents it; joined
// streams; and the errors of each call.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "acl_test_util.h"
#include "cohort/runtime_capture.h"

namespace cohort::acltest {
namespace {

constexpr std::size_t kCount = 1001;  // odd, not a multiple of any vector width
constexpr std::size_t kBytes = kCount * sizeof(float);

// Queues on `stream` a kernel that writes out[i] = in[i] * 2 + 1.
void launchTwicePlusOne(aclrtStream stream, const void* in, void* out) {
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream), [in, out](runtime::Stream*) {
    const auto* x = static_cast<const float*>(in);
    auto* y = static_cast<float*>(out);
    for (std::size_t i = 0; i < kCount; ++i) y[i] = x[i] * 2.0f + 1.0f;
    return Status::Ok();
  }));
}

class AclModelTest : public AclDevice0StreamTest {
 protected:
  void SetUp() override {
    AclDevice0StreamTest::SetUp();
    ASSERT_ACL_OK(aclrtMallocHost(&hostIn_, kBytes));
    ASSERT_ACL_OK(aclrtMallocHost(&hostOut_, kBytes));
    ASSERT_ACL_OK(aclrtMalloc(&devIn_, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_ACL_OK(aclrtMalloc(&devOut_, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    fillIn(0.0f);
    for (std::size_t i = 0; i < kCount; ++i) out()[i] = -1.0f;
  }
  void TearDown() override {
    if (model_ != nullptr) {
      EXPECT_EQ(aclmdlRIDestroy(model_), ACL_SUCCESS);
    }
    EXPECT_EQ(aclrtFree(devIn_), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(devOut_), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(hostIn_), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(hostOut_), ACL_SUCCESS);
    AclDevice0StreamTest::TearDown();
  }

  float* in() { return static_cast<float*>(hostIn_); }
  float* out() { return static_cast<float*>(hostOut_); }
  void fillIn(float base) {
    for (std::size_t i = 0; i < kCount; ++i) in()[i] = base + static_cast<float>(i % 97);
  }
  // Whether out holds in * 2 + 1 for every element (the first wrong one is reported).
  ::testing::AssertionResult outMatchesIn() {
    for (std::size_t i = 0; i < kCount; ++i) {
      const float want = in()[i] * 2.0f + 1.0f;
      if (out()[i] != want) {
        return ::testing::AssertionFailure() << "element " << i << ": " << out()[i] << ", want "
                                             << want;
      }
    }
    return ::testing::AssertionSuccess();
  }
  // Captures host in -> device -> kernel -> host out on `stream`.
  void captureStep(aclrtStream stream) {
    ASSERT_ACL_OK(aclrtMemcpyAsync(devIn_, kBytes, hostIn_, kBytes, ACL_MEMCPY_HOST_TO_DEVICE,
                                   stream));
    launchTwicePlusOne(stream, devIn_, devOut_);
    ASSERT_ACL_OK(aclrtMemcpyAsync(hostOut_, kBytes, devOut_, kBytes, ACL_MEMCPY_DEVICE_TO_HOST,
                                   stream));
  }

  void* hostIn_ = nullptr;
  void* hostOut_ = nullptr;
  void* devIn_ = nullptr;
  void* devOut_ = nullptr;
  aclmdlRI model_ = nullptr;
};

TEST_F(AclModelTest, CapturedWorkRunsAtEachLaunchWithTheDataOfThatTime) {
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  aclmdlRI during = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &during));
  EXPECT_EQ(status, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  EXPECT_NE(during, nullptr);
  captureStep(stream_);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  ASSERT_NE(model_, nullptr);
  EXPECT_EQ(model_, during) << "the handle GetInfo gave during the capture is the model";
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &during));
  EXPECT_EQ(status, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  EXPECT_EQ(during, nullptr);

  // Nothing of the capture ran.
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(out()[0], -1.0f);
  EXPECT_EQ(out()[kCount - 1], -1.0f);

  for (int launch = 0; launch < 3; ++launch) {
    fillIn(100.0f * static_cast<float>(launch));
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(outMatchesIn()) << "launch " << launch;
  }
  // The synchronous execute runs it too, on a stream of its own.
  fillIn(7.0f);
  ASSERT_ACL_OK(aclmdlRIExecute(model_, -1));
  EXPECT_TRUE(outMatchesIn());
  uint32_t id = 0;
  ASSERT_ACL_OK(aclmdlRIGetId(model_, &id));
  EXPECT_GT(id, 0u);
}

TEST_F(AclModelTest, LaunchesQueueBehindEachOtherAndNeverWait) {
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  captureStep(stream_);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  // A gate holds the stream: the launches are queued behind it and return at once.
  Gate gate;
  gate.hold(stream_);
  fillIn(3.0f);
  for (int i = 0; i < 5; ++i) ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
  aclrtStreamStatus queued = ACL_STREAM_STATUS_COMPLETE;
  ASSERT_ACL_OK(aclrtStreamQuery(stream_, &queued));
  EXPECT_EQ(queued, ACL_STREAM_STATUS_NOT_READY);
  EXPECT_EQ(out()[0], -1.0f);
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_TRUE(outMatchesIn());
}

TEST_F(AclModelTest, ReplaysOnAnotherStreamAndOutlivesItsDestroy) {
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  captureStep(stream_);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  aclrtStream other = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&other));
  Gate gate;
  gate.hold(other);
  fillIn(11.0f);
  ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, other));
  // Destroyed while its launch waits behind the gate: the launch still runs whole.
  ASSERT_ACL_OK(aclmdlRIDestroy(model_));
  model_ = nullptr;
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(other));
  EXPECT_TRUE(outMatchesIn());
  ASSERT_ACL_OK(aclrtDestroyStream(other));
}

TEST_F(AclModelTest, SynchronizingACapturingStreamBreaksTheCapture) {
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  captureStep(stream_);
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream_), ACL_ERROR_RT_STREAM_CAPTURED,
                   "was synchronized while it captured");
  aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  aclmdlRI during = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &during));
  EXPECT_EQ(status, ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED);
  aclmdlRI model = reinterpret_cast<aclmdlRI>(0x1);
  EXPECT_ACL_ERROR(aclmdlRICaptureEnd(stream_, &model), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                   "broke");
  EXPECT_EQ(model, nullptr);
  // The stream works again, and nothing of the broken capture ran.
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(out()[0], -1.0f);
  EXPECT_EQ(aclmdlRIExecuteAsync(during, stream_), ACL_ERROR_RT_INVALID_HANDLE);
}

TEST_F(AclModelTest, GlobalModeRefusesUnsafeCallsInEveryThreadUntilRelaxed) {
  std::vector<float> host(kCount, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_ACL_ERROR(aclrtMemcpy(devIn_, kBytes, host.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "global mode");
  aclError fromOther = ACL_SUCCESS;
  std::thread([&] {
    aclrtSetDevice(0);
    fromOther = aclrtMemset(devIn_, kBytes, 0, kBytes);
  }).join();
  EXPECT_EQ(fromOther, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
  ASSERT_ACL_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  EXPECT_EQ(mode, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) << "the thread's mode before";
  ASSERT_ACL_OK(aclrtMemcpy(devIn_, kBytes, host.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  EXPECT_EQ(mode, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
  EXPECT_EQ(aclrtMemset(devIn_, kBytes, 0, kBytes), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  ASSERT_ACL_OK(aclrtMemset(devIn_, kBytes, 0, kBytes));  // no capture: allowed again
}

TEST_F(AclModelTest, ThreadLocalModeRefusesOnlyTheCapturingThread) {
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
  EXPECT_EQ(aclrtMemset(devIn_, kBytes, 0, kBytes), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  aclError fromOther = ACL_ERROR_INTERNAL_ERROR;
  std::thread([&] {
    aclrtSetDevice(0);
    fromOther = aclrtMemset(devIn_, kBytes, 0, kBytes);
  }).join();
  EXPECT_EQ(fromOther, ACL_SUCCESS);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
}

TEST_F(AclModelTest, EachCallNamesItsMisuse) {
  aclmdlRI model = nullptr;
  EXPECT_ACL_ERROR(aclmdlRICaptureEnd(stream_, &model), ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                   "does not capture");
  EXPECT_ACL_ERROR(aclmdlRICaptureBegin(stream_, static_cast<aclmdlRICaptureMode>(7)),
                   ACL_ERROR_INVALID_PARAM, "not a capture mode");
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_ACL_ERROR(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
                   ACL_ERROR_RT_STREAM_CAPTURED, "captures already");
  aclmdlRICaptureStatus status;
  aclmdlRI during = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &during));
  EXPECT_ACL_ERROR(aclmdlRIExecuteAsync(during, stream_), ACL_ERROR_RT_MODEL_CAPTURED,
                   "still being captured");
  EXPECT_ACL_ERROR(aclmdlRIDestroy(during), ACL_ERROR_RT_MODEL_CAPTURED, "still being captured");
  aclError fromOther = ACL_SUCCESS;
  std::thread([&] {
    aclrtSetDevice(0);
    fromOther = aclmdlRICaptureEnd(stream_, &model);
  }).join();
  EXPECT_EQ(fromOther, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
  EXPECT_ACL_ERROR(aclmdlRICaptureEnd(stream_, nullptr), ACL_ERROR_INVALID_PARAM, "modelRI");
  EXPECT_ACL_ERROR(aclmdlRICaptureGetInfo(stream_, nullptr, &during), ACL_ERROR_INVALID_PARAM,
                   "status");
  EXPECT_ACL_ERROR(aclmdlRICaptureThreadExchangeMode(nullptr), ACL_ERROR_INVALID_PARAM, "mode");
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  EXPECT_ACL_ERROR(aclmdlRIExecuteAsync(nullptr, stream_), ACL_ERROR_INVALID_PARAM, "modelRI");
  ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));  // an empty model runs nothing
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_ACL_ERROR(aclmdlRIDestroy(reinterpret_cast<aclmdlRI>(0x10)), ACL_ERROR_RT_INVALID_HANDLE,
                   "not a live model");
}

TEST_F(AclModelTest, AStreamJoinedThroughAnEventRunsOnALaneOfItsOwn) {
  aclrtStream side = nullptr;
  aclrtEvent fork = nullptr, join = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&side));
  ASSERT_ACL_OK(aclrtCreateEvent(&fork));
  ASSERT_ACL_OK(aclrtCreateEvent(&join));
  void* devSide = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&devSide, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));

  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_ACL_OK(aclrtMemcpyAsync(devIn_, kBytes, hostIn_, kBytes, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream_));
  ASSERT_ACL_OK(aclrtRecordEvent(fork, stream_));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(side, fork));  // side joins the capture
  aclmdlRICaptureStatus status;
  aclmdlRI during = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(side, &status, &during));
  EXPECT_EQ(status, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  launchTwicePlusOne(side, devIn_, devSide);
  ASSERT_ACL_OK(aclrtRecordEvent(join, side));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(stream_, join));  // and is joined back
  ASSERT_ACL_OK(aclrtMemcpyAsync(hostOut_, kBytes, devSide, kBytes, ACL_MEMCPY_DEVICE_TO_HOST,
                                 stream_));
  EXPECT_ACL_ERROR(aclmdlRICaptureEnd(side, &model_), ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
                   "end it on the stream that began it");
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(side, &status, &during));
  EXPECT_EQ(status, ACL_MODEL_RI_CAPTURE_STATUS_NONE) << "the joined stream left the capture";
  EXPECT_EQ(out()[0], -1.0f);

  for (int launch = 0; launch < 3; ++launch) {
    fillIn(10.0f * static_cast<float>(launch));
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(outMatchesIn()) << "launch " << launch;
  }
  // A name, read back whole or refused for a buffer too small, and printed.
  char name[16] = "x";
  ASSERT_ACL_OK(aclmdlRIGetName(model_, sizeof(name), name));
  EXPECT_STREQ(name, "");
  ASSERT_ACL_OK(aclmdlRISetName(model_, "first"));
  ASSERT_ACL_OK(aclmdlRISetName(model_, "decode step"));
  ASSERT_ACL_OK(aclmdlRIGetName(model_, sizeof(name), name));
  EXPECT_STREQ(name, "decode step");
  EXPECT_ACL_ERROR(aclmdlRIGetName(model_, 11, name), ACL_ERROR_INVALID_PARAM,
                   "maxLen 11 cannot hold the name");
  EXPECT_ACL_ERROR(aclmdlRISetName(model_, nullptr), ACL_ERROR_INVALID_PARAM, "name is null");
  const std::string path = ::testing::TempDir() + "/model.json";
  ASSERT_ACL_OK(aclmdlRIDebugJsonPrint(model_, path.c_str(), 0));
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(doc["streams"], 2);
  EXPECT_EQ(doc["name"], "decode step");
  std::vector<std::string> kinds;
  for (const auto& t : doc["tasks"]) kinds.push_back(t["type"].get<std::string>());
  EXPECT_EQ(kinds, (std::vector<std::string>{"copy", "event record", "event wait", "kernel",
                                             "event record", "event wait", "copy"}));
  std::remove(path.c_str());

  ASSERT_ACL_OK(aclrtFree(devSide));
  ASSERT_ACL_OK(aclrtDestroyEvent(fork));
  ASSERT_ACL_OK(aclrtDestroyEvent(join));
  ASSERT_ACL_OK(aclrtDestroyStream(side));
}

TEST_F(AclModelTest, AJoinedStreamNotJoinedBackFailsTheCaptureAndLeavesIt) {
  aclrtStream side = nullptr;
  aclrtEvent fork = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&side));
  ASSERT_ACL_OK(aclrtCreateEvent(&fork));
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_ACL_OK(aclrtRecordEvent(fork, stream_));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(side, fork));
  ASSERT_ACL_OK(aclrtMemsetAsync(devIn_, kBytes, 0, kBytes, side));
  aclmdlRI model = nullptr;
  EXPECT_ACL_ERROR(aclmdlRICaptureEnd(stream_, &model), ACL_ERROR_RT_STREAM_UNJOINED,
                   "not joined back");
  EXPECT_EQ(model, nullptr);
  // Both streams run their work again.
  ASSERT_ACL_OK(aclrtMemcpy(devIn_, kBytes, hostIn_, kBytes, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemsetAsync(devIn_, kBytes, 0, kBytes, side));
  ASSERT_ACL_OK(aclrtSynchronizeStream(side));
  ASSERT_ACL_OK(aclrtMemcpy(hostOut_, kBytes, devIn_, kBytes, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(out()[kCount - 1], 0.0f);
  ASSERT_ACL_OK(aclrtDestroyEvent(fork));
  ASSERT_ACL_OK(aclrtDestroyStream(side));
}

// EXTERNAL events connect a model to the streams outside it: the model waits for the
// latest record made outside before each launch, and a stream outside waits for the
// record a launch makes (and, waiting during the capture, does not join it).
TEST_F(AclModelTest, ExternalEventsOrderAModelWithTheStreamsOutsideIt) {
  aclrtStream outside = nullptr;
  aclrtEvent in = nullptr, out = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&outside));
  ASSERT_ACL_OK(aclrtCreateEventExWithFlag(&in, ACL_EVENT_SYNC));
  ASSERT_ACL_OK(aclrtCreateEventExWithFlag(&out, ACL_EVENT_SYNC));
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_ACL_OK(aclrtStreamWaitEventWithFlag(stream_, in, 0, ACL_EVENT_WAIT_EXTERNAL));
  launchTwicePlusOne(stream_, devIn_, devOut_);
  ASSERT_ACL_OK(aclrtRecordEventWithFlag(out, stream_, ACL_EVENT_RECORD_EXTERNAL));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(outside, out));  // before any launch: no join, no wait
  aclmdlRICaptureStatus status;
  aclmdlRI during = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(outside, &status, &during));
  EXPECT_EQ(status, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));

  for (int launch = 0; launch < 2; ++launch) {
    fillIn(static_cast<float>(launch) * 50.0f);
    // The outside stream fills the input; the model's wait holds its kernel until then.
    Gate gate;
    gate.hold(outside);
    ASSERT_ACL_OK(aclrtMemcpyAsync(devIn_, kBytes, hostIn_, kBytes, ACL_MEMCPY_HOST_TO_DEVICE,
                                   outside));
    ASSERT_ACL_OK(aclrtRecordEvent(in, outside));
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    // The outside stream reads the output after the launch's record.
    ASSERT_ACL_OK(aclrtStreamWaitEvent(outside, out));
    ASSERT_ACL_OK(aclrtMemcpyAsync(hostOut_, kBytes, devOut_, kBytes, ACL_MEMCPY_DEVICE_TO_HOST,
                                   outside));
    gate.open();
    ASSERT_ACL_OK(aclrtSynchronizeStream(outside));
    EXPECT_TRUE(outMatchesIn()) << "launch " << launch;
  }
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  ASSERT_ACL_OK(aclrtDestroyEvent(in));
  ASSERT_ACL_OK(aclrtDestroyEvent(out));
  ASSERT_ACL_OK(aclrtDestroyStream(outside));
}

TEST_F(AclModelTest, DestroyingTheCapturingStreamEndsTheCapture) {
  aclrtStream doomed = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&doomed));
  ASSERT_ACL_OK(aclmdlRICaptureBegin(doomed, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureStatus status;
  aclmdlRI model = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(doomed, &status, &model));
  ASSERT_ACL_OK(aclrtMemsetAsync(devIn_, kBytes, 0, kBytes, doomed));
  ASSERT_ACL_OK(aclrtDestroyStream(doomed));
  // No capture is left: unsafe calls are allowed, and the model can only be freed.
  ASSERT_ACL_OK(aclrtMemset(devIn_, kBytes, 1, kBytes));
  EXPECT_ACL_ERROR(aclmdlRIExecuteAsync(model, stream_), ACL_ERROR_RT_MODEL_CAPTURED,
                   "never completed");
  ASSERT_ACL_OK(aclmdlRIDestroy(model));
}

}  // namespace
}  // namespace cohort::acltest
