// Stream-ordered memory pools: the properties' layout and checks, attributes, the
// pool's and the device's limits, and every error of allocation and free.
#include <cstddef>
#include <cstdint>

#include "acl_mempool_test_util.h"

namespace cohort::acltest {
namespace {

TEST_F(AclMemPoolTest, PropsLayoutAndDefaults) {
  EXPECT_EQ(sizeof(aclrtMemPoolProps), 56u);
  EXPECT_EQ(offsetof(aclrtMemPoolProps, handleType), 4u);
  EXPECT_EQ(offsetof(aclrtMemPoolProps, location), 8u);
  EXPECT_EQ(offsetof(aclrtMemPoolProps, maxSize), 16u);
  EXPECT_EQ(offsetof(aclrtMemPoolProps, reserved), 24u);
  EXPECT_EQ(flag(pool_, ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES), 0u);
  EXPECT_EQ(flag(pool_, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC), 0u);
  EXPECT_EQ(flag(pool_, ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES), 0u);
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), 0u);
  for (auto attr :
       {ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH,
        ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH}) {
    EXPECT_EQ(attribute(pool_, attr), 0u) << static_cast<int>(attr);
  }
}

TEST_F(AclMemPoolTest, CreateAndDestroyErrors) {
  aclrtMemPool pool = nullptr;
  aclrtMemPoolProps props = poolProps(0, 8 * kMiB);
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(nullptr, &props), ACL_ERROR_INVALID_PARAM, "memPool is null");
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, nullptr), ACL_ERROR_INVALID_PARAM,
                   "poolProps is null");
  props.allocType = static_cast<aclrtMemAllocationType>(1);
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM,
                   "poolProps->allocType 1 is not ACL_MEM_ALLOCATION_TYPE_PINNED");
  props = poolProps(0, 8 * kMiB);
  props.handleType = static_cast<aclrtMemHandleType>(7);
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM,
                   "poolProps->handleType 7 is not an aclrtMemHandleType");
  props = poolProps(0, 8 * kMiB);
  props.location.type = ACL_MEM_LOCATION_TYPE_HOST;
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM,
                   "poolProps->location.type 0 is not ACL_MEM_LOCATION_TYPE_DEVICE");
  props = poolProps(0, 8 * kMiB);
  props.reserved[31] = 1;
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_INVALID_PARAM,
                   "poolProps->reserved must be all zero");
  props = poolProps(9, 8 * kMiB);
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_RT_INVALID_DEVICEID,
                   "device 9 does not exist");
  props = poolProps(0, 64 * kMiB + 1);  // 66 MiB in blocks, beyond the 64 MiB device
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_RT_PARAM_INVALID,
                   "does not fit device 0's 67108864 bytes");
  props = poolProps(0, SIZE_MAX);
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_RT_PARAM_INVALID, "too large");
  // maxSize 0 is the device's memory; a pool of a device that is not set is fine.
  for (uint32_t device : {0u, 3u}) {
    props = poolProps(device, 0);
    props.handleType = ACL_MEM_HANDLE_TYPE_POSIX;
    ASSERT_ACL_OK(aclrtMemPoolCreate(&pool, &props));
    ASSERT_ACL_OK(aclrtMemPoolDestroy(pool));
  }
  EXPECT_ACL_ERROR(aclrtMemPoolDestroy(pool), ACL_ERROR_RT_PARAM_INVALID,
                   "is not a live memory pool");
  EXPECT_ACL_ERROR(aclrtMemPoolDestroy(nullptr), ACL_ERROR_INVALID_PARAM, "memPool is null");
  int fake = 0;
  EXPECT_ACL_ERROR(aclrtMemPoolTrimTo(&fake, 0), ACL_ERROR_RT_PARAM_INVALID,
                   "is not a live memory pool");
  EXPECT_ACL_ERROR(aclrtMemPoolTrimTo(nullptr, 0), ACL_ERROR_INVALID_PARAM, "memPool is null");
}

TEST(AclMemPool, NeedsAclInit) {
  aclrtMemPool pool = nullptr;
  const aclrtMemPoolProps props = poolProps(0, 0);
  EXPECT_ACL_ERROR(aclrtMemPoolCreate(&pool, &props), ACL_ERROR_UNINITIALIZE,
                   "called before aclInit");
}

TEST_F(AclMemPoolTest, PoolAndDeviceLimits) {
  aclrtMemPool small = nullptr;
  const aclrtMemPoolProps props = poolProps(0, 7 * kMiB);  // 8 MiB in blocks
  ASSERT_ACL_OK(aclrtMemPoolCreate(&small, &props));
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMemPoolMallocAsync(&p, 6 * kMiB, small, stream_));
  void* q = nullptr;
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&q, 4 * kMiB, small, stream_),
                   ACL_ERROR_RT_MEMORY_ALLOCATION, "out of pool memory");
  const uint64_t keep = 8 * kMiB;
  ASSERT_ACL_OK(aclrtMemPoolSetAttr(small, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD,
                                    const_cast<uint64_t*>(&keep)));
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(reserved(small), 6 * kMiB);  // idle, kept
  // 8 MiB fit once the idle block has gone back to the device.
  ASSERT_ACL_OK(aclrtMemPoolMallocAsync(&q, 8 * kMiB, small, stream_));
  EXPECT_EQ(reserved(small), 8 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(q, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  ASSERT_ACL_OK(aclrtMemPoolDestroy(small));

  // A pool of the whole device (maxSize 0) still runs out when the device does.
  aclrtMemPool whole = nullptr;
  const aclrtMemPoolProps all = poolProps(0, 0);
  ASSERT_ACL_OK(aclrtMemPoolCreate(&whole, &all));
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&q, 64 * kMiB + 1, whole, stream_),
                   ACL_ERROR_RT_MEMORY_ALLOCATION, "do not fit the pool's 67108864");
  void* big = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&big, 60 * kMiB, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&q, 8 * kMiB, whole, stream_),
                   ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMemPoolMallocAsync");
  ASSERT_ACL_OK(aclrtFree(big));
  ASSERT_ACL_OK(aclrtMemPoolMallocAsync(&q, 8 * kMiB, whole, stream_));
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(q, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  ASSERT_ACL_OK(aclrtMemPoolDestroy(whole));
}

TEST_F(AclMemPoolTest, Attributes) {
  for (auto attr :
       {ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES, ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC,
        ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES}) {
    uint32_t value = 5;
    ASSERT_ACL_OK(aclrtMemPoolSetAttr(pool_, attr, &value));
    EXPECT_EQ(flag(pool_, attr), 1u);  // any non-zero value turns it on
    value = 0;
    ASSERT_ACL_OK(aclrtMemPoolSetAttr(pool_, attr, &value));
    EXPECT_EQ(flag(pool_, attr), 0u);
  }
  setThreshold(pool_, 32 * kMiB);
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD), 32 * kMiB);
  uint64_t value = 32 * kMiB + 1;
  EXPECT_ACL_ERROR(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value),
                   ACL_ERROR_RT_PARAM_INVALID, "exceeds the pool's size 33554432");
  value = 0;
  EXPECT_ACL_ERROR(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &value),
                   ACL_ERROR_RT_PARAM_INVALID, "is read-only");
  EXPECT_ACL_ERROR(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT, &value),
                   ACL_ERROR_RT_PARAM_INVALID, "is read-only");
  value = 3;
  EXPECT_ACL_ERROR(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &value),
                   ACL_ERROR_RT_PARAM_INVALID, "can only be set to 0");
  // Restarting a high-water mark: it starts again from what is held now.
  void* a = allocate(4 * kMiB, stream_);
  void* b = allocate(2 * kMiB, stream_);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(a, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 6 * kMiB);
  value = 0;
  ASSERT_ACL_OK(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH, &value));
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 2 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolTrimTo(pool_, 0));
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 6 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH, &value));
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 2 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(b, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));

  for (int bad : {0, 9, -1}) {
    EXPECT_ACL_ERROR(aclrtMemPoolSetAttr(pool_, static_cast<aclrtMemPoolAttr>(bad), &value),
                     ACL_ERROR_RT_PARAM_INVALID, "is not an aclrtMemPoolAttr");
    EXPECT_ACL_ERROR(aclrtMemPoolGetAttr(pool_, static_cast<aclrtMemPoolAttr>(bad), &value),
                     ACL_ERROR_RT_PARAM_INVALID, "is not an aclrtMemPoolAttr");
  }
  EXPECT_ACL_ERROR(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, nullptr),
                   ACL_ERROR_RT_PARAM_INVALID, "value is null");
  EXPECT_ACL_ERROR(aclrtMemPoolGetAttr(pool_, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, nullptr),
                   ACL_ERROR_RT_PARAM_INVALID, "value is null");
  EXPECT_ACL_ERROR(aclrtMemPoolGetAttr(nullptr, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value),
                   ACL_ERROR_INVALID_PARAM, "memPool is null");
  EXPECT_ACL_ERROR(aclrtMemPoolSetAttr(nullptr, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value),
                   ACL_ERROR_INVALID_PARAM, "memPool is null");
  int fake = 0;
  EXPECT_ACL_ERROR(aclrtMemPoolGetAttr(&fake, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &value),
                   ACL_ERROR_RT_PARAM_INVALID, "is not a live memory pool");
}

TEST_F(AclMemPoolTest, MallocAndFreeErrors) {
  void* p = nullptr;
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(nullptr, 16, pool_, stream_), ACL_ERROR_INVALID_PARAM,
                   "ptr is null");
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&p, 16, nullptr, stream_), ACL_ERROR_INVALID_PARAM,
                   "memPool is null");
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&p, 16, pool_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "stream is null");
  int fake = 0;
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&p, 16, &fake, stream_), ACL_ERROR_RT_PARAM_INVALID,
                   "is not a live memory pool");
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&p, SIZE_MAX, pool_, stream_),
                   ACL_ERROR_RT_PARAM_INVALID, "too large");
  // A stream of another device than the calling thread's, a pool of another device.
  ASSERT_ACL_OK(aclrtSetDevice(1));
  aclrtStream onDevice1 = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&onDevice1));
  aclrtMemPool pool1 = nullptr;
  const aclrtMemPoolProps props1 = poolProps(1, 8 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolCreate(&pool1, &props1));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&p, 16, pool_, onDevice1), ACL_ERROR_RT_STREAM_CONTEXT,
                   "the stream belongs to device 1, not to the calling thread's current device");
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&p, 16, pool1, stream_), ACL_ERROR_RT_PARAM_INVALID,
                   "the pool holds device 1's memory, the stream belongs to device 0");
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtMemPoolMallocAsync(&p, 16, pool1, onDevice1));  // right device: fine
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, onDevice1));
  ASSERT_ACL_OK(aclrtSynchronizeStream(onDevice1));
  ASSERT_ACL_OK(aclrtMemPoolDestroy(pool1));
  ASSERT_ACL_OK(aclrtDestroyStream(onDevice1));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream gone = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&gone));
  ASSERT_ACL_OK(aclrtDestroyStream(gone));
  EXPECT_ACL_ERROR(aclrtMemPoolMallocAsync(&p, 16, pool_, gone), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");

  EXPECT_ACL_ERROR(aclrtMemPoolFreeAsync(nullptr, stream_), ACL_ERROR_INVALID_PARAM, "ptr is null");
  p = allocate(16, stream_);
  {
    // The first free still queued (the gate holds the stream): had it run, the pool
    // might have released the block, and the second would name another error.
    Gate gate;
    gate.hold(stream_);
    ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
    EXPECT_ACL_ERROR(aclrtMemPoolFreeAsync(p, stream_), ACL_ERROR_RT_MEMORY_FREE,
                     "was already given back to its pool");
  }
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  p = allocate(16, stream_);
  EXPECT_ACL_ERROR(aclrtMemPoolFreeAsync(static_cast<char*>(p) + 64, stream_),
                   ACL_ERROR_RT_PARAM_INVALID,
                   "is neither memory of a pool nor the start of an aclrtMalloc allocation");
  EXPECT_ACL_ERROR(aclrtMemPoolFreeAsync(&fake, stream_), ACL_ERROR_RT_PARAM_INVALID,
                   "is neither memory of a pool");
  EXPECT_ACL_ERROR(aclrtMemPoolFreeAsync(p, gone), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
  EXPECT_EQ(used(pool_), 2 * kMiB);  // the failed free left the block with the program
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, nullptr));  // the default stream
  ASSERT_ACL_OK(aclrtSynchronizeStream(nullptr));
  EXPECT_EQ(used(pool_), 0u);
}

}  // namespace
}  // namespace cohort::acltest
