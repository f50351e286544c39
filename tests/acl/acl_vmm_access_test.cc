// Virtual memory beyond map and unmap: handles released while mapped and retained from
// addresses, their properties, address ranges, the access of mappings (real page
// protection, which copies check instead of faulting), a second mapping of mapped memory
// (aclrtMemMapSelectedLink) and reservations at chosen addresses.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

// CANN's layouts and values.
static_assert(sizeof(aclrtMemAccessDesc) == 24 && offsetof(aclrtMemAccessDesc, location) == 4,
              "aclrtMemAccessDesc");
static_assert(sizeof(aclrtMemFabricHandle) == 128, "aclrtMemFabricHandle");
static_assert(ACL_RT_MEM_ACCESS_FLAGS_READWRITE == 3 && ACL_MEM_SHARE_HANDLE_TYPE_FABRIC == 2 &&
                  ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION == 1,
              "values");

class AclVmmAccessTest : public AclDevice0VmmTest {
 protected:
  void SetUp() override {
    AclDevice0VmmTest::SetUp();
    ASSERT_ACL_OK(aclrtReserveMemAddress(&va_, 4 * gran_, 0, nullptr, 0));
    base_ = static_cast<char*>(va_);
  }
  void TearDown() override {
    EXPECT_EQ(aclrtReleaseMemAddress(va_), ACL_SUCCESS);
    AclDevice0VmmTest::TearDown();
  }
  size_t freeMemory() {
    size_t freeBytes = 0, total = 0;
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &freeBytes, &total), ACL_SUCCESS);
    return freeBytes;
  }
  void* va_ = nullptr;
  char* base_ = nullptr;
};

// The kernel's own view of a page's protection: write(2) from it fails with EFAULT
// when it is not readable, read(2) into it when it is not writable; neither faults.
bool readable(const void* p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  const bool ok = write(fds[1], p, 1) == 1;
  close(fds[0]);
  close(fds[1]);
  return ok;
}
bool writable(void* p) {
  if (!readable(p)) return false;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  unsigned char byte = 0;
  std::memcpy(&byte, p, 1);  // put back what is there
  const bool ok = write(fds[1], &byte, 1) == 1 && read(fds[0], p, 1) == 1;
  close(fds[0]);
  close(fds[1]);
  return ok;
}

// Freed while mapped, an allocation stays until its last mapping goes (CANN's rule);
// the handle itself is dead at once.
TEST_F(AclVmmAccessTest, FreeingAMappedAllocationWaitsForItsUnmap) {
  const size_t free0 = freeMemory();
  aclrtDrvMemHandle h = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_, gran_, 0, h, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_ + 2 * gran_, gran_, 0, h, 0));  // twice: the same pages
  fillPattern(base_, 4096, 5);
  EXPECT_TRUE(holdsPattern(base_ + 2 * gran_, 4096, 5));
  ASSERT_ACL_OK(aclrtFreePhysical(h));
  aclrtPhysicalMemProp p{};
  EXPECT_ACL_ERROR(aclrtMemGetAllocationPropertiesFromHandle(h, &p), ACL_ERROR_RT_INVALID_HANDLE,
                   "not a live");
  EXPECT_ACL_ERROR(aclrtMapMem(base_ + gran_, gran_, 0, h, 0), ACL_ERROR_RT_INVALID_HANDLE,
                   "not a live");
  EXPECT_ACL_ERROR(aclrtFreePhysical(h), ACL_ERROR_RT_INVALID_HANDLE, "not a live");
  EXPECT_EQ(freeMemory(), free0 - gran_);
  ASSERT_ACL_OK(aclrtUnmapMem(base_));
  EXPECT_TRUE(holdsPattern(base_ + 2 * gran_, 4096, 5));
  EXPECT_EQ(freeMemory(), free0 - gran_);
  ASSERT_ACL_OK(aclrtUnmapMem(base_ + 2 * gran_));
  EXPECT_EQ(freeMemory(), free0);
}

// Each retain is one more reference for aclrtFreePhysical, on the same handle.
TEST_F(AclVmmAccessTest, RetainedHandlesAreCounted) {
  aclrtDrvMemHandle h = nullptr, r1 = nullptr, r2 = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, 2 * gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_ + gran_, 2 * gran_, 0, h, 0));
  ASSERT_ACL_OK(aclrtMemRetainAllocationHandle(base_ + gran_, &r1));
  ASSERT_ACL_OK(aclrtMemRetainAllocationHandle(base_ + 2 * gran_ + 4096, &r2));
  EXPECT_EQ(r1, h);
  EXPECT_EQ(r2, h);
  aclrtPhysicalMemProp p{};
  ASSERT_ACL_OK(aclrtFreePhysical(h));
  ASSERT_ACL_OK(aclrtFreePhysical(r1));
  ASSERT_ACL_OK(aclrtMemGetAllocationPropertiesFromHandle(r2, &p));  // one reference is left
  ASSERT_ACL_OK(aclrtFreePhysical(r2));
  EXPECT_ACL_ERROR(aclrtMemGetAllocationPropertiesFromHandle(h, &p), ACL_ERROR_RT_INVALID_HANDLE,
                   "not a live");
  // Still mapped: retaining gives a live handle back.
  ASSERT_ACL_OK(aclrtMemRetainAllocationHandle(base_ + gran_, &r1));
  ASSERT_ACL_OK(aclrtMemGetAllocationPropertiesFromHandle(r1, &p));
  ASSERT_ACL_OK(aclrtUnmapMem(base_ + gran_));
  ASSERT_ACL_OK(aclrtFreePhysical(r1));
  EXPECT_ACL_ERROR(aclrtMemRetainAllocationHandle(base_ + gran_, &r1), ACL_ERROR_RT_PARAM_INVALID,
                   "not in a mapping");
  EXPECT_ACL_ERROR(aclrtMemRetainAllocationHandle(nullptr, &r1), ACL_ERROR_INVALID_PARAM,
                   "virPtr is null");
  EXPECT_ACL_ERROR(aclrtMemRetainAllocationHandle(base_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "handle is null");
}

TEST_F(AclVmmAccessTest, PropertiesAreTheCreators) {
  ASSERT_ACL_OK(aclrtSetDevice(2));
  aclrtPhysicalMemProp made = {ACL_MEM_HANDLE_TYPE_POSIX, ACL_MEM_ALLOCATION_TYPE_PINNED,
                               ACL_HBM_MEM_P2P_NORMAL, {2, ACL_MEM_LOCATION_TYPE_DEVICE}, 0};
  aclrtDrvMemHandle h = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, gran_, &made, 0));
  aclrtPhysicalMemProp got;
  std::memset(&got, 0xFF, sizeof(got));
  ASSERT_ACL_OK(aclrtMemGetAllocationPropertiesFromHandle(h, &got));
  EXPECT_EQ(got.handleType, ACL_MEM_HANDLE_TYPE_POSIX);
  EXPECT_EQ(got.allocationType, ACL_MEM_ALLOCATION_TYPE_PINNED);
  EXPECT_EQ(got.memAttr, ACL_HBM_MEM_P2P_NORMAL);
  EXPECT_EQ(got.location.id, 2u);
  EXPECT_EQ(got.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
  EXPECT_EQ(got.reserve, 0u);
  EXPECT_ACL_ERROR(aclrtMemGetAllocationPropertiesFromHandle(h, nullptr), ACL_ERROR_INVALID_PARAM,
                   "prop is null");
  EXPECT_ACL_ERROR(aclrtMemGetAllocationPropertiesFromHandle(nullptr, &got),
                   ACL_ERROR_INVALID_PARAM, "handle is null");
  ASSERT_ACL_OK(aclrtFreePhysical(h));
  ASSERT_ACL_OK(aclrtResetDevice(2));
}

// The block: one mapping (not its neighbours), or the allocation of other memory.
TEST_F(AclVmmAccessTest, AddressRangeIsTheBlockHoldingTheAddress) {
  aclrtDrvMemHandle a = nullptr, b = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&a, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMallocPhysical(&b, 2 * gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_, gran_, 0, a, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_ + gran_, 2 * gran_, 0, b, 0));
  void* start = nullptr;
  size_t size = 0;
  ASSERT_ACL_OK(aclrtMemGetAddressRange(base_ + 100, &start, &size));
  EXPECT_EQ(start, base_);
  EXPECT_EQ(size, gran_);
  ASSERT_ACL_OK(aclrtMemGetAddressRange(base_ + 3 * gran_ - 1, &start, &size));
  EXPECT_EQ(start, base_ + gran_);
  EXPECT_EQ(size, 2 * gran_);
  EXPECT_ACL_ERROR(aclrtMemGetAddressRange(base_ + 3 * gran_, &start, &size),
                   ACL_ERROR_RT_PARAM_INVALID, "not in a live allocation");
  void* dev = nullptr;
  void* host = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 1000, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMallocHost(&host, 3000));
  ASSERT_ACL_OK(aclrtMemGetAddressRange(static_cast<char*>(dev) + 999, &start, &size));
  EXPECT_EQ(start, dev);
  EXPECT_EQ(size, 1000u);
  ASSERT_ACL_OK(aclrtMemGetAddressRange(static_cast<char*>(host) + 5, &start, &size));
  EXPECT_EQ(start, host);
  EXPECT_EQ(size, 3000u);
  int onStack = 0;
  EXPECT_ACL_ERROR(aclrtMemGetAddressRange(&onStack, &start, &size), ACL_ERROR_RT_PARAM_INVALID,
                   "plain host memory");
  EXPECT_ACL_ERROR(aclrtMemGetAddressRange(nullptr, &start, &size), ACL_ERROR_INVALID_PARAM,
                   "ptr is null");
  EXPECT_ACL_ERROR(aclrtMemGetAddressRange(dev, nullptr, &size), ACL_ERROR_INVALID_PARAM,
                   "pbase is null");
  EXPECT_ACL_ERROR(aclrtMemGetAddressRange(dev, &start, nullptr), ACL_ERROR_INVALID_PARAM,
                   "psize is null");
  ASSERT_ACL_OK(aclrtFree(dev));
  EXPECT_ACL_ERROR(aclrtMemGetAddressRange(dev, &start, &size), ACL_ERROR_RT_PARAM_INVALID,
                   "freed");
  ASSERT_ACL_OK(aclrtFreeHost(host));
  ASSERT_ACL_OK(aclrtUnmapMem(base_));
  ASSERT_ACL_OK(aclrtUnmapMem(base_ + gran_));
  ASSERT_ACL_OK(aclrtFreePhysical(a));
  ASSERT_ACL_OK(aclrtFreePhysical(b));
}

// No access, then read, then read-write: the pages' protection follows, and copies that
// need more than a mapping allows fail instead of faulting.
TEST_F(AclVmmAccessTest, AccessIsThePagesProtection) {
  aclrtDrvMemHandle h = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_, gran_, 0, h, 0));  // read-write
  char* closed = base_ + 2 * gran_;
  ASSERT_ACL_OK(aclrtMemMapNoAccess(closed, gran_, 0, h, 0));  // the same pages
  fillPattern(base_, 4096, 17);
  const aclrtMemLocation dev0 = {0, ACL_MEM_LOCATION_TYPE_DEVICE};
  aclrtMemLocation where = dev0;
  uint64_t flag = 99;
  ASSERT_ACL_OK(aclrtMemGetAccess(base_, &where, &flag));
  EXPECT_EQ(flag, static_cast<uint64_t>(ACL_RT_MEM_ACCESS_FLAGS_READWRITE));
  ASSERT_ACL_OK(aclrtMemGetAccess(closed + 8192, &where, &flag));
  EXPECT_EQ(flag, static_cast<uint64_t>(ACL_RT_MEM_ACCESS_FLAGS_NONE));
  EXPECT_FALSE(readable(closed));
  EXPECT_TRUE(writable(base_));
  std::vector<unsigned char> host(4096);
  EXPECT_ACL_ERROR(aclrtMemcpy(host.data(), 4096, closed, 4096, ACL_MEMCPY_DEVICE_TO_HOST),
                   ACL_ERROR_RT_PARAM_INVALID, "allows no access");
  EXPECT_ACL_ERROR(aclrtMemcpy(closed, 4096, host.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_RT_PARAM_INVALID, "allows no access");
  EXPECT_ACL_ERROR(aclrtMemset(closed, 4096, 0, 4096), ACL_ERROR_RT_PARAM_INVALID,
                   "allows no access");
  EXPECT_ACL_ERROR(aclrtMemcpy(base_, 4096, closed, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE),
                   ACL_ERROR_RT_PARAM_INVALID, "allows no access");
  EXPECT_ACL_ERROR(aclrtMemcpyAsync(host.data(), 4096, closed, 4096, ACL_MEMCPY_DEVICE_TO_HOST,
                                    nullptr),
                   ACL_ERROR_RT_PARAM_INVALID, "allows no access");
  // Read only: reads work (and see the other mapping's data), writes do not.
  aclrtMemAccessDesc read = {ACL_RT_MEM_ACCESS_FLAGS_READ, dev0, {0}};
  ASSERT_ACL_OK(aclrtMemSetAccess(closed, gran_, &read, 1));
  ASSERT_ACL_OK(aclrtMemGetAccess(closed, &where, &flag));
  EXPECT_EQ(flag, static_cast<uint64_t>(ACL_RT_MEM_ACCESS_FLAGS_READ));
  EXPECT_TRUE(readable(closed));
  EXPECT_FALSE(writable(closed));
  EXPECT_TRUE(holdsPattern(closed, 4096, 17));
  EXPECT_ACL_ERROR(aclrtMemcpy(closed, 4096, host.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_RT_PARAM_INVALID, "read-only");
  // Read-write for one device and read for another: the widest wins (one address space).
  aclrtMemAccessDesc both[2] = {{ACL_RT_MEM_ACCESS_FLAGS_READ, {1, ACL_MEM_LOCATION_TYPE_DEVICE},
                                 {0}},
                                {ACL_RT_MEM_ACCESS_FLAGS_READWRITE, dev0, {0}}};
  ASSERT_ACL_OK(aclrtMemSetAccess(closed, gran_, both, 2));
  where = {0, ACL_MEM_LOCATION_TYPE_HOST};
  ASSERT_ACL_OK(aclrtMemGetAccess(closed, &where, &flag));
  EXPECT_EQ(flag, static_cast<uint64_t>(ACL_RT_MEM_ACCESS_FLAGS_READWRITE));
  EXPECT_TRUE(writable(closed));
  fillPattern(closed, 4096, 29);
  EXPECT_TRUE(holdsPattern(base_, 4096, 29));
  // And back to nothing.
  aclrtMemAccessDesc none = {ACL_RT_MEM_ACCESS_FLAGS_NONE, dev0, {0}};
  ASSERT_ACL_OK(aclrtMemSetAccess(closed, gran_, &none, 1));
  EXPECT_FALSE(readable(closed));
  ASSERT_ACL_OK(aclrtUnmapMem(closed));
  ASSERT_ACL_OK(aclrtUnmapMem(base_));
  ASSERT_ACL_OK(aclrtFreePhysical(h));
}

TEST_F(AclVmmAccessTest, WrongAccessIsRefused) {
  aclrtDrvMemHandle h = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMemMapNoAccess(base_, gran_, 0, h, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_ + gran_, gran_, 0, h, 0));
  aclrtMemAccessDesc d = {ACL_RT_MEM_ACCESS_FLAGS_READWRITE, {0, ACL_MEM_LOCATION_TYPE_DEVICE},
                          {0}};
  // Two whole mappings back to back are one range; a part of one, or a gap, is not.
  ASSERT_ACL_OK(aclrtMemSetAccess(base_, 2 * gran_, &d, 1));
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, gran_ / 2, &d, 1), ACL_ERROR_INVALID_PARAM,
                   "whole mappings");
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_ + 4096, gran_, &d, 1), ACL_ERROR_INVALID_PARAM,
                   "whole mappings");
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, 3 * gran_, &d, 1), ACL_ERROR_INVALID_PARAM,
                   "whole mappings");
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, 0, &d, 1), ACL_ERROR_INVALID_PARAM, "whole mappings");
  EXPECT_ACL_ERROR(aclrtMemSetAccess(nullptr, gran_, &d, 1), ACL_ERROR_INVALID_PARAM,
                   "virPtr is null");
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, gran_, nullptr, 1), ACL_ERROR_INVALID_PARAM,
                   "desc is null");
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, gran_, &d, 0), ACL_ERROR_INVALID_PARAM, "count is 0");
  aclrtMemAccessDesc bad = d;
  bad.flags = static_cast<aclrtMemAccessFlags>(2);
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, gran_, &bad, 1), ACL_ERROR_INVALID_PARAM,
                   "desc[0].flags 2");
  bad = d;
  bad.location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, gran_, &bad, 1), ACL_ERROR_INVALID_PARAM,
                   "desc[0].location.type 3");
  bad = d;
  bad.location.id = 4;
  EXPECT_ACL_ERROR(aclrtMemSetAccess(base_, gran_, &bad, 1), ACL_ERROR_RT_INVALID_DEVICEID,
                   "desc[0].location.id 4");
  aclrtMemLocation where = {0, ACL_MEM_LOCATION_TYPE_DEVICE};
  uint64_t flag = 0;
  EXPECT_ACL_ERROR(aclrtMemGetAccess(base_ + 2 * gran_, &where, &flag),
                   ACL_ERROR_RT_PARAM_INVALID, "not in a mapping");
  EXPECT_ACL_ERROR(aclrtMemGetAccess(nullptr, &where, &flag), ACL_ERROR_INVALID_PARAM,
                   "virPtr is null");
  EXPECT_ACL_ERROR(aclrtMemGetAccess(base_, nullptr, &flag), ACL_ERROR_INVALID_PARAM,
                   "location is null");
  EXPECT_ACL_ERROR(aclrtMemGetAccess(base_, &where, nullptr), ACL_ERROR_INVALID_PARAM,
                   "flag is null");
  where.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
  EXPECT_ACL_ERROR(aclrtMemGetAccess(base_, &where, &flag), ACL_ERROR_INVALID_PARAM,
                   "location.type 2");
  where = {7, ACL_MEM_LOCATION_TYPE_DEVICE};
  EXPECT_ACL_ERROR(aclrtMemGetAccess(base_, &where, &flag), ACL_ERROR_RT_INVALID_DEVICEID,
                   "location.id 7");
  ASSERT_ACL_OK(aclrtUnmapMem(base_));
  ASSERT_ACL_OK(aclrtUnmapMem(base_ + gran_));
  ASSERT_ACL_OK(aclrtFreePhysical(h));
}

// A second range over the same physical pieces: writes through one are in the other.
TEST_F(AclVmmAccessTest, SelectedLinkMapsTheSameMemory) {
  aclrtDrvMemHandle a = nullptr, b = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&a, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMallocPhysical(&b, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_, gran_, 0, a, 0));
  ASSERT_ACL_OK(aclrtMapMem(base_ + gran_, gran_, 0, b, 0));
  void* dst = nullptr;
  ASSERT_ACL_OK(aclrtReserveMemAddress(&dst, 2 * gran_, 0, nullptr, 0));
  char* d = static_cast<char*>(dst);
  EXPECT_ACL_ERROR(aclrtMemMapSelectedLink(d + gran_, gran_, base_, ACL_RT_MEM_LINK_IDX_0),
                   ACL_ERROR_RT_PARAM_INVALID, "not the start of a reservation");
  EXPECT_ACL_ERROR(aclrtMemMapSelectedLink(d, gran_, base_ + 4096, ACL_RT_MEM_LINK_IDX_0),
                   ACL_ERROR_RT_PARAM_INVALID, "whole mappings");
  EXPECT_ACL_ERROR(aclrtMemMapSelectedLink(d, 2 * gran_ + gran_, base_, ACL_RT_MEM_LINK_IDX_1),
                   ACL_ERROR_RT_PARAM_INVALID, "at least");
  ASSERT_ACL_OK(aclrtMemMapSelectedLink(d, 2 * gran_, base_, ACL_RT_MEM_LINK_IDX_1));
  fillPattern(base_ + gran_ - 2048, 4096, 77);  // across the seam of the source
  EXPECT_TRUE(holdsPattern(d + gran_ - 2048, 4096, 77));
  fillPattern(d + 8, 64, 3);
  EXPECT_TRUE(holdsPattern(base_ + 8, 64, 3));
  aclrtDrvMemHandle r = nullptr;
  ASSERT_ACL_OK(aclrtMemRetainAllocationHandle(d + gran_, &r));
  EXPECT_EQ(r, b);
  ASSERT_ACL_OK(aclrtFreePhysical(r));
  // Over a mapping there already (the second piece): refused, and the first piece is
  // not left mapped.
  ASSERT_ACL_OK(aclrtUnmapMem(d));  // each piece is a mapping of its own
  EXPECT_ACL_ERROR(aclrtMemMapSelectedLink(d, 2 * gran_, base_, ACL_RT_MEM_LINK_IDX_1),
                   ACL_ERROR_INVALID_PARAM, "overlaps");
  aclrtMemLocation where = {0, ACL_MEM_LOCATION_TYPE_DEVICE};
  uint64_t flag = 0;
  EXPECT_ACL_ERROR(aclrtMemGetAccess(d, &where, &flag), ACL_ERROR_RT_PARAM_INVALID,
                   "not in a mapping");
  ASSERT_ACL_OK(aclrtUnmapMem(d + gran_));
  ASSERT_ACL_OK(aclrtReleaseMemAddress(dst));
  ASSERT_ACL_OK(aclrtUnmapMem(base_));
  ASSERT_ACL_OK(aclrtUnmapMem(base_ + gran_));
  ASSERT_ACL_OK(aclrtFreePhysical(a));
  ASSERT_ACL_OK(aclrtFreePhysical(b));
}

// expectPtr is where a reservation starts, or it fails; NoUC reservations need one.
TEST_F(AclVmmAccessTest, ReservationsStartWhereAsked) {
  // Free addresses: reserved, released, asked for again.
  const size_t kGiB = size_t{1} << 30;
  void* probe = nullptr;
  ASSERT_ACL_OK(aclrtReserveMemAddress(&probe, 4 * kGiB, kGiB, nullptr, 0));
  ASSERT_ACL_OK(aclrtReleaseMemAddress(probe));
  char* at = static_cast<char*>(probe);
  void* got = nullptr;
  ASSERT_ACL_OK(aclrtReserveMemAddress(&got, 2 * gran_, 0, at + 2 * gran_, 0));
  EXPECT_EQ(got, at + 2 * gran_);
  EXPECT_ACL_ERROR(aclrtReserveMemAddress(&got, gran_, 0, at + 3 * gran_, 0),
                   ACL_ERROR_INVALID_PARAM, "is not free");
  EXPECT_ACL_ERROR(aclrtReserveMemAddress(&got, gran_, 0, at + 4096, 0), ACL_ERROR_INVALID_PARAM,
                   "not aligned");
  EXPECT_ACL_ERROR(aclrtReserveMemAddress(&got, 2 * kGiB, 0, at + 2 * gran_, 0),
                   ACL_ERROR_INVALID_PARAM, "aligned to 1 GiB");
  ASSERT_ACL_OK(aclrtReleaseMemAddress(at + 2 * gran_));
  // NoUC: whole GiB at an address the program gives.
  ASSERT_ACL_OK(aclrtReserveMemAddressNoUCMemory(&got, kGiB, 0, at + kGiB, 0));
  EXPECT_EQ(got, at + kGiB);
  aclrtDrvMemHandle h = nullptr;
  ASSERT_ACL_OK(aclrtMallocPhysical(&h, gran_, &prop_, 0));
  ASSERT_ACL_OK(aclrtMapMem(at + kGiB, gran_, 0, h, 0));  // an ordinary reservation
  fillPattern(at + kGiB, 256, 9);
  EXPECT_TRUE(holdsPattern(at + kGiB, 256, 9));
  ASSERT_ACL_OK(aclrtUnmapMem(at + kGiB));
  ASSERT_ACL_OK(aclrtFreePhysical(h));
  ASSERT_ACL_OK(aclrtReleaseMemAddress(at + kGiB));
  EXPECT_EQ(aclrtReserveMemAddressNoUCMemory(&got, kGiB, 0, nullptr, 0),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  EXPECT_ACL_ERROR(aclrtReserveMemAddressNoUCMemory(&got, gran_, 0, at, 0),
                   ACL_ERROR_INVALID_PARAM, "multiple of 1 GiB");
  EXPECT_ACL_ERROR(aclrtReserveMemAddressNoUCMemory(nullptr, kGiB, 0, at, 0),
                   ACL_ERROR_INVALID_PARAM, "virPtr is null");
  EXPECT_ACL_ERROR(aclrtReserveMemAddressNoUCMemory(&got, kGiB, 0, at, 4),
                   ACL_ERROR_INVALID_PARAM, "flags");
}

}  // namespace
}  // namespace cohort::acltest
