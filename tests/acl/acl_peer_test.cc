// Peer access between emulated devices: every pair can, enabling is recorded per
// ordered pair, copies between devices work either way, P2P maps need it enabled.
#include <cstdint>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

class AclPeerTest : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
  }
  int32_t status(int32_t device, int32_t peer) {
    int32_t s = -1;
    EXPECT_EQ(aclrtDevicePeerAccessStatus(device, peer, &s), ACL_SUCCESS);
    return s;
  }
};

TEST_F(AclPeerTest, EveryPairCanAndEnablingIsOneWay) {
  int32_t can = 0;
  ASSERT_ACL_OK(aclrtDeviceCanAccessPeer(&can, 0, 3));
  EXPECT_EQ(can, 1);
  EXPECT_EQ(status(0, 1), 0);
  ASSERT_ACL_OK(aclrtDeviceEnablePeerAccess(1, 0));
  ASSERT_ACL_OK(aclrtDeviceEnablePeerAccess(1, 0));  // again: still enabled
  EXPECT_EQ(status(0, 1), 1);
  EXPECT_EQ(status(1, 0), 0);  // one direction only
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtDeviceEnablePeerAccess(0, 0));
  EXPECT_EQ(status(1, 0), 1);
  ASSERT_ACL_OK(aclrtDeviceDisablePeerAccess(0));
  EXPECT_EQ(status(1, 0), 0);
  EXPECT_EQ(status(0, 1), 1);
  ASSERT_ACL_OK(aclrtSetDevice(0));
  ASSERT_ACL_OK(aclrtDeviceDisablePeerAccess(1));
  EXPECT_EQ(status(0, 1), 0);
}

TEST_F(AclPeerTest, CopiesBetweenDevicesWorkWithOrWithoutPeerAccess) {
  void* a = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&a, 256, ACL_MEM_MALLOC_HUGE_FIRST_P2P));
  std::vector<unsigned char> in(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<unsigned char>(i);
  ASSERT_ACL_OK(aclrtMemcpy(a, 256, in.data(), 256, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtSetDevice(2));
  void* b = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&b, 256, ACL_MEM_MALLOC_HUGE_FIRST_P2P));
  ASSERT_EQ(status(2, 0), 0);
  ASSERT_ACL_OK(aclrtMemcpy(b, 256, a, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
  std::vector<unsigned char> out(256, 0);
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), 256, b, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(out, in);
  ASSERT_ACL_OK(aclrtDeviceEnablePeerAccess(0, 0));
  ASSERT_ACL_OK(aclrtMemset(b, 256, 0, 256));
  ASSERT_ACL_OK(aclrtMemcpy(b, 256, a, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), 256, b, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(out, in);
  ASSERT_ACL_OK(aclrtDeviceDisablePeerAccess(0));
}

TEST_F(AclPeerTest, P2PMapNeedsPeerAccessFromTheUser) {
  void* a = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&a, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_ACL_ERROR(aclrtMemP2PMap(a, 4096, 1, 0), ACL_ERROR_INVALID_PARAM,
                   "peer access from device 1 to device 0 is not enabled");
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtDeviceEnablePeerAccess(0, 0));
  ASSERT_ACL_OK(aclrtMemP2PMap(a, 4096, 1, 0));
  EXPECT_ACL_ERROR(aclrtMemP2PMap(a, 4096, 0, 0), ACL_ERROR_INVALID_PARAM,
                   "dstDevId 0 owns the memory");
  EXPECT_ACL_ERROR(aclrtMemP2PMap(a, 4097, 1, 0), ACL_ERROR_INVALID_PARAM,
                   "overrun its allocation");
  EXPECT_ACL_ERROR(aclrtMemP2PMap(a, 4096, 1, 1), ACL_ERROR_INVALID_PARAM, "flags 1 must be 0");
  EXPECT_ACL_ERROR(aclrtMemP2PMap(a, 4096, 8, 0), ACL_ERROR_RT_INVALID_DEVICEID,
                   "dstDevId 8 does not exist");
  std::vector<char> host(64);
  EXPECT_ACL_ERROR(aclrtMemP2PMap(host.data(), 64, 1, 0), ACL_ERROR_INVALID_PARAM,
                   "is not device memory");
  ASSERT_ACL_OK(aclrtDeviceDisablePeerAccess(0));
}

TEST_F(AclPeerTest, Errors) {
  int32_t can = 0;
  EXPECT_ACL_ERROR(aclrtDeviceCanAccessPeer(&can, 1, 1), ACL_ERROR_INVALID_PARAM,
                   "deviceId and peerDeviceId are both 1");
  EXPECT_ACL_ERROR(aclrtDeviceCanAccessPeer(&can, 0, 4), ACL_ERROR_RT_INVALID_DEVICEID,
                   "peerDeviceId 4 does not exist");
  EXPECT_ACL_ERROR(aclrtDeviceCanAccessPeer(nullptr, 0, 1), ACL_ERROR_INVALID_PARAM,
                   "canAccessPeer is null");
  EXPECT_ACL_ERROR(aclrtDeviceEnablePeerAccess(0, 0), ACL_ERROR_INVALID_PARAM,
                   "peerDeviceId 0 is the current device");
  EXPECT_ACL_ERROR(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_INVALID_PARAM, "flags 1");
  EXPECT_ACL_ERROR(aclrtDeviceEnablePeerAccess(-1, 0), ACL_ERROR_RT_INVALID_DEVICEID,
                   "peerDeviceId -1 does not exist");
  EXPECT_ACL_ERROR(aclrtDeviceDisablePeerAccess(0), ACL_ERROR_INVALID_PARAM,
                   "is the current device");
  int32_t s = 0;
  EXPECT_ACL_ERROR(aclrtDevicePeerAccessStatus(0, 9, &s), ACL_ERROR_RT_PARAM_INVALID,
                   "ids must be in 0..3");
  EXPECT_ACL_ERROR(aclrtDevicePeerAccessStatus(0, 1, nullptr), ACL_ERROR_INVALID_PARAM,
                   "status is null");
  ASSERT_ACL_OK(aclrtResetDevice(0));
  EXPECT_ACL_ERROR(aclrtDeviceEnablePeerAccess(1, 0), ACL_ERROR_RT_CONTEXT_NULL,
                   "no current device");
}

TEST_F(AclPeerTest, LinkChoicesOfMappedMemory) {
  aclrtPhysicalMemProp prop{};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t granularity = 0;
  ASSERT_ACL_OK(
      aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
  aclrtDrvMemHandle handle = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&handle, granularity, &prop, 0));
  ASSERT_ACL_OK(aclrtMemMapSetLink(handle, ACL_RT_MEM_ACCESS_LINK_HCCS));
  ASSERT_ACL_OK(aclrtMemMapSetLink(handle, ACL_RT_MEM_ACCESS_LINK_SIO));
  EXPECT_ACL_ERROR(aclrtMemMapSetLink(handle, static_cast<aclrtMemLinkType>(4)),
                   ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED, "adviceLink 4");
  EXPECT_ACL_ERROR(aclrtMemMapSetLink(nullptr, ACL_RT_MEM_ACCESS_LINK_HCCS),
                   ACL_ERROR_INVALID_PARAM, "handle is null");
  ASSERT_ACL_OK(aclrtFreePhysical(handle));
  void* va = nullptr;
  EXPECT_ACL_ERROR(aclrtMemMapSelectedLink(&va, granularity, &va, 2), ACL_ERROR_INVALID_PARAM,
                   "linkIdx 2");
}

}  // namespace
}  // namespace cohort::acltest
