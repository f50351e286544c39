// Virtual memory (reserve, physical allocations, map), the stream failure modes, the
// saturation mode and what works before aclInit.
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

using AclVmmTest = AclDevice0VmmTest;

// Two physical allocations mapped back to back in the opposite order of their creation
// form one range of device memory: a copy across the seam lands in both, and each
// allocation's pages hold what was written through the mapping.
TEST_F(AclVmmTest, MappedAllocationsAreOneRangeOfDeviceMemory) {
  ASSERT_EQ(gran_, 2u << 20);
  void* va = nullptr;
  ASSERT_ACL_OK(aclrtReserveMemAddress(&va, 3 * gran_, 0, nullptr, 0));
  aclrtDrvMemHandle a = nullptr, b = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&a, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMallocPhysical(&b, gran_, &prop_, 0));
  char* base = static_cast<char*>(va);
  ASSERT_ACL_OK(aclrtMapMem(base, gran_, 0, b, 0));
  ASSERT_ACL_OK(aclrtMapMem(base + gran_, gran_, 0, a, 0));
  const std::size_t n = 1 << 20;  // 1 MiB around the seam
  std::vector<unsigned char> in(n), out(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 131 + 7);
  char* seam = base + gran_ - n / 2;
  ASSERT_ACL_OK(aclrtMemcpy(seam, n, in.data(), n, ACL_MEMCPY_HOST_TO_DEVICE));
  // Device to device inside the range, then back to the host.
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, n, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemcpy(dev, n, seam, n, ACL_MEMCPY_DEVICE_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(std::memcmp(in.data(), out.data(), n), 0);
  // Remapped elsewhere, allocation `a` still holds the second half.
  ASSERT_ACL_OK(aclrtUnmapMem(base + gran_));
  ASSERT_ACL_OK(aclrtMapMem(base + 2 * gran_, gran_, 0, a, 0));
  EXPECT_EQ(std::memcmp(base + 2 * gran_, in.data() + n / 2, n / 2), 0);
  // A copy past the end of the mapped range is refused, not made.
  EXPECT_ACL_ERROR(aclrtMemcpy(base + gran_ - 8, 16, in.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_INVALID_PARAM, "overrun its allocation");
  ASSERT_ACL_OK(aclrtUnmapMem(base));
  ASSERT_ACL_OK(aclrtUnmapMem(base + 2 * gran_));
  ASSERT_ACL_OK(aclrtFreePhysical(a));
  ASSERT_ACL_OK(aclrtFreePhysical(b));
  ASSERT_ACL_OK(aclrtReleaseMemAddress(va));
  ASSERT_ACL_OK(aclrtFree(dev));
}

TEST_F(AclVmmTest, PhysicalMemoryCountsAgainstTheDevice) {
  size_t free0 = 0, total = 0, free1 = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total));
  aclrtDrvMemHandle h = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, 4 * gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
  EXPECT_EQ(free0 - free1, 4 * gran_);
  ASSERT_ACL_OK(aclrtFreePhysical(h));
  // More than the device holds (64 MiB in this test's environment).
  EXPECT_ACL_ERROR(aclrtMallocPhysical(&h, 64 * gran_, &prop_, 0), ACL_ERROR_RT_MEMORY_ALLOCATION,
                   "");
}

TEST_F(AclVmmTest, WrongUseIsRefused) {
  void* va = nullptr;
  aclrtDrvMemHandle h = nullptr;
  EXPECT_ACL_ERROR(aclrtReserveMemAddress(&va, gran_ + 1, 0, nullptr, 0), ACL_ERROR_INVALID_PARAM,
                   "granularity");
  EXPECT_ACL_ERROR(aclrtReserveMemAddress(&va, gran_, 3, nullptr, 0), ACL_ERROR_INVALID_PARAM,
                   "power of two");
  EXPECT_ACL_ERROR(aclrtReserveMemAddress(&va, gran_, 0, nullptr, 2), ACL_ERROR_INVALID_PARAM,
                   "flags");
  EXPECT_ACL_ERROR(aclrtReserveMemAddress(nullptr, gran_, 0, nullptr, 0), ACL_ERROR_INVALID_PARAM,
                   "virPtr");
  aclrtPhysicalMemProp host = prop_;
  host.location.type = ACL_MEM_LOCATION_TYPE_HOST;
  EXPECT_ACL_ERROR(aclrtMallocPhysical(&h, gran_, &host, 0), ACL_ERROR_INVALID_PARAM,
                   "ACL_MEM_LOCATION_TYPE_DEVICE");
  aclrtPhysicalMemProp far = prop_;
  far.location.id = 99;
  EXPECT_ACL_ERROR(aclrtMallocPhysical(&h, gran_, &far, 0), ACL_ERROR_RT_INVALID_DEVICEID, "");
  ASSERT_ACL_OK(aclrtReserveMemAddress(&va, 2 * gran_, 0, nullptr, 0));
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, gran_, &prop_, 0));
  char* base = static_cast<char*>(va);
  EXPECT_ACL_ERROR(aclrtMapMem(base + 4096, gran_, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID,
                   "reservation");
  EXPECT_ACL_ERROR(aclrtMapMem(base, 2 * gran_, 0, h, 0), ACL_ERROR_INVALID_PARAM,
                   "within the allocation");
  EXPECT_ACL_ERROR(aclrtMapMem(base + 2 * gran_, gran_, 0, h, 0), ACL_ERROR_RT_PARAM_INVALID,
                   "reservation");
  ASSERT_ACL_OK(aclrtMapMem(base, gran_, 0, h, 0));
  EXPECT_ACL_ERROR(aclrtMapMem(base, gran_, 0, h, 0), ACL_ERROR_INVALID_PARAM, "overlaps");
  EXPECT_ACL_ERROR(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM, "unmap it first");
  EXPECT_ACL_ERROR(aclrtUnmapMem(base + gran_), ACL_ERROR_RT_PARAM_INVALID, "not the start");
  EXPECT_ACL_ERROR(aclrtMapMem(base + gran_, gran_, 0, h, 1), ACL_ERROR_INVALID_PARAM, "flags");
  EXPECT_ACL_ERROR(aclrtMemMapNoAccess(base + gran_, gran_, 0, nullptr, 0),
                   ACL_ERROR_INVALID_PARAM, "handle is null");
  EXPECT_ACL_ERROR(aclrtMemMapNoAccess(nullptr, gran_, 0, h, 0), ACL_ERROR_INVALID_PARAM,
                   "virPtr is null");
  EXPECT_ACL_ERROR(aclrtMemMapNoAccess(base + gran_, gran_, 0, h, 2), ACL_ERROR_INVALID_PARAM,
                   "flags");
  ASSERT_ACL_OK(aclrtUnmapMem(base));
  ASSERT_ACL_OK(aclrtFreePhysical(h));
  EXPECT_ACL_ERROR(aclrtFreePhysical(h), ACL_ERROR_RT_INVALID_HANDLE, "not a live");
  EXPECT_ACL_ERROR(aclrtMapMem(base, gran_, 0, h, 0), ACL_ERROR_RT_INVALID_HANDLE, "not a live");
  ASSERT_ACL_OK(aclrtReleaseMemAddress(va));
  EXPECT_ACL_ERROR(aclrtReleaseMemAddress(va), ACL_ERROR_RT_PARAM_INVALID, "reservation");
}

// STOP (Cohort's default) skips the tasks after a failed one; CONTINUE runs them. The
// first error is the stream's either way.
TEST_F(AclVmmTest, FailureModeDecidesWhetherLaterTasksRun) {
  for (uint64_t mode : {ACL_STOP_ON_FAILURE, ACL_CONTINUE_ON_FAILURE}) {
    aclrtStream s = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    ASSERT_ACL_OK(aclrtSetStreamFailureMode(s, mode));
    void* dev = nullptr;
    ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_ACL_OK(aclrtMemset(dev, 64, 0, 64));
    failStream(s, ErrorCode::kTaskFailed);
    ASSERT_ACL_OK(aclrtMemsetAsync(dev, 64, 7, 64, s));
    EXPECT_NE(aclrtSynchronizeStream(s), ACL_SUCCESS);
    std::vector<unsigned char> host(64);
    ASSERT_ACL_OK(aclrtMemcpy(host.data(), 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(host[0], mode == ACL_CONTINUE_ON_FAILURE ? 7 : 0) << "mode " << mode;
    ASSERT_ACL_OK(aclrtFree(dev));
    (void)aclrtDestroyStream(s);
  }
  EXPECT_ACL_ERROR(aclrtSetStreamFailureMode(nullptr, 2), ACL_ERROR_INVALID_PARAM, "mode 2");
}

TEST_F(AclVmmTest, OnlyTheIeeeOverflowModeIsTrue) {
  aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_UNDEF;
  ASSERT_ACL_OK(aclrtGetDeviceSatMode(&mode));
  EXPECT_EQ(mode, ACL_RT_OVERFLOW_MODE_INFNAN);
  ASSERT_ACL_OK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
  EXPECT_ACL_ERROR(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "SATURATION");
  EXPECT_ACL_ERROR(aclrtSetDeviceSatMode(static_cast<aclrtFloatOverflowMode>(7)),
                   ACL_ERROR_INVALID_PARAM, "aclrtFloatOverflowMode");
}

TEST(AclBeforeInit, DeviceCountIsAnswered) {
  uint32_t count = 0;
  ASSERT_ACL_OK(aclrtGetDeviceCount(&count));
  EXPECT_EQ(count, 4u);  // COHORT_DEVICE_COUNT in this test's environment
  aclrtStream s = nullptr;
  EXPECT_EQ(aclrtCreateStream(&s), ACL_ERROR_UNINITIALIZE);  // others still need aclInit
}

}  // namespace
}  // namespace cohort::acltest
