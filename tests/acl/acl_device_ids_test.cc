// Device id mappings under ASCEND_RT_VISIBLE_DEVICES: this binary runs with
// COHORT_DEVICE_COUNT=4 and ASCEND_RT_VISIBLE_DEVICES=3,1, so user ids 0 and 1 are
// the node's (logical and physical) devices 3 and 1, and devices 0 and 2 are hidden.
#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclDeviceIdsTest = AclTest;

TEST_F(AclDeviceIdsTest, UserIdsIndexTheVisibleList) {
  int32_t id = -1;
  ASSERT_ACL_OK(aclrtGetLogicDevIdByUserDevId(0, &id));
  EXPECT_EQ(id, 3);
  ASSERT_ACL_OK(aclrtGetLogicDevIdByUserDevId(1, &id));
  EXPECT_EQ(id, 1);
  ASSERT_ACL_OK(aclrtGetPhyDevIdByUserDevId(0, &id));
  EXPECT_EQ(id, 3);
  ASSERT_ACL_OK(aclrtGetUserDevIdByLogicDevId(3, &id));
  EXPECT_EQ(id, 0);
  ASSERT_ACL_OK(aclrtGetUserDevIdByPhyDevId(1, &id));
  EXPECT_EQ(id, 1);
  // Outside containers the physical id is the logical one, visible or not.
  ASSERT_ACL_OK(aclrtGetLogicDevIdByPhyDevId(2, &id));
  EXPECT_EQ(id, 2);
  ASSERT_ACL_OK(aclrtGetPhyDevIdByLogicDevId(0, &id));
  EXPECT_EQ(id, 0);
  // The PCI address follows the node id too.
  char bus[16];
  ASSERT_ACL_OK(aclrtDeviceGetPCIBusId(0, bus, sizeof bus));
  EXPECT_STREQ(bus, "0000:04:00.0");
  int64_t chip = -1;
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_PHY_CHIP_ID, &chip));
  EXPECT_EQ(chip, 1);
}

TEST_F(AclDeviceIdsTest, HiddenAndMissingDevices) {
  int32_t id = 42;
  EXPECT_ACL_ERROR(aclrtGetUserDevIdByLogicDevId(2, &id), ACL_ERROR_RT_INVALID_DEVICEID,
                   "device 2 of the node is not visible");
  EXPECT_ACL_ERROR(aclrtGetUserDevIdByPhyDevId(0, &id), ACL_ERROR_RT_INVALID_DEVICEID,
                   "not visible");
  EXPECT_EQ(id, 42);
  EXPECT_ACL_ERROR(aclrtGetLogicDevIdByUserDevId(2, &id), ACL_ERROR_RT_INVALID_DEVICEID,
                   "does not exist");
  EXPECT_ACL_ERROR(aclrtGetLogicDevIdByPhyDevId(4, &id), ACL_ERROR_RT_INVALID_DEVICEID,
                   "the node has 4");
  EXPECT_ACL_ERROR(aclrtGetPhyDevIdByLogicDevId(-1, &id), ACL_ERROR_RT_INVALID_DEVICEID,
                   "does not exist");
  EXPECT_ACL_ERROR(aclrtGetLogicDevIdByUserDevId(0, nullptr), ACL_ERROR_INVALID_PARAM,
                   "output pointer is null");
}

}  // namespace
}  // namespace cohort::acltest
