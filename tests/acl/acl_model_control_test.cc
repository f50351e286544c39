// Control in captured models: ACL_EVENT_EXTERNAL events (a flag that records set and
// resets clear), task groups replaced after the capture (aclmdlRICaptureTaskGrp*,
// aclmdlRICaptureTaskUpdate*), and conditional tasks (aclmdlRICondHandle*,
// aclmdlRIAddCondTask, aclmdlRICaptureToModelRIBegin); each with its errors.
#include <vector>

#include "acl_test_util.h"
#include "cohort/runtime_capture.h"

namespace cohort::acltest {
namespace {

constexpr std::size_t kValues = 1001;  // odd, not a multiple of any vector width
constexpr std::size_t kValueBytes = kValues * sizeof(float);

runtime::Stream* rtStream(aclrtStream s) { return static_cast<runtime::Stream*>(s); }

class AclModelControlTest : public AclDevice0StreamTest {
 protected:
  void SetUp() override {
    AclDevice0StreamTest::SetUp();
    ASSERT_ACL_OK(aclrtMalloc(&dev_, kValueBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_ACL_OK(aclrtMemset(dev_, kValueBytes, 0, kValueBytes));
    ASSERT_ACL_OK(aclrtCreateStream(&other_));
  }
  void TearDown() override {
    if (model_ != nullptr) {
      EXPECT_EQ(aclmdlRIDestroy(model_), ACL_SUCCESS);
    }
    EXPECT_EQ(aclrtDestroyStream(other_), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(dev_), ACL_SUCCESS);
    AclDevice0StreamTest::TearDown();
  }

  float* data() { return static_cast<float*>(dev_); }
  // Queues a kernel that adds `value` to every element of the buffer.
  void add(aclrtStream stream, float value) {
    ASSERT_OK(runtime::launchKernel(rtStream(stream), [p = data(), value](runtime::Stream*) {
      for (std::size_t i = 0; i < kValues; ++i) p[i] += value;
      return Status::Ok();
    }));
  }
  // Whether every element is `want` (the first wrong one is reported).
  ::testing::AssertionResult holds(float want) {
    std::vector<float> host(kValues);
    if (aclrtMemcpy(host.data(), kValueBytes, dev_, kValueBytes, ACL_MEMCPY_DEVICE_TO_HOST) !=
        ACL_SUCCESS) {
      return ::testing::AssertionFailure() << "cannot read the buffer";
    }
    for (std::size_t i = 0; i < kValues; ++i) {
      if (host[i] != want) {
        return ::testing::AssertionFailure()
               << "element " << i << ": " << host[i] << ", want " << want;
      }
    }
    return ::testing::AssertionSuccess();
  }
  void launchAndWait() {
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  }
  void setCond(uint64_t* cond, uint64_t value) {
    ASSERT_ACL_OK(
        aclrtMemcpy(cond, sizeof(value), &value, sizeof(value), ACL_MEMCPY_HOST_TO_DEVICE));
  }

  void* dev_ = nullptr;
  aclrtStream other_ = nullptr;
  aclmdlRI model_ = nullptr;
};

// ---- External events ---------------------------------------------------------------

TEST_F(AclModelControlTest, AnExternalEventWaitInAModelWaitsForARecordAfterItsReset) {
  aclrtEvent flag = nullptr;
  ASSERT_ACL_OK(aclrtCreateEventWithFlag(&flag, ACL_EVENT_EXTERNAL));
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(stream_, flag));
  ASSERT_ACL_OK(aclrtResetEvent(flag, stream_));
  add(stream_, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  for (int launch = 1; launch <= 3; ++launch) {
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    // Never recorded, or reset by the launch before: the launch waits for a record.
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(stream_, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
        << "launch " << launch;
    EXPECT_TRUE(holds(static_cast<float>(launch - 1)));
    ASSERT_ACL_OK(aclrtRecordEvent(flag, other_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    EXPECT_TRUE(holds(static_cast<float>(launch))) << "launch " << launch;
  }
  ASSERT_ACL_OK(aclrtDestroyEvent(flag));
}

TEST_F(AclModelControlTest, AStreamWaitsForAnExternalEventRecordedLaterAndSkipsNone) {
  aclrtEvent flag = nullptr;
  ASSERT_ACL_OK(aclrtCreateEventWithFlag(&flag, ACL_EVENT_EXTERNAL));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(stream_, flag));  // not recorded yet: still waits
  add(stream_, 2.0f);
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(stream_, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  EXPECT_TRUE(holds(0.0f));
  ASSERT_ACL_OK(aclrtRecordEvent(flag, other_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_TRUE(holds(2.0f));
  // Set, a wait passes at once; reset, it waits again.
  ASSERT_ACL_OK(aclrtStreamWaitEvent(stream_, flag));
  add(stream_, 2.0f);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_TRUE(holds(4.0f));
  ASSERT_ACL_OK(aclrtResetEvent(flag, stream_));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(stream_, flag));
  add(stream_, 2.0f);
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(stream_, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  ASSERT_ACL_OK(aclrtRecordEvent(flag, other_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_TRUE(holds(6.0f));
  ASSERT_ACL_OK(aclrtDestroyEvent(flag));

  aclrtEvent mixed = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateEventWithFlag(&mixed, ACL_EVENT_EXTERNAL | ACL_EVENT_SYNC),
                   ACL_ERROR_INVALID_PARAM, "cannot be combined");
}

// ---- Task groups -------------------------------------------------------------------

TEST_F(AclModelControlTest, AnUpdateReplacesTheGroupInTheUpdateStreamsOrder) {
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  add(stream_, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureTaskGrpBegin(stream_));
  add(stream_, 10.0f);
  add(stream_, 100.0f);
  aclrtTaskGrp group = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureTaskGrpEnd(stream_, &group));
  ASSERT_NE(group, nullptr);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  launchAndWait();
  EXPECT_TRUE(holds(111.0f));

  // Queued behind a closed gate, the update has not happened when the next launch runs.
  Gate gate;
  gate.hold(other_);
  ASSERT_ACL_OK(aclmdlRICaptureTaskUpdateBegin(other_, group));
  add(other_, 20.0f);
  add(other_, 200.0f);
  ASSERT_ACL_OK(aclmdlRICaptureTaskUpdateEnd(other_));
  EXPECT_TRUE(holds(111.0f));  // recorded, not run
  launchAndWait();
  EXPECT_TRUE(holds(222.0f));
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(other_));
  launchAndWait();
  EXPECT_TRUE(holds(443.0f));

  // An update with no task leaves the group as it is.
  ASSERT_ACL_OK(aclmdlRICaptureTaskUpdateBegin(other_, group));
  ASSERT_ACL_OK(aclmdlRICaptureTaskUpdateEnd(other_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(other_));
  launchAndWait();
  EXPECT_TRUE(holds(664.0f));
}

TEST_F(AclModelControlTest, EachTaskGroupCallNamesItsMisuse) {
  aclrtTaskGrp group = nullptr;
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskGrpBegin(stream_), ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                   "does not capture");
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskGrpEnd(stream_, nullptr), ACL_ERROR_INVALID_PARAM, "handle");
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskGrpEnd(stream_, &group), ACL_ERROR_INVALID_PARAM,
                   "no task group is open");
  ASSERT_ACL_OK(aclmdlRICaptureTaskGrpBegin(stream_));
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskGrpBegin(stream_), ACL_ERROR_INVALID_PARAM, "open already");
  add(stream_, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureTaskGrpEnd(stream_, &group));
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskUpdateBegin(stream_, group), ACL_ERROR_RT_STREAM_CAPTURED,
                   "captures");
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));

  // An update of another number of tasks, or of other kinds, changes nothing.
  ASSERT_ACL_OK(aclmdlRICaptureTaskUpdateBegin(other_, group));
  add(other_, 5.0f);
  add(other_, 5.0f);
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskUpdateEnd(other_), ACL_ERROR_INVALID_PARAM,
                   "the group of model");
  ASSERT_ACL_OK(aclmdlRICaptureTaskUpdateBegin(other_, group));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev_, kValueBytes, 0, kValueBytes, other_));
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskUpdateEnd(other_), ACL_ERROR_INVALID_PARAM, "(kernel)");
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskUpdateEnd(other_), ACL_ERROR_INVALID_PARAM,
                   "records no task group update");
  ASSERT_ACL_OK(aclrtSynchronizeStream(other_));
  launchAndWait();
  EXPECT_TRUE(holds(1.0f));

  // A group holds kernels, copies and sets only: an event record in it breaks the capture.
  aclrtStream s2 = nullptr;
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&s2));
  ASSERT_ACL_OK(aclrtCreateEvent(&event));
  ASSERT_ACL_OK(aclmdlRICaptureBegin(s2, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_ACL_OK(aclmdlRICaptureTaskGrpBegin(s2));
  ASSERT_ACL_OK(aclrtRecordEvent(event, s2));
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskGrpEnd(s2, &group), ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
                   "event record");
  aclmdlRI broken = nullptr;
  EXPECT_NE(aclmdlRICaptureEnd(s2, &broken), ACL_SUCCESS);
  EXPECT_EQ(broken, nullptr);
  ASSERT_ACL_OK(aclrtDestroyEvent(event));
  ASSERT_ACL_OK(aclrtDestroyStream(s2));

  // A group dies with its model.
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_ACL_OK(aclmdlRICaptureTaskGrpBegin(stream_));
  add(stream_, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureTaskGrpEnd(stream_, &group));
  aclmdlRI doomed = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &doomed));
  ASSERT_ACL_OK(aclmdlRIDestroy(doomed));
  EXPECT_ACL_ERROR(aclmdlRICaptureTaskUpdateBegin(other_, group), ACL_ERROR_RT_INVALID_HANDLE,
                   "not a live task group");
}

// ---- Conditional tasks -------------------------------------------------------------

class AclCondTest : public AclModelControlTest {
 protected:
  // A model whose only task is a conditional one of `type`; branch i adds 10^i.
  void capture(aclmdlRICondTaskType type, uint32_t branches, uint32_t initial = 0,
               aclmdlRICondHandleFlag flag = static_cast<aclmdlRICondHandleFlag>(0)) {
    ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    aclmdlRICaptureStatus status;
    ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &model_));
    aclmdlRICondHandle handle = nullptr;
    ASSERT_ACL_OK(aclmdlRICondHandleCreate(model_, initial, flag, &handle));
    ASSERT_ACL_OK(aclmdlRICondHandleGetCondPtr(handle, &cond_));
    ASSERT_NE(cond_, nullptr);
    std::vector<aclmdlRI> models(branches, nullptr);
    aclmdlRICondTaskParams params{};
    params.handle = handle;
    params.type = type;
    params.size = branches;
    params.modelRIArray = models.data();
    ASSERT_ACL_OK(aclmdlRIAddCondTask(params, stream_, 0));
    float step = 1.0f;
    for (aclmdlRI branch : models) {
      ASSERT_NE(branch, nullptr);
      ASSERT_ACL_OK(
          aclmdlRICaptureToModelRIBegin(other_, branch, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
      add(other_, step);
      aclmdlRI ended = nullptr;
      ASSERT_ACL_OK(aclmdlRICaptureEnd(other_, &ended));
      EXPECT_EQ(ended, branch);
      step *= 10.0f;
    }
    ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  }
  uint64_t* cond_ = nullptr;
};

TEST_F(AclCondTest, AnIfRunsItsFirstBranchOnNonZeroElseItsSecond) {
  capture(ACL_MODEL_RI_COND_TYPE_IF, 2);
  setCond(cond_, 7);
  launchAndWait();
  EXPECT_TRUE(holds(1.0f));
  setCond(cond_, 0);
  launchAndWait();
  EXPECT_TRUE(holds(11.0f));
}

TEST_F(AclCondTest, AnIfWithOneBranchRunsNothingOnZero) {
  capture(ACL_MODEL_RI_COND_TYPE_IF, 1);
  launchAndWait();  // the value starts at the handle's default, 0
  EXPECT_TRUE(holds(0.0f));
  setCond(cond_, 1);
  launchAndWait();
  EXPECT_TRUE(holds(1.0f));
}

TEST_F(AclCondTest, AssignDefaultSetsTheValueAtEachLaunch) {
  capture(ACL_MODEL_RI_COND_TYPE_IF, 2, 1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
  setCond(cond_, 0);  // overwritten by the launch
  launchAndWait();
  EXPECT_TRUE(holds(1.0f));
  setCond(cond_, 0);
  launchAndWait();
  EXPECT_TRUE(holds(2.0f));
}

TEST_F(AclCondTest, ASwitchRunsTheBranchItsValueNamesAndNoneBeyond) {
  capture(ACL_MODEL_RI_COND_TYPE_SWITCH, 3);
  float want = 0.0f;
  for (uint64_t value : {2u, 0u, 1u, 3u, 1000u, 1u}) {
    setCond(cond_, value);
    launchAndWait();
    if (value < 3) want += value == 0 ? 1.0f : value == 1 ? 10.0f : 100.0f;
    EXPECT_TRUE(holds(want)) << "value " << value;
  }
}

TEST_F(AclCondTest, AWhileRunsItsBranchUntilTheBranchClearsTheValue) {
  // The body adds 1 and counts the value down: the loop runs as many rounds as it says.
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureStatus status;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &model_));
  aclmdlRICondHandle handle = nullptr;
  ASSERT_ACL_OK(
      aclmdlRICondHandleCreate(model_, 0, static_cast<aclmdlRICondHandleFlag>(0), &handle));
  ASSERT_ACL_OK(aclmdlRICondHandleGetCondPtr(handle, &cond_));
  aclmdlRI body = nullptr;
  aclmdlRICondTaskParams params{handle, ACL_MODEL_RI_COND_TYPE_WHILE, 1, &body};
  ASSERT_ACL_OK(aclmdlRIAddCondTask(params, stream_, 0));
  add(stream_, 1000.0f);  // after the loop, in the parent
  ASSERT_ACL_OK(aclmdlRICaptureToModelRIBegin(other_, body, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  add(other_, 1.0f);
  ASSERT_OK(runtime::launchKernel(rtStream(other_), [c = cond_](runtime::Stream*) {
    *c -= 1;
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclmdlRICaptureEnd(other_, &body));
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  setCond(cond_, 5);
  launchAndWait();
  EXPECT_TRUE(holds(1005.0f));
  launchAndWait();  // the value is 0 now: no round
  EXPECT_TRUE(holds(2005.0f));
  setCond(cond_, 3);
  launchAndWait();
  EXPECT_TRUE(holds(3008.0f));
}

TEST_F(AclCondTest, ABranchMayForkAndJoinStreams) {
  aclrtStream side = nullptr;
  aclrtEvent fork = nullptr, join = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&side));
  ASSERT_ACL_OK(aclrtCreateEvent(&fork));
  ASSERT_ACL_OK(aclrtCreateEvent(&join));
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureStatus status;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &model_));
  aclmdlRICondHandle handle = nullptr;
  ASSERT_ACL_OK(
      aclmdlRICondHandleCreate(model_, 1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &handle));
  aclmdlRI branch = nullptr;
  aclmdlRICondTaskParams params{handle, ACL_MODEL_RI_COND_TYPE_IF, 1, &branch};
  ASSERT_ACL_OK(aclmdlRIAddCondTask(params, stream_, 0));
  add(stream_, 1000.0f);  // runs after the whole branch, its joined stream included
  ASSERT_ACL_OK(aclmdlRICaptureToModelRIBegin(other_, branch, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  add(other_, 1.0f);
  ASSERT_ACL_OK(aclrtRecordEvent(fork, other_));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(side, fork));
  ASSERT_OK(runtime::launchKernel(rtStream(side), [p = data()](runtime::Stream*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // late, if not waited for
    for (std::size_t i = 0; i < kValues; ++i) p[i] *= 3.0f;
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclrtRecordEvent(join, side));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(other_, join));
  ASSERT_ACL_OK(aclmdlRICaptureEnd(other_, &branch));
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model_));
  launchAndWait();
  EXPECT_TRUE(holds(1003.0f));  // (0 + 1) * 3 + 1000
  ASSERT_ACL_OK(aclrtDestroyEvent(fork));
  ASSERT_ACL_OK(aclrtDestroyEvent(join));
  ASSERT_ACL_OK(aclrtDestroyStream(side));
}

TEST_F(AclCondTest, EachConditionalCallNamesItsMisuse) {
  const auto noFlag = static_cast<aclmdlRICondHandleFlag>(0);
  aclmdlRICondHandle handle = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureStatus status;
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &model_));
  EXPECT_ACL_ERROR(
      aclmdlRICondHandleCreate(model_, 0, static_cast<aclmdlRICondHandleFlag>(2), &handle),
      ACL_ERROR_INVALID_PARAM, "flag 2");
  ASSERT_ACL_OK(aclmdlRICondHandleCreate(model_, 0, noFlag, &handle));
  aclmdlRI branches[3] = {};
  for (auto [type, size] :
       {std::pair{ACL_MODEL_RI_COND_TYPE_IF, 3u}, std::pair{ACL_MODEL_RI_COND_TYPE_WHILE, 2u},
        std::pair{ACL_MODEL_RI_COND_TYPE_SWITCH, 0u}}) {
    aclmdlRICondTaskParams params{handle, type, size, branches};
    EXPECT_ACL_ERROR(aclmdlRIAddCondTask(params, stream_, 0), ACL_ERROR_INVALID_PARAM,
                     "branch model(s)");
  }
  aclmdlRICondTaskParams params{handle, ACL_MODEL_RI_COND_TYPE_IF, 2, branches};
  EXPECT_ACL_ERROR(aclmdlRIAddCondTask(params, stream_, 1), ACL_ERROR_INVALID_PARAM, "reserved");
  EXPECT_ACL_ERROR(aclmdlRIAddCondTask(params, other_, 0), ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                   "does not capture");
  ASSERT_ACL_OK(aclmdlRIAddCondTask(params, stream_, 0));
  EXPECT_ACL_ERROR(aclmdlRIDestroy(branches[0]), ACL_ERROR_INVALID_PARAM,
                   "branch of a conditional task");
  EXPECT_ACL_ERROR(aclmdlRICaptureToModelRIBegin(other_, model_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
                   ACL_ERROR_INVALID_PARAM, "not a branch model");
  ASSERT_ACL_OK(
      aclmdlRICaptureToModelRIBegin(other_, branches[0], ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  add(other_, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(other_, &branches[0]));
  EXPECT_ACL_ERROR(
      aclmdlRICaptureToModelRIBegin(other_, branches[0], ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
      ACL_ERROR_INVALID_PARAM, "captured once");
  // Branch 1 was never captured: the parent's capture cannot end, and leaves no model.
  aclmdlRI ended = nullptr;
  EXPECT_ACL_ERROR(aclmdlRICaptureEnd(stream_, &ended), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                   "branch 1");
  EXPECT_EQ(ended, nullptr);
  model_ = nullptr;
  // Its handles and branches went with it.
  uint64_t* cond = nullptr;
  EXPECT_ACL_ERROR(aclmdlRICondHandleGetCondPtr(handle, &cond), ACL_ERROR_RT_INVALID_HANDLE,
                   "not a live condition handle");
  EXPECT_ACL_ERROR(
      aclmdlRICaptureToModelRIBegin(other_, branches[1], ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
      ACL_ERROR_RT_INVALID_HANDLE, "not a live model");

  // A handle of one model cannot choose in another's capture, nor be made after it.
  aclmdlRI first = nullptr, second = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &first));
  ASSERT_ACL_OK(aclmdlRICondHandleCreate(first, 0, noFlag, &handle));
  add(stream_, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &first));
  EXPECT_ACL_ERROR(aclmdlRICondHandleCreate(first, 0, noFlag, &handle), ACL_ERROR_RT_MODEL_CAPTURED,
                   "not being captured");
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_ACL_OK(aclmdlRICaptureGetInfo(stream_, &status, &second));
  params.handle = handle;
  EXPECT_ACL_ERROR(aclmdlRIAddCondTask(params, stream_, 0), ACL_ERROR_INVALID_PARAM,
                   "belongs to model");
  add(stream_, 1.0f);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &second));
  ASSERT_ACL_OK(aclmdlRIDestroy(first));
  ASSERT_ACL_OK(aclmdlRIDestroy(second));
}

}  // namespace
}  // namespace cohort::acltest
