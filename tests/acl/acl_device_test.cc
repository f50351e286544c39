// Devices and contexts.
#include <thread>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclDeviceTest = AclTest;

TEST_F(AclDeviceTest, CountSetGetReset) {
  uint32_t count = 0;
  ASSERT_ACL_OK(aclrtGetDeviceCount(&count));
  EXPECT_EQ(count, 4u);  // COHORT_DEVICE_COUNT=4
  ASSERT_ACL_OK(aclrtSetDevice(3));
  int32_t device = -1;
  ASSERT_ACL_OK(aclrtGetDevice(&device));
  EXPECT_EQ(device, 3);
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtGetDevice(&device));
  EXPECT_EQ(device, 1);
  EXPECT_EQ(referenceCount(3), 1);
  ASSERT_ACL_OK(aclrtResetDevice(3));
  EXPECT_EQ(referenceCount(3), 0);
  ASSERT_ACL_OK(aclrtResetDevice(1));
  EXPECT_ACL_ERROR(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL, "no current device");
}

TEST_F(AclDeviceTest, InvalidDeviceIds) {
  EXPECT_ACL_ERROR(aclrtSetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID,
                   "device 4 does not exist: 4 device(s) visible (ids 0..3");
  EXPECT_ACL_ERROR(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, "device -1 does not exist");
  EXPECT_ACL_ERROR(aclrtResetDevice(9), ACL_ERROR_RT_INVALID_DEVICEID, "device 9 does not exist");
  EXPECT_ACL_ERROR(aclrtResetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID,
                   "aclrtResetDevice(2): the device is not set");
  aclrtContext context = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateContext(&context, 5), ACL_ERROR_RT_INVALID_DEVICEID,
                   "device 5 does not exist");
}

TEST_F(AclDeviceTest, NullOutputsAreInvalidParameters) {
  EXPECT_ACL_ERROR(aclrtGetDevice(nullptr), ACL_ERROR_INVALID_PARAM, "deviceId is null");
  EXPECT_ACL_ERROR(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM, "count is null");
  EXPECT_ACL_ERROR(aclrtCreateContext(nullptr, 0), ACL_ERROR_INVALID_PARAM, "context is null");
  EXPECT_ACL_ERROR(aclrtDestroyContext(nullptr), ACL_ERROR_INVALID_PARAM, "context is null");
  EXPECT_ACL_ERROR(aclrtSetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM, "context is null");
  EXPECT_ACL_ERROR(aclrtGetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM, "context is null");
}

TEST_F(AclDeviceTest, WithoutADeviceTheContextIsNull) {
  EXPECT_ACL_ERROR(aclrtSynchronizeDevice(), ACL_ERROR_RT_CONTEXT_NULL,
                   "aclrtSynchronizeDevice: no current device on this thread");
  aclrtContext context = nullptr;
  EXPECT_ACL_ERROR(aclrtGetCurrentContext(&context), ACL_ERROR_RT_CONTEXT_NULL,
                   "call aclrtSetDevice");
}

TEST_F(AclDeviceTest, SynchronizeDeviceWaitsForEveryStream) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  Gate gate;
  gate.hold(stream);
  EXPECT_ACL_ERROR(aclrtSynchronizeDeviceWithTimeout(20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                   "timed out");
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeDevice());
  ASSERT_ACL_OK(aclrtSynchronizeDeviceWithTimeout(1000));
  EXPECT_ACL_ERROR(aclrtSynchronizeDeviceWithTimeout(-2), ACL_ERROR_INVALID_PARAM,
                   "timeout -2 ms is invalid");
}

TEST_F(AclDeviceTest, DefaultContextFollowsSetDevice) {
  ASSERT_ACL_OK(aclrtSetDevice(2));
  aclrtContext first = nullptr, again = nullptr;
  ASSERT_ACL_OK(aclrtGetCurrentContext(&first));
  ASSERT_NE(first, nullptr);
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtSetCurrentContext(first));  // back to device 2
  int32_t device = -1;
  ASSERT_ACL_OK(aclrtGetDevice(&device));
  EXPECT_EQ(device, 2);
  ASSERT_ACL_OK(aclrtGetCurrentContext(&again));
  EXPECT_EQ(again, first);
  EXPECT_ACL_ERROR(aclrtDestroyContext(first), ACL_ERROR_RT_INVALID_HANDLE,
                   "is the default context of device 2; aclrtResetDevice releases it");
  ASSERT_ACL_OK(aclrtResetDevice(2));
  EXPECT_ACL_ERROR(aclrtSetCurrentContext(first), ACL_ERROR_RT_INVALID_HANDLE,
                   "its device was reset");
}

TEST_F(AclDeviceTest, ExplicitContextHoldsItsDevice) {
  aclrtContext context = nullptr;
  ASSERT_ACL_OK(aclrtCreateContext(&context, 1));
  EXPECT_EQ(referenceCount(1), 1);
  int32_t device = -1;
  ASSERT_ACL_OK(aclrtGetDevice(&device));
  EXPECT_EQ(device, 1);
  aclrtContext current = nullptr;
  ASSERT_ACL_OK(aclrtGetCurrentContext(&current));
  EXPECT_EQ(current, context);
  ASSERT_ACL_OK(aclrtDestroyContext(context));
  EXPECT_EQ(referenceCount(1), 0);
  EXPECT_ACL_ERROR(aclrtDestroyContext(context), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live context");
  EXPECT_ACL_ERROR(aclrtSetCurrentContext(context), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live context");
}

TEST_F(AclDeviceTest, ContextMovesToAnotherThread) {
  aclrtContext context = nullptr;
  ASSERT_ACL_OK(aclrtCreateContext(&context, 3));
  void* p = nullptr;
  std::thread([&] {
    int32_t device = -1;
    EXPECT_EQ(aclrtGetDevice(&device), ACL_ERROR_RT_CONTEXT_NULL);  // a new thread has none
    ASSERT_ACL_OK(aclrtSetCurrentContext(context));
    ASSERT_ACL_OK(aclrtGetDevice(&device));
    EXPECT_EQ(device, 3);
    ASSERT_ACL_OK(aclrtMalloc(&p, 128, ACL_MEM_MALLOC_HUGE_FIRST));
  }).join();
  runtime::PointerAttributes attributes;
  ASSERT_OK(runtime::pointerGetAttributes(p, &attributes));
  EXPECT_EQ(attributes.device, 3);
  EXPECT_EQ(referenceCount(3), 1);  // setting a context takes no reference
  ASSERT_ACL_OK(aclrtFree(p));
  ASSERT_ACL_OK(aclrtDestroyContext(context));
}

}  // namespace
}  // namespace cohort::acltest
