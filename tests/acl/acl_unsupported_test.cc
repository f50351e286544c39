// The families Cohort does not implement answer ACL_ERROR_RT_FEATURE_NOT_SUPPORT
// whatever their arguments, name themselves in the error message, and set the last
// error; so do the float overflow status and the kernel limits.
#include <string>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclUnsupportedTest = AclTest;

#define EXPECT_NOT_SUPPORTED(call, name)                                                \
  do {                                                                                  \
    EXPECT_ACL_ERROR(call, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, name " is not supported"); \
  } while (0)

// AscendC kernels built for the CPU load and launch (tests/ascendc); the device's own
// binaries and the SIMT kernels do not.
TEST_F(AclUnsupportedTest, DeviceBinariesCannotBeLoadedOrLaunched) {
  aclrtBinary binary = nullptr;
  aclrtBinHandle bin = nullptr;
  aclrtFuncHandle func = nullptr;
  EXPECT_NOT_SUPPORTED(aclrtBinaryLoad(binary, &bin), "aclrtBinaryLoad");
  EXPECT_EQ(bin, nullptr);
  EXPECT_NOT_SUPPORTED(aclrtLaunchSIMTKernelWithArgsArray(nullptr, dim3(4), dim3(32, 2), 0, nullptr,
                                                          nullptr, nullptr),
                       "aclrtLaunchSIMTKernelWithArgsArray");
  EXPECT_NOT_SUPPORTED(aclrtGetFuncBySymbol(nullptr, &func), "aclrtGetFuncBySymbol");
  EXPECT_NOT_SUPPORTED(aclrtGetHardwareSyncAddr(nullptr), "aclrtGetHardwareSyncAddr");
  EXPECT_NOT_SUPPORTED(aclrtGetArgsFromExceptionInfo(nullptr, nullptr, nullptr),
                       "aclrtGetArgsFromExceptionInfo");
  EXPECT_EQ(aclrtCreateBinary("x", 1), nullptr);
  EXPECT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  const char* message = aclGetRecentErrMsg();
  ASSERT_NE(message, nullptr);
  EXPECT_NE(std::string(message).find("aclrtCreateBinary is not supported"), std::string::npos);
}

TEST_F(AclUnsupportedTest, UpdatedModelsDumpAndSnapshots) {
  aclmdlRI model = nullptr;
  EXPECT_NOT_SUPPORTED(aclmdlRIUpdate(model), "aclmdlRIUpdate");
  EXPECT_NOT_SUPPORTED(aclmdlRITaskDisable(nullptr), "aclmdlRITaskDisable");
  EXPECT_NOT_SUPPORTED(aclrtCacheLastTaskOpInfo("info", 4), "aclrtCacheLastTaskOpInfo");
  EXPECT_NOT_SUPPORTED(aclmdlInitDump(), "aclmdlInitDump");
  EXPECT_NOT_SUPPORTED(aclmdlSetDump("/tmp/dump.json"), "aclmdlSetDump");
  EXPECT_NOT_SUPPORTED(aclrtSnapShotProcessLock(1, nullptr), "aclrtSnapShotProcessLock");
  EXPECT_NOT_SUPPORTED(aclrtSnapShotCallbackRegister(ACL_RT_SNAPSHOT_LOCK_PRE, nullptr, nullptr),
                       "aclrtSnapShotCallbackRegister");
}

TEST_F(AclUnsupportedTest, OverflowStatusAndKernelLimits) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_NOT_SUPPORTED(aclrtGetOverflowStatus(dev, 64, nullptr), "aclrtGetOverflowStatus");
  EXPECT_NOT_SUPPORTED(aclrtResetOverflowStatus(nullptr), "aclrtResetOverflowStatus");
  EXPECT_NOT_SUPPORTED(aclrtNpuGetFloatOverFlowStatus(dev, 64, 0, nullptr),
                       "aclrtNpuGetFloatOverFlowStatus");
  EXPECT_NOT_SUPPORTED(aclrtCtxGetFloatOverflowAddr(&dev), "aclrtCtxGetFloatOverflowAddr");
  size_t size = 0;
  EXPECT_NOT_SUPPORTED(aclrtDeviceSetLimit(ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE, 32768),
                       "aclrtDeviceSetLimit");
  EXPECT_NOT_SUPPORTED(aclrtDeviceGetLimit(ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, &size),
                       "aclrtDeviceGetLimit");
  ASSERT_ACL_OK(aclrtFree(dev));
}

TEST(AclUnsupportedNoInit, AnswerEvenBeforeAclInit) {
  EXPECT_EQ(aclrtBinaryLoad(nullptr, nullptr), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  EXPECT_EQ(aclmdlRIAbort(nullptr), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  aclGetRecentErrMsg();
}

}  // namespace
}  // namespace cohort::acltest
