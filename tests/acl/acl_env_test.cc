// The Ascend environment variables, honoured through Cohort's configuration:
// this binary runs with COHORT_DEVICE_COUNT=4, ASCEND_RT_VISIBLE_DEVICES=3,1,
// ASCEND_GLOBAL_LOG_LEVEL=1 (info) and ASCEND_SLOG_PRINT_TO_STDOUT=1.
#include <string>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclEnvTest = AclTest;

TEST_F(AclEnvTest, VisibleDevicesSelectAndRenumber) {
  uint32_t count = 0;
  ASSERT_ACL_OK(aclrtGetDeviceCount(&count));
  EXPECT_EQ(count, 2u);
  runtime::DeviceInfo info;
  ASSERT_OK(runtime::getDeviceInfo(0, &info));
  EXPECT_EQ(info.physicalId, 3);
  ASSERT_OK(runtime::getDeviceInfo(1, &info));
  EXPECT_EQ(info.physicalId, 1);
  ASSERT_ACL_OK(aclrtSetDevice(1));
  EXPECT_ACL_ERROR(aclrtSetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID,
                   "device 2 does not exist: 2 device(s) visible");
}

TEST_F(AclEnvTest, InfoLinesGoToStdout) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(aclrtSetDevice(5), ACL_ERROR_RT_INVALID_DEVICEID);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("aclrtSetDevice: 107001 (ACL_ERROR_RT_INVALID_DEVICEID)"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace cohort::acltest
