// Managed memory: one address that is host memory and device memory of every device,
// advice and prefetch locations recorded per 2 MiB granule.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

constexpr std::size_t kMiB2 = 2u << 20;

class AclManagedTest : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
  }
  int32_t intAttr(aclrtMemManagedRangeAttribute attribute, const void* p, size_t size) {
    int32_t v = 12345;
    const aclError e = aclrtMemManagedGetAttr(attribute, p, size, &v, sizeof(v));
    EXPECT_EQ(e, ACL_SUCCESS) << aclGetRecentErrMsg();
    return v;
  }
};

aclrtMemManagedLocation device(int id) { return {ACL_MEM_LOCATIONTYPE_DEVICE, id}; }
aclrtMemManagedLocation host() { return {ACL_MEM_LOCATIONTYPE_HOST, 0}; }

TEST_F(AclManagedTest, HostAndEveryDeviceUseTheSameMemory) {
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMemAllocManaged(&p, 1000, ACL_RT_MEM_ATTACH_GLOBAL));
  runtime::PointerAttributes a;
  ASSERT_OK(runtime::pointerGetAttributes(p, &a));
  EXPECT_TRUE(a.isManaged);
  EXPECT_EQ(a.allocationSize, kMiB2);  // rounded up to 2 MiB
  auto* words = static_cast<uint32_t*>(p);
  for (uint32_t i = 0; i < 256; ++i) words[i] = i * 3;  // the host writes directly
  // Device 1 copies it into its own memory (managed memory as the device side)...
  ASSERT_ACL_OK(aclrtSetDevice(1));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 1024, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemcpy(dev, 1024, p, 1024, ACL_MEMCPY_DEVICE_TO_DEVICE));
  // ... and back into the second half, as host memory.
  ASSERT_ACL_OK(
      aclrtMemcpy(static_cast<char*>(p) + 1024, 1024, dev, 1024, ACL_MEMCPY_DEVICE_TO_HOST));
  // A stream of device 1 sets it as device memory.
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtMemsetD32Async(static_cast<char*>(p) + 2048, 64, 0xabcdef01u, 16, stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  for (uint32_t i = 0; i < 256; ++i) {
    ASSERT_EQ(words[i], i * 3);
    ASSERT_EQ(words[256 + i], i * 3);
  }
  for (uint32_t i = 0; i < 16; ++i) ASSERT_EQ(words[512 + i], 0xabcdef01u);
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtFree(dev));
  ASSERT_ACL_OK(aclrtFree(p));
  EXPECT_ACL_ERROR(aclrtFree(p), ACL_ERROR_RT_MEMORY_FREE, "already freed");
}

TEST_F(AclManagedTest, AllocErrors) {
  void* p = nullptr;
  EXPECT_ACL_ERROR(aclrtMemAllocManaged(&p, 0, ACL_RT_MEM_ATTACH_GLOBAL), ACL_ERROR_INVALID_PARAM,
                   "size 0");
  EXPECT_ACL_ERROR(aclrtMemAllocManaged(&p, 64, 0), ACL_ERROR_INVALID_PARAM,
                   "not ACL_RT_MEM_ATTACH_GLOBAL");
  EXPECT_ACL_ERROR(aclrtMemAllocManaged(nullptr, 64, ACL_RT_MEM_ATTACH_GLOBAL),
                   ACL_ERROR_INVALID_PARAM, "ptr is null");
}

TEST_F(AclManagedTest, AdviceIsRecordedPerGranule) {
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMemAllocManaged(&p, 3 * kMiB2, ACL_RT_MEM_ATTACH_GLOBAL));
  char* second = static_cast<char*>(p) + kMiB2;
  // Nothing set yet.
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 3 * kMiB2), 0);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, p, 3 * kMiB2), -2);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, p, kMiB2),
            ACL_MEM_LOCATIONTYPE_INVALID);

  ASSERT_ACL_OK(aclrtMemManagedAdvise(p, 3 * kMiB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host()));
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 3 * kMiB2), 1);
  ASSERT_ACL_OK(aclrtMemManagedAdvise(second, kMiB2, ACL_MEM_ADVISE_UNSET_READ_MOSTLY,
                                      {ACL_MEM_LOCATIONTYPE_INVALID, 0}));
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 3 * kMiB2), 0);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, kMiB2), 1);

  // Preferred location: device 2 on the first two granules, the host on the third.
  ASSERT_ACL_OK(
      aclrtMemManagedAdvise(p, 2 * kMiB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device(2)));
  ASSERT_ACL_OK(
      aclrtMemManagedAdvise(second + kMiB2, kMiB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, host()));
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, p, 2 * kMiB2), 2);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, p, 2 * kMiB2), 2);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, p, 2 * kMiB2),
            ACL_MEM_LOCATIONTYPE_DEVICE);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, second + kMiB2, 100), -1);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, second + kMiB2, 100),
            ACL_MEM_LOCATIONTYPE_HOST);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, p, 3 * kMiB2), -2);  // mixed
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, p, 3 * kMiB2),
            ACL_MEM_LOCATIONTYPE_INVALID);
  ASSERT_ACL_OK(aclrtMemManagedAdvise(p, kMiB2, ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, host()));
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, p, kMiB2), -2);

  // Accessed by: the locations set on every granule of the range; the rest of data -2.
  ASSERT_ACL_OK(aclrtMemManagedAdvise(p, 2 * kMiB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, device(1)));
  ASSERT_ACL_OK(aclrtMemManagedAdvise(p, kMiB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, device(3)));
  ASSERT_ACL_OK(aclrtMemManagedAdvise(p, 2 * kMiB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, host()));
  int32_t ids[4];
  ASSERT_ACL_OK(
      aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, 2 * kMiB2, ids, sizeof(ids)));
  std::vector<int32_t> got(ids, ids + 4);
  std::sort(got.begin(), got.begin() + 2);
  EXPECT_EQ(got, (std::vector<int32_t>{-1, 1, -2, -2}));
  ASSERT_ACL_OK(
      aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, kMiB2, ids, sizeof(ids)));
  got.assign(ids, ids + 4);
  std::sort(got.begin(), got.begin() + 3);
  EXPECT_EQ(got, (std::vector<int32_t>{-1, 1, 3, -2}));
  ASSERT_ACL_OK(aclrtMemManagedAdvise(p, kMiB2, ACL_MEM_ADVISE_UNSET_ACCESSED_BY, device(1)));
  ASSERT_ACL_OK(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, kMiB2, ids, 8));
  got.assign(ids, ids + 2);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int32_t>{-1, 3}));

  // Several attributes at once.
  aclrtMemManagedRangeAttribute which[2] = {ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                                            ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION};
  int32_t readMostly = 9, preferred = 9;
  void* data[2] = {&readMostly, &preferred};
  size_t sizes[2] = {4, 4};
  ASSERT_ACL_OK(aclrtMemManagedGetAttrs(which, 2, second, kMiB2, data, sizes));
  EXPECT_EQ(readMostly, 0);
  EXPECT_EQ(preferred, 2);
  ASSERT_ACL_OK(aclrtFree(p));
}

TEST_F(AclManagedTest, AdviceAndAttributeErrors) {
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMemAllocManaged(&p, kMiB2, ACL_RT_MEM_ATTACH_GLOBAL));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_ACL_ERROR(aclrtMemManagedAdvise(p, 4096, ACL_MEM_ADVISE_SET_READ_MOSTLY, host()),
                   ACL_ERROR_INVALID_PARAM, "not a multiple of 2 MiB");
  EXPECT_ACL_ERROR(aclrtMemManagedAdvise(p, 2 * kMiB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host()),
                   ACL_ERROR_INVALID_PARAM, "overrun the managed allocation");
  EXPECT_ACL_ERROR(aclrtMemManagedAdvise(dev, kMiB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host()),
                   ACL_ERROR_INVALID_PARAM, "not memory of a live aclrtMemAllocManaged");
  EXPECT_ACL_ERROR(
      aclrtMemManagedAdvise(p, kMiB2, static_cast<aclrtMemManagedAdviseType>(6), host()),
      ACL_ERROR_INVALID_PARAM, "advise 6");
  EXPECT_ACL_ERROR(
      aclrtMemManagedAdvise(p, kMiB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device(4)),
      ACL_ERROR_RT_INVALID_DEVICEID, "location device 4 does not exist");
  EXPECT_ACL_ERROR(aclrtMemManagedAdvise(p, kMiB2, ACL_MEM_ADVISE_SET_ACCESSED_BY,
                                         {ACL_MEM_LOCATIONTYPE_INVALID, 0}),
                   ACL_ERROR_INVALID_PARAM, "location type 0");
  int32_t v = 0;
  EXPECT_ACL_ERROR(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 64, &v, 8),
                   ACL_ERROR_INVALID_PARAM, "dataSize 8 must be 4");
  EXPECT_ACL_ERROR(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, 64, &v, 6),
                   ACL_ERROR_INVALID_PARAM, "positive multiple of 4");
  EXPECT_ACL_ERROR(
      aclrtMemManagedGetAttr(static_cast<aclrtMemManagedRangeAttribute>(0), p, 64, &v, 4),
      ACL_ERROR_INVALID_PARAM, "attribute 0");
  EXPECT_ACL_ERROR(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 64, nullptr, 4),
                   ACL_ERROR_INVALID_PARAM, "data is null");
  ASSERT_ACL_OK(aclrtFree(p));
  EXPECT_ACL_ERROR(aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, p, 64, &v, 4),
                   ACL_ERROR_INVALID_PARAM, "not memory of a live");  // freed
  ASSERT_ACL_OK(aclrtFree(dev));
}

TEST_F(AclManagedTest, PrefetchIsAnOrderedTaskAndRecordsTheLocation) {
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMemAllocManaged(&p, 2 * kMiB2, ACL_RT_MEM_ATTACH_GLOBAL));
  char* second = static_cast<char*>(p) + kMiB2;
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  Gate gate;
  gate.hold(stream);
  auto* rtStream = static_cast<runtime::Stream*>(stream);
  uint64_t queued = 0, done = 0, queuedAfter = 0;
  ASSERT_OK(runtime::streamProgress(rtStream, &queued, &done));
  ASSERT_ACL_OK(aclrtMemManagedPrefetchAsync(p, 2 * kMiB2, device(1), 0, stream));
  ASSERT_OK(runtime::streamProgress(rtStream, &queuedAfter, &done));
  EXPECT_EQ(queuedAfter, queued + 1);  // one task, behind the gate
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, 2 * kMiB2), 1);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, p, 2 * kMiB2),
            ACL_MEM_LOCATIONTYPE_DEVICE);

  const void* ptrs[2] = {p, second};
  size_t sizes[2] = {kMiB2, kMiB2};
  aclrtMemManagedLocation locs[2] = {host(), device(3)};
  size_t idxs[2] = {0, 1};
  ASSERT_ACL_OK(aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, locs, idxs, 2, 0, stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, kMiB2), -1);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, second, kMiB2), 3);
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, 2 * kMiB2), -2);

  EXPECT_ACL_ERROR(aclrtMemManagedPrefetchAsync(p, kMiB2, device(1), 1, stream),
                   ACL_ERROR_INVALID_PARAM, "flags 1 must be 0");
  EXPECT_ACL_ERROR(aclrtMemManagedPrefetchAsync(p, 100, device(1), 0, stream),
                   ACL_ERROR_INVALID_PARAM, "not a multiple of 2 MiB");
  size_t badIdxs[2] = {0, 0};
  EXPECT_ACL_ERROR(aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, locs, badIdxs, 2, 0, stream),
                   ACL_ERROR_INVALID_PARAM, "prefetchLocIdxs[1] = 0");
  aclrtMemManagedLocation badLocs[2] = {host(), device(9)};
  EXPECT_ACL_ERROR(aclrtMemManagedPrefetchBatchAsync(ptrs, sizes, 2, badLocs, idxs, 2, 0, stream),
                   ACL_ERROR_RT_INVALID_DEVICEID, "location device 9");
  // Nothing of the failed batch was recorded.
  EXPECT_EQ(intAttr(ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, kMiB2), -1);
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtFree(p));
}

}  // namespace
}  // namespace cohort::acltest
