// Runtime configuration: system parameters, resource limits, the op timeouts, the
// compute groups and a context's default stream.
#include <chrono>
#include <limits>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclConfigTest = AclTest;

TEST_F(AclConfigTest, DefaultStreamOfTheCurrentContext) {
  aclrtStream stream = nullptr;
  EXPECT_ACL_ERROR(aclrtCtxGetCurrentDefaultStream(&stream), ACL_ERROR_RT_CONTEXT_NULL,
                   "no current device");
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtCtxGetCurrentDefaultStream(&stream));
  ASSERT_NE(stream, nullptr);
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, 256, 7, 256, stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  char host[256] = {};
  ASSERT_ACL_OK(aclrtMemcpy(host, 256, dev, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(host[255], 7);
  runtime::StreamDescription description;
  ASSERT_OK(runtime::streamDescribe(static_cast<runtime::Stream*>(stream), &description));
  EXPECT_TRUE(description.isDefault);
  EXPECT_EQ(description.device, 1);
  EXPECT_NE(aclrtDestroyStream(stream), ACL_SUCCESS);  // a default stream stays
  aclGetRecentErrMsg();
  EXPECT_ACL_ERROR(aclrtCtxGetCurrentDefaultStream(nullptr), ACL_ERROR_INVALID_PARAM,
                   "stream is null");
}

TEST_F(AclConfigTest, SystemParametersOfContextsAndTheProcess) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  int64_t value = -1;
  EXPECT_ACL_ERROR(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value), ACL_ERROR_INVALID_PARAM,
                   "never set on the current context");
  ASSERT_ACL_OK(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 2));
  ASSERT_ACL_OK(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
  EXPECT_EQ(value, 2);
  // Another context has its own; the default context keeps its value.
  aclrtContext other = nullptr;
  ASSERT_ACL_OK(aclrtCreateContext(&other, 0));
  EXPECT_EQ(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value), ACL_ERROR_INVALID_PARAM);
  ASSERT_ACL_OK(aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, 1));
  ASSERT_ACL_OK(aclrtDestroyContext(other));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  ASSERT_ACL_OK(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value));
  EXPECT_EQ(value, 2);
  EXPECT_EQ(aclrtCtxGetSysParamOpt(ACL_OPT_ENABLE_DEBUG_KERNEL, &value), ACL_ERROR_INVALID_PARAM);
  // Released with the device: a fresh default context has none.
  ASSERT_ACL_OK(aclrtResetDeviceForce(0));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_EQ(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &value), ACL_ERROR_INVALID_PARAM);
  aclGetRecentErrMsg();

  EXPECT_ACL_ERROR(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 4), ACL_ERROR_INVALID_PARAM,
                   "value 4 for option 0 is out of range [0, 3]");
  EXPECT_ACL_ERROR(aclrtCtxSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 2),
                   ACL_ERROR_INVALID_PARAM, "out of range [0, 1]");
  EXPECT_ACL_ERROR(aclrtCtxSetSysParamOpt(static_cast<aclSysParamOpt>(9), 0),
                   ACL_ERROR_INVALID_PARAM, "opt 9 is not an aclSysParamOpt");
  EXPECT_ACL_ERROR(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, nullptr), ACL_ERROR_INVALID_PARAM,
                   "value is null");

  // Process-wide ones read 0 until set.
  ASSERT_ACL_OK(aclrtGetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, &value));
  EXPECT_EQ(value, 0);
  ASSERT_ACL_OK(aclrtSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 1));
  ASSERT_ACL_OK(aclrtGetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, &value));
  EXPECT_EQ(value, 1);
  ASSERT_ACL_OK(aclrtSetSysParamOpt(ACL_OPT_ENABLE_KERNEL_EARLY_START, 0));
  EXPECT_ACL_ERROR(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, -1), ACL_ERROR_INVALID_PARAM,
                   "out of range");
}

TEST_F(AclConfigTest, ResourceLimitsTakeTheirPrecedence) {
  uint32_t value = 0;
  ASSERT_ACL_OK(aclrtGetDeviceResLimit(2, ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 20u);
  ASSERT_ACL_OK(aclrtGetDeviceResLimit(2, ACL_RT_DEV_RES_VECTOR_CORE, &value));
  EXPECT_EQ(value, 40u);
  ASSERT_ACL_OK(aclrtSetDeviceResLimit(2, ACL_RT_DEV_RES_CUBE_CORE, 10));
  ASSERT_ACL_OK(aclrtSetDeviceResLimit(2, ACL_RT_DEV_RES_VECTOR_CORE, 30));
  ASSERT_ACL_OK(aclrtGetDeviceResLimit(2, ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 10u);

  ASSERT_ACL_OK(aclrtSetDevice(2));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtGetStreamResLimit(stream, ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 10u);  // the device's
  ASSERT_ACL_OK(aclrtSetStreamResLimit(stream, ACL_RT_DEV_RES_CUBE_CORE, 5));
  ASSERT_ACL_OK(aclrtGetStreamResLimit(stream, ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 5u);
  ASSERT_ACL_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 10u);  // the thread does not use the stream's yet
  ASSERT_ACL_OK(aclrtUseStreamResInCurrentThread(stream));
  ASSERT_ACL_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 5u);
  ASSERT_ACL_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &value));
  EXPECT_EQ(value, 30u);  // not set on the stream: the device's
  // On another device the stream's limits do not apply.
  ASSERT_ACL_OK(aclrtSetDevice(3));
  ASSERT_ACL_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 20u);
  ASSERT_ACL_OK(aclrtSetDevice(2));
  ASSERT_ACL_OK(aclrtUnuseStreamResInCurrentThread(stream));
  EXPECT_ACL_ERROR(aclrtUnuseStreamResInCurrentThread(stream), ACL_ERROR_INVALID_PARAM,
                   "does not use the limits of that stream");
  ASSERT_ACL_OK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 10u);

  ASSERT_ACL_OK(aclrtResetStreamResLimit(stream));
  ASSERT_ACL_OK(aclrtGetStreamResLimit(stream, ACL_RT_DEV_RES_CUBE_CORE, &value));
  EXPECT_EQ(value, 10u);
  ASSERT_ACL_OK(aclrtResetDeviceResLimit(2));
  ASSERT_ACL_OK(aclrtGetStreamResLimit(nullptr, ACL_RT_DEV_RES_VECTOR_CORE, &value));
  EXPECT_EQ(value, 40u);

  EXPECT_ACL_ERROR(aclrtSetDeviceResLimit(2, ACL_RT_DEV_RES_CUBE_CORE, 21), ACL_ERROR_INVALID_PARAM,
                   "the device has 20 cube cores");
  EXPECT_ACL_ERROR(aclrtSetStreamResLimit(stream, ACL_RT_DEV_RES_VECTOR_CORE, 0),
                   ACL_ERROR_INVALID_PARAM, "value 0 is out of range");
  EXPECT_ACL_ERROR(aclrtGetDeviceResLimit(2, static_cast<aclrtDevResLimitType>(2), &value),
                   ACL_ERROR_INVALID_PARAM, "not an aclrtDevResLimitType");
  EXPECT_ACL_ERROR(aclrtSetDeviceResLimit(4, ACL_RT_DEV_RES_CUBE_CORE, 1),
                   ACL_ERROR_RT_INVALID_DEVICEID, "does not exist");
  EXPECT_ACL_ERROR(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, nullptr),
                   ACL_ERROR_INVALID_PARAM, "value is null");
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  EXPECT_ACL_ERROR(aclrtGetStreamResLimit(stream, ACL_RT_DEV_RES_CUBE_CORE, &value),
                   ACL_ERROR_RT_INVALID_HANDLE, "not a live stream");
}

class AclTimeoutTest : public AclTest {
 protected:
  void TearDown() override {
    runtime::setTaskWaitTimeout(-1);
    runtime::setEventWaitTimeout(-1);
    AclTest::TearDown();
  }
};

TEST_F(AclTimeoutTest, OpTimeoutsSetAndRead) {
  uint32_t ms = 0;
  ASSERT_ACL_OK(aclrtGetOpExecuteTimeout(&ms));
  EXPECT_EQ(ms, 1000u);  // COHORT_EXEC_TIMEOUT=1 here
  ASSERT_ACL_OK(aclrtSetOpExecuteTimeOutWithMs(250));
  ASSERT_ACL_OK(aclrtGetOpExecuteTimeout(&ms));
  EXPECT_EQ(ms, 250u);
  ASSERT_ACL_OK(aclrtSetOpExecuteTimeOut(3));
  ASSERT_ACL_OK(aclrtGetOpExecuteTimeout(&ms));
  EXPECT_EQ(ms, 3000u);
  ASSERT_ACL_OK(aclrtSetOpExecuteTimeOut(0));  // the maximum: never
  ASSERT_ACL_OK(aclrtGetOpExecuteTimeout(&ms));
  EXPECT_EQ(ms, std::numeric_limits<uint32_t>::max());
  uint64_t actual = 0;
  ASSERT_ACL_OK(aclrtSetOpExecuteTimeOutV2(1500, &actual));
  EXPECT_EQ(actual, 2000u);  // whole milliseconds
  ASSERT_ACL_OK(aclrtGetOpExecuteTimeout(&ms));
  EXPECT_EQ(ms, 2u);
  ASSERT_ACL_OK(aclrtSetOpExecuteTimeOutV2(0, &actual));
  EXPECT_EQ(actual, std::numeric_limits<uint64_t>::max());
  uint64_t interval = 0;
  ASSERT_ACL_OK(aclrtGetOpTimeOutInterval(&interval));
  EXPECT_EQ(interval, 1000u);
  EXPECT_ACL_ERROR(aclrtSetOpExecuteTimeOutV2(1, nullptr), ACL_ERROR_INVALID_PARAM,
                   "actualTimeout is null");
  EXPECT_ACL_ERROR(aclrtGetOpExecuteTimeout(nullptr), ACL_ERROR_INVALID_PARAM, "timeoutMs is null");
  EXPECT_ACL_ERROR(aclrtGetOpTimeOutInterval(nullptr), ACL_ERROR_INVALID_PARAM, "interval is null");
}

// How long synchronizing a stream takes whose event wait can never be satisfied.
long waitTimeoutMs(aclError* result) {
  Gate gate;
  aclrtStream held = nullptr, waiting = nullptr;
  aclrtEvent event = nullptr;
  EXPECT_EQ(aclrtCreateStream(&held), ACL_SUCCESS);
  EXPECT_EQ(aclrtCreateStream(&waiting), ACL_SUCCESS);
  EXPECT_EQ(aclrtCreateEvent(&event), ACL_SUCCESS);
  gate.hold(held);
  EXPECT_EQ(aclrtRecordEvent(event, held), ACL_SUCCESS);
  EXPECT_EQ(aclrtStreamWaitEvent(waiting, event), ACL_SUCCESS);
  const auto start = std::chrono::steady_clock::now();
  *result = aclrtSynchronizeStream(waiting);
  const long took = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - start)
                                          .count());
  gate.open();
  EXPECT_EQ(aclrtSynchronizeStream(held), ACL_SUCCESS);
  aclrtDestroyStream(waiting);
  aclrtDestroyStream(held);
  aclrtDestroyEvent(event);
  aclGetRecentErrMsg();
  return took;
}

TEST_F(AclTimeoutTest, TimeoutsBoundEventWaits) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclError result = ACL_SUCCESS;
  // The op execute timeout stands in for COHORT_EXEC_TIMEOUT (1 s here) ...
  ASSERT_ACL_OK(aclrtSetOpExecuteTimeOutWithMs(150));
  long took = waitTimeoutMs(&result);
  EXPECT_EQ(result, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  EXPECT_GE(took, 140);
  EXPECT_LT(took, 900);
  // ... and the op wait timeout, once set, bounds event waits in its place.
  ASSERT_ACL_OK(aclrtSetOpWaitTimeout(2));
  took = waitTimeoutMs(&result);
  EXPECT_EQ(result, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  EXPECT_GE(took, 1900);
}

TEST_F(AclConfigTest, OneComputeGroupPerDevice) {
  EXPECT_EQ(aclrtCreateGroupInfo(), nullptr);  // no current device
  EXPECT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_CONTEXT_NULL);
  aclGetRecentErrMsg();
  ASSERT_ACL_OK(aclrtSetDevice(3));
  uint32_t count = 0;
  ASSERT_ACL_OK(aclrtGetGroupCount(&count));
  EXPECT_EQ(count, 1u);
  aclrtGroupInfo* info = aclrtCreateGroupInfo();
  ASSERT_NE(info, nullptr);
  ASSERT_ACL_OK(aclrtGetAllGroupInfo(info));
  int32_t value = -1;
  size_t size = 0;
  ASSERT_ACL_OK(
      aclrtGetGroupInfoDetail(info, 0, ACL_GROUP_AICORE_INT, &value, sizeof value, &size));
  EXPECT_EQ(value, 20);
  EXPECT_EQ(size, sizeof(int32_t));
  ASSERT_ACL_OK(aclrtGetGroupInfoDetail(info, 0, ACL_GROUP_AIV_INT, &value, sizeof value, &size));
  EXPECT_EQ(value, 40);
  ASSERT_ACL_OK(aclrtGetGroupInfoDetail(info, 0, ACL_GROUP_AIC_INT, &value, sizeof value, &size));
  EXPECT_EQ(value, 6);
  ASSERT_ACL_OK(aclrtGetGroupInfoDetail(info, 0, ACL_GROUP_ASQNUM_INT, &value, 8, &size));
  EXPECT_EQ(value, 32);
  ASSERT_ACL_OK(
      aclrtGetGroupInfoDetail(info, 0, ACL_GROUP_GROUPID_INT, &value, sizeof value, &size));
  EXPECT_EQ(value, 0);
  ASSERT_ACL_OK(aclrtSetGroup(value));
  EXPECT_ACL_ERROR(aclrtSetGroup(1), ACL_ERROR_INVALID_PARAM, "group 1 does not exist");
  EXPECT_ACL_ERROR(aclrtGetGroupInfoDetail(info, 1, ACL_GROUP_AIV_INT, &value, 4, &size),
                   ACL_ERROR_INVALID_PARAM, "groupIndex 1 is out of range");
  EXPECT_ACL_ERROR(
      aclrtGetGroupInfoDetail(info, 0, static_cast<aclrtGroupAttr>(6), &value, 4, &size),
      ACL_ERROR_INVALID_PARAM, "attr 6 is not an aclrtGroupAttr");
  EXPECT_ACL_ERROR(aclrtGetGroupInfoDetail(info, 0, ACL_GROUP_AIV_INT, &value, 2, &size),
                   ACL_ERROR_INVALID_PARAM, "valueLen 2 is less than");
  EXPECT_ACL_ERROR(aclrtGetGroupInfoDetail(info, 0, ACL_GROUP_AIV_INT, nullptr, 4, &size),
                   ACL_ERROR_INVALID_PARAM, "attrValue is null");
  ASSERT_ACL_OK(aclrtDestroyGroupInfo(info));
  EXPECT_ACL_ERROR(aclrtDestroyGroupInfo(info), ACL_ERROR_INVALID_PARAM,
                   "was not made by aclrtCreateGroupInfo");
  EXPECT_ACL_ERROR(aclrtGetAllGroupInfo(nullptr), ACL_ERROR_INVALID_PARAM, "groupInfo is null");
  EXPECT_ACL_ERROR(aclrtGetGroupCount(nullptr), ACL_ERROR_INVALID_PARAM, "count is null");
}

}  // namespace
}  // namespace cohort::acltest
