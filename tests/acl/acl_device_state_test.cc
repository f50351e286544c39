// Device state: the forced reset, the device-state callbacks, the device-wide task
// abort with its callbacks, and the default context's state.
#include <sys/types.h>

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclDeviceStateTest = AclTest;

std::mutex gSeenMu;
std::vector<std::pair<int32_t, aclrtDeviceState>> gSeen;

void recordState(int32_t device, aclrtDeviceState state, void* args) {
  std::lock_guard<std::mutex> lock(gSeenMu);
  gSeen.emplace_back(device, state);
  ++*static_cast<int*>(args);
}

std::vector<std::pair<int32_t, aclrtDeviceState>> takeSeen() {
  std::lock_guard<std::mutex> lock(gSeenMu);
  return std::move(gSeen);
}

TEST_F(AclDeviceStateTest, ResetDeviceForceReleasesEverything) {
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtSetDevice(1));  // three references
  aclrtContext context = nullptr;
  ASSERT_ACL_OK(aclrtCreateContext(&context, 1));  // and a context's
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
  size_t free = 0, total = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total));
  EXPECT_LT(free, total);

  ASSERT_ACL_OK(aclrtResetDeviceForce(1));
  runtime::DeviceInfo info;
  ASSERT_OK(runtime::getDeviceInfo(1, &info));
  EXPECT_EQ(info.referenceCount, 0);
  EXPECT_EQ(info.streamCount, 0);
  // The stream and the context went with the device; so did the thread's binding.
  EXPECT_ACL_ERROR(aclrtDestroyStream(stream), ACL_ERROR_RT_INVALID_HANDLE, "not a live stream");
  EXPECT_ACL_ERROR(aclrtDestroyContext(context), ACL_ERROR_RT_INVALID_HANDLE, "not a live context");
  int32_t current = -1;
  EXPECT_EQ(aclrtGetDevice(&current), ACL_ERROR_RT_CONTEXT_NULL);
  // Nothing is left to release.
  EXPECT_ACL_ERROR(aclrtResetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID, "the device is not set");
  EXPECT_ACL_ERROR(aclrtResetDeviceForce(1), ACL_ERROR_RT_INVALID_DEVICEID,
                   "the device is not set");

  // The next aclrtSetDevice brings up a fresh device: all memory free, one reference.
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total));
  EXPECT_EQ(free, total);
  ASSERT_OK(runtime::getDeviceInfo(1, &info));
  EXPECT_EQ(info.referenceCount, 1);
  EXPECT_EQ(info.streamCount, 1);  // its default stream
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtResetDeviceForce(1));
}

TEST_F(AclDeviceStateTest, ResetDeviceForceAfterPairedResets) {
  // Mixing the two resets: the force reset may follow aclrtResetDevice, not the
  // other way round.
  ASSERT_ACL_OK(aclrtSetDevice(2));
  ASSERT_ACL_OK(aclrtSetDevice(2));
  ASSERT_ACL_OK(aclrtResetDevice(2));
  ASSERT_ACL_OK(aclrtResetDeviceForce(2));
  EXPECT_EQ(aclrtResetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_ACL_ERROR(aclrtResetDeviceForce(9), ACL_ERROR_RT_INVALID_DEVICEID, "does not exist");
}

TEST_F(AclDeviceStateTest, StateCallbacksHearSetsAndResets) {
  int calls = 0;
  ASSERT_ACL_OK(aclrtRegDeviceStateCallback("test", recordState, &calls));
  EXPECT_ACL_ERROR(aclrtRegDeviceStateCallback("test", recordState, &calls),
                   ACL_ERROR_INVALID_PARAM, "already registered as 'test'");
  EXPECT_ACL_ERROR(aclrtRegDeviceStateCallback("", recordState, &calls), ACL_ERROR_INVALID_PARAM,
                   "regName is null or empty");
  takeSeen();
  ASSERT_ACL_OK(aclrtSetDevice(3));
  ASSERT_ACL_OK(aclrtResetDevice(3));
  EXPECT_EQ(aclrtSetDevice(8), ACL_ERROR_RT_INVALID_DEVICEID);  // not a device: not told
  ASSERT_ACL_OK(aclrtSetDevice(3));
  ASSERT_ACL_OK(aclrtResetDeviceForce(3));
  EXPECT_EQ(aclrtResetDevice(3), ACL_ERROR_RT_INVALID_DEVICEID);  // PRE only: it failed
  const std::vector<std::pair<int32_t, aclrtDeviceState>> expected = {
      {3, ACL_RT_DEVICE_STATE_SET_PRE},   {3, ACL_RT_DEVICE_STATE_SET_POST},
      {3, ACL_RT_DEVICE_STATE_RESET_PRE}, {3, ACL_RT_DEVICE_STATE_RESET_POST},
      {3, ACL_RT_DEVICE_STATE_SET_PRE},   {3, ACL_RT_DEVICE_STATE_SET_POST},
      {3, ACL_RT_DEVICE_STATE_RESET_PRE}, {3, ACL_RT_DEVICE_STATE_RESET_POST},
      {3, ACL_RT_DEVICE_STATE_RESET_PRE}};
  EXPECT_EQ(takeSeen(), expected);
  EXPECT_EQ(calls, 9);

  ASSERT_ACL_OK(aclrtRegDeviceStateCallback("test", nullptr, nullptr));  // removed
  EXPECT_ACL_ERROR(aclrtRegDeviceStateCallback("test", nullptr, nullptr), ACL_ERROR_INVALID_PARAM,
                   "no callback is registered as 'test'");
  ASSERT_ACL_OK(aclrtSetDevice(3));
  ASSERT_ACL_OK(aclrtResetDevice(3));
  EXPECT_TRUE(takeSeen().empty());
}

TEST_F(AclDeviceStateTest, PrimaryContextIsActiveWhileTheDeviceIsSet) {
  int32_t active = -1;
  uint32_t flags = 7;
  ASSERT_ACL_OK(aclrtGetPrimaryCtxState(0, &flags, &active));
  EXPECT_EQ(active, 0);
  EXPECT_EQ(flags, 0u);
  ASSERT_ACL_OK(aclrtSetDevice(0));
  ASSERT_ACL_OK(aclrtGetPrimaryCtxState(0, nullptr, &active));
  EXPECT_EQ(active, 1);
  ASSERT_ACL_OK(aclrtResetDevice(0));
  ASSERT_ACL_OK(aclrtGetPrimaryCtxState(0, nullptr, &active));
  EXPECT_EQ(active, 0);
  EXPECT_ACL_ERROR(aclrtGetPrimaryCtxState(0, nullptr, nullptr), ACL_ERROR_INVALID_PARAM,
                   "active is null");
  EXPECT_ACL_ERROR(aclrtGetPrimaryCtxState(5, nullptr, &active), ACL_ERROR_RT_INVALID_DEVICEID,
                   "does not exist");
}

struct AbortRecord {
  std::vector<aclrtDeviceTaskAbortStage> stages;
  std::vector<uint32_t> timeouts;
};

int32_t recordAbort(int32_t device, aclrtDeviceTaskAbortStage stage, uint32_t timeout, void* args) {
  auto* record = static_cast<AbortRecord*>(args);
  record->stages.push_back(stage);
  record->timeouts.push_back(timeout + 1000 * static_cast<uint32_t>(device));
  return 0;
}

TEST_F(AclDeviceStateTest, DeviceTaskAbortDropsQueuedWork) {
  static AbortRecord record;  // outlives the test, whatever happens in it
  record = AbortRecord();
  ASSERT_ACL_OK(aclrtSetDeviceTaskAbortCallback("abort", recordAbort, &record));
  EXPECT_ACL_ERROR(aclrtSetDeviceTaskAbortCallback(nullptr, recordAbort, &record),
                   ACL_ERROR_INVALID_PARAM, "regName is null");

  // Device 1's stream records `done` only when the gate opens; device 0's stream
  // waits for it, with a memset queued behind the wait.
  aclrtEvent done = nullptr;
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtCreateEvent(&done));
  aclrtStream held = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&held));
  Gate gate;
  gate.hold(held);
  ASSERT_ACL_OK(aclrtRecordEvent(done, held));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream waiting = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&waiting));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemset(dev, 4096, 0, 4096));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(waiting, done));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, 4096, 0x5a, 4096, waiting));

  ASSERT_ACL_OK(aclrtDeviceTaskAbort(0, 0));
  ASSERT_ACL_OK(aclrtSynchronizeStream(waiting));  // idle, no error
  char host[4096];
  ASSERT_ACL_OK(aclrtMemcpy(host, sizeof host, dev, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(host[0], 0);  // the memset was dropped
  EXPECT_EQ(host[4095], 0);
  // The stream runs new work again.
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, 4096, 0x5a, 4096, waiting));
  ASSERT_ACL_OK(aclrtSynchronizeStream(waiting));
  ASSERT_ACL_OK(aclrtMemcpy(host, sizeof host, dev, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(host[100], 0x5a);

  const std::vector<aclrtDeviceTaskAbortStage> stages = {ACL_RT_DEVICE_TASK_ABORT_PRE,
                                                         ACL_RT_DEVICE_TASK_ABORT_POST};
  EXPECT_EQ(record.stages, stages);
  EXPECT_EQ(record.timeouts, (std::vector<uint32_t>{0, 0}));

  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(held));
  EXPECT_ACL_ERROR(aclrtDeviceTaskAbort(0, 36u * 60u * 1000u + 1), ACL_ERROR_RT_PARAM_INVALID,
                   "more than 36 minutes");
  EXPECT_ACL_ERROR(aclrtDeviceTaskAbort(6, 0), ACL_ERROR_RT_INVALID_DEVICEID, "does not exist");
  ASSERT_ACL_OK(aclrtDeviceTaskAbort(2, 100));  // a device not set: nothing to stop
  ASSERT_ACL_OK(aclrtSetDeviceTaskAbortCallback("abort", nullptr, nullptr));
  ASSERT_ACL_OK(aclrtFree(dev));
  ASSERT_ACL_OK(aclrtDestroyStream(waiting));
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtDestroyStream(held));
  ASSERT_ACL_OK(aclrtDestroyEvent(done));
}

}  // namespace
}  // namespace cohort::acltest
