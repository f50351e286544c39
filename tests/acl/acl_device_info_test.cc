// What a device reports about itself: run mode, attributes, capabilities, UUID, PCI
// address, topology, status, utilisation, the scheduler choice and the L2 flush.
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclDeviceInfoTest = AclTest;

TEST_F(AclDeviceInfoTest, RunModeIsHost) {
  aclrtRunMode mode = ACL_DEVICE;
  ASSERT_ACL_OK(aclrtGetRunMode(&mode));
  EXPECT_EQ(mode, ACL_HOST);
  EXPECT_ACL_ERROR(aclrtGetRunMode(nullptr), ACL_ERROR_INVALID_PARAM, "runMode is null");
}

TEST_F(AclDeviceInfoTest, AttributesOfTheSocEmulated) {
  int64_t value = -1;
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_AICORE_CORE_NUM, &value));
  EXPECT_EQ(value, 20);
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_CUBE_CORE_NUM, &value));
  EXPECT_EQ(value, 20);
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_VECTOR_CORE_NUM, &value));
  EXPECT_EQ(value, 40);
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_AICPU_CORE_NUM, &value));
  EXPECT_EQ(value, 6);
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_L2_CACHE_SIZE, &value));
  EXPECT_EQ(value, 96ll << 20);
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_NPU_ARCH, &value));
  EXPECT_EQ(value, 2201);
  ASSERT_ACL_OK(aclrtGetDeviceInfo(1, ACL_DEV_ATTR_WARP_SIZE, &value));
  EXPECT_EQ(value, 0);  // no SIMT on that SoC
  // The memory is COHORT_DEVICE_MEMORY (64M here), the chip id the device's on the node.
  ASSERT_ACL_OK(aclrtGetDeviceInfo(2, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &value));
  EXPECT_EQ(value, 64ll << 20);
  ASSERT_ACL_OK(aclrtGetDeviceInfo(2, ACL_DEV_ATTR_PHY_CHIP_ID, &value));
  EXPECT_EQ(value, 2);
  // No device needs to be set, and the value is untouched on failure.
  value = 77;
  EXPECT_ACL_ERROR(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_SUPER_POD_ID, &value),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "super pod");
  EXPECT_EQ(value, 77);
  EXPECT_ACL_ERROR(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_DEVICE_FORM_FACTOR, &value),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "does not report");
  EXPECT_ACL_ERROR(aclrtGetDeviceInfo(0, static_cast<aclrtDevAttr>(999), &value),
                   ACL_ERROR_INVALID_PARAM, "attr 999 is not an aclrtDevAttr");
  EXPECT_ACL_ERROR(aclrtGetDeviceInfo(4, ACL_DEV_ATTR_AICORE_CORE_NUM, &value),
                   ACL_ERROR_RT_INVALID_DEVICEID, "device 4 does not exist");
  EXPECT_ACL_ERROR(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, nullptr),
                   ACL_ERROR_INVALID_PARAM, "value is null");
}

TEST_F(AclDeviceInfoTest, CapabilitiesAreNotSupported) {
  int32_t value = -1;
  ASSERT_ACL_OK(aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &value));
  EXPECT_EQ(value, ACL_DEV_FEATURE_NOT_SUPPORT);
  value = -1;
  ASSERT_ACL_OK(aclrtGetDeviceCapability(3, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &value));
  EXPECT_EQ(value, ACL_DEV_FEATURE_NOT_SUPPORT);
  EXPECT_ACL_ERROR(aclrtGetDeviceCapability(0, static_cast<aclrtDevFeatureType>(2), &value),
                   ACL_ERROR_INVALID_PARAM, "not an aclrtDevFeatureType");
  EXPECT_ACL_ERROR(aclrtGetDeviceCapability(-1, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &value),
                   ACL_ERROR_RT_INVALID_DEVICEID, "does not exist");
  EXPECT_ACL_ERROR(aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, nullptr),
                   ACL_ERROR_INVALID_PARAM, "value is null");
}

TEST_F(AclDeviceInfoTest, UuidIsStablePerDeviceAndDistinct) {
  std::set<std::string> seen;
  for (int32_t d = 0; d < 4; ++d) {
    aclrtUuid first, second;
    ASSERT_ACL_OK(aclrtDeviceGetUuid(d, &first));
    ASSERT_ACL_OK(aclrtDeviceGetUuid(d, &second));
    EXPECT_EQ(std::memcmp(first.bytes, second.bytes, sizeof first.bytes), 0);
    EXPECT_EQ(first.bytes[6] & 0xf0, 0x50);  // name-based layout
    EXPECT_EQ(first.bytes[8] & 0xc0, 0x80);  // RFC 4122 variant
    seen.insert(std::string(first.bytes, sizeof first.bytes));
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_ACL_ERROR(aclrtDeviceGetUuid(0, nullptr), ACL_ERROR_INVALID_PARAM, "uuid is null");
  aclrtUuid uuid;
  EXPECT_ACL_ERROR(aclrtDeviceGetUuid(9, &uuid), ACL_ERROR_RT_INVALID_DEVICEID, "does not exist");
}

TEST_F(AclDeviceInfoTest, PciBusIdsRoundTrip) {
  char id[16] = {};
  ASSERT_ACL_OK(aclrtDeviceGetPCIBusId(2, id, 13));
  EXPECT_STREQ(id, "0000:03:00.0");
  for (int32_t d = 0; d < 4; ++d) {
    ASSERT_ACL_OK(aclrtDeviceGetPCIBusId(d, id, sizeof id));
    int32_t back = -1;
    ASSERT_ACL_OK(aclrtDeviceGetByPCIBusId(id, &back));
    EXPECT_EQ(back, d) << id;
  }
  int32_t device = -1;
  ASSERT_ACL_OK(aclrtDeviceGetByPCIBusId("0000:03:00.0", &device));
  EXPECT_EQ(device, 2);
  EXPECT_ACL_ERROR(aclrtDeviceGetPCIBusId(0, id, 12), ACL_ERROR_INVALID_PARAM,
                   "len 12 is too small");
  EXPECT_ACL_ERROR(aclrtDeviceGetPCIBusId(0, nullptr, 13), ACL_ERROR_INVALID_PARAM,
                   "pciBusId is null");
  EXPECT_ACL_ERROR(aclrtDeviceGetPCIBusId(4, id, 13), ACL_ERROR_RT_INVALID_DEVICEID,
                   "does not exist");
  EXPECT_ACL_ERROR(aclrtDeviceGetByPCIBusId("0000:05:00.0", &device), ACL_ERROR_RT_INVALID_DEVICEID,
                   "no visible device has PCI bus id");
  EXPECT_ACL_ERROR(aclrtDeviceGetByPCIBusId("zz:00.0", &device), ACL_ERROR_INVALID_PARAM,
                   "is not a PCI bus id");
  EXPECT_ACL_ERROR(aclrtDeviceGetByPCIBusId("0000:01:00.0x", &device), ACL_ERROR_INVALID_PARAM,
                   "is not a PCI bus id");
  EXPECT_ACL_ERROR(aclrtDeviceGetByPCIBusId("0:1:0.0", &device), ACL_ERROR_INVALID_PARAM,
                   "is not a PCI bus id");
  EXPECT_ACL_ERROR(aclrtDeviceGetByPCIBusId("0000:01:00.0", nullptr), ACL_ERROR_INVALID_PARAM,
                   "deviceId is null");
}

TEST_F(AclDeviceInfoTest, TopologyIsHccsBetweenDevices) {
  uint64_t topo = 0;
  ASSERT_ACL_OK(aclrtGetDevicesTopo(0, 3, &topo));
  EXPECT_EQ(topo, ACL_RT_DEVS_TOPOLOGY_HCCS);
  EXPECT_ACL_ERROR(aclrtGetDevicesTopo(1, 1, &topo), ACL_ERROR_INVALID_PARAM, "no link to itself");
  EXPECT_ACL_ERROR(aclrtGetDevicesTopo(0, 4, &topo), ACL_ERROR_RT_INVALID_DEVICEID,
                   "does not exist");
  EXPECT_ACL_ERROR(aclrtGetDevicesTopo(0, 1, nullptr), ACL_ERROR_INVALID_PARAM, "value is null");
}

TEST_F(AclDeviceInfoTest, PriorityRangeStatusUtilisationTgid) {
  int32_t least = -1, greatest = -1;
  ASSERT_ACL_OK(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(least, 7);
  EXPECT_EQ(greatest, 0);
  EXPECT_ACL_ERROR(aclrtDeviceGetStreamPriorityRange(nullptr, &greatest), ACL_ERROR_INVALID_PARAM,
                   "leastPriority is null");

  aclrtDeviceStatus status = ACL_RT_DEVICE_STATUS_ABNORMAL;
  ASSERT_ACL_OK(aclrtQueryDeviceStatus(1, &status));
  EXPECT_EQ(status, ACL_RT_DEVICE_STATUS_NORMAL);
  EXPECT_ACL_ERROR(aclrtQueryDeviceStatus(7, &status), ACL_ERROR_RT_INVALID_DEVICEID,
                   "does not exist");

  aclrtUtilizationInfo use = {};
  ASSERT_ACL_OK(aclrtGetDeviceUtilizationRate(0, &use));
  EXPECT_EQ(use.cubeUtilization, -1);
  EXPECT_EQ(use.vectorUtilization, -1);
  EXPECT_EQ(use.aicpuUtilization, -1);
  EXPECT_EQ(use.memoryUtilization, -1);
  use.utilizationExtend = reinterpret_cast<aclrtUtilizationExtendInfo*>(&use);
  EXPECT_ACL_ERROR(aclrtGetDeviceUtilizationRate(0, &use), ACL_ERROR_INVALID_PARAM,
                   "utilizationExtend is reserved");

  int32_t pid = 0;
  ASSERT_ACL_OK(aclrtDeviceGetBareTgid(&pid));
  EXPECT_EQ(pid, static_cast<int32_t>(getpid()));
}

TEST_F(AclDeviceInfoTest, NoDeviceIssuedAtomics) {
  const aclrtAtomicOperation ops[3] = {ACL_RT_ATOMIC_OPERATION_INTEGER_ADD,
                                       ACL_RT_ATOMIC_OPERATION_FLOAT_MAX,
                                       ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH};
  uint32_t caps[3] = {9, 9, 9};
  ASSERT_ACL_OK(aclrtDeviceGetHostAtomicCapabilities(caps, ops, 3, 0));
  EXPECT_EQ(caps[0] | caps[1] | caps[2], 0u);
  caps[1] = 9;
  ASSERT_ACL_OK(aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 3, 0, 1));
  EXPECT_EQ(caps[1], 0u);
  const aclrtAtomicOperation bad[1] = {static_cast<aclrtAtomicOperation>(20)};
  EXPECT_ACL_ERROR(aclrtDeviceGetHostAtomicCapabilities(caps, bad, 1, 0), ACL_ERROR_INVALID_PARAM,
                   "operations[0] = 20");
  EXPECT_ACL_ERROR(aclrtDeviceGetP2PAtomicCapabilities(caps, ops, 3, 0, 8),
                   ACL_ERROR_RT_INVALID_DEVICEID, "does not exist");
  EXPECT_ACL_ERROR(aclrtDeviceGetHostAtomicCapabilities(nullptr, ops, 3, 0),
                   ACL_ERROR_INVALID_PARAM, "capabilities is null");
}

TEST_F(AclDeviceInfoTest, SchedulerL2FlushAndArchitecture) {
  ASSERT_ACL_OK(aclrtSetTsDevice(ACL_TS_ID_AICORE));
  ASSERT_ACL_OK(aclrtSetTsDevice(ACL_TS_ID_AIVECTOR));
  EXPECT_ACL_ERROR(aclrtSetTsDevice(ACL_TS_ID_RESERVED), ACL_ERROR_INVALID_PARAM,
                   "tsId 2 is neither");

  EXPECT_ACL_ERROR(aclrtDeviceL2CacheFlush(nullptr), ACL_ERROR_RT_CONTEXT_NULL,
                   "no current device");
  ASSERT_ACL_OK(aclrtSetDevice(0));
  ASSERT_ACL_OK(aclrtDeviceL2CacheFlush(nullptr));
  int dummy = 0;
  EXPECT_ACL_ERROR(aclrtDeviceL2CacheFlush(&dummy), ACL_ERROR_INVALID_PARAM, "rsv is reserved");

  int32_t compatible = 1;
  ASSERT_ACL_OK(aclrtCheckArchCompatibility("Ascend910B4", &compatible));
  EXPECT_EQ(compatible, 0);  // no operator instructions run on Cohort
  EXPECT_ACL_ERROR(aclrtCheckArchCompatibility(nullptr, &compatible), ACL_ERROR_INVALID_PARAM,
                   "socVersion is null");
  EXPECT_ACL_ERROR(aclrtCheckArchCompatibility("Ascend910B4", nullptr), ACL_ERROR_INVALID_PARAM,
                   "canCompatible is null");
  ASSERT_ACL_OK(aclrtResetDevice(0));
}

TEST(AclDeviceInfoNoInit, NeedsAclInit) {
  int64_t value = 0;
  EXPECT_EQ(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &value), ACL_ERROR_UNINITIALIZE);
}

// Programs ask the run mode before aclInit (to choose how to allocate), as CANN allows.
TEST(AclDeviceInfoNoInit, RunModeNeedsNoInit) {
  aclrtRunMode mode = ACL_DEVICE;
  EXPECT_EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
  EXPECT_EQ(mode, ACL_HOST);
  EXPECT_EQ(aclrtGetRunMode(nullptr), ACL_ERROR_INVALID_PARAM);
}

}  // namespace
}  // namespace cohort::acltest
