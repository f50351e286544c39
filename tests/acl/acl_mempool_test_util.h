// Helpers of the memory pool tests: pool properties, attribute reads, and a fixture
// with a device, a stream and a 32 MiB pool.
#pragma once

#include <cstddef>
#include <cstring>

#include "acl/acl_rt_memory_soma.h"
#include "acl_test_util.h"

namespace cohort::acltest {

inline constexpr size_t kMiB = size_t{1} << 20;

inline aclrtMemPoolProps poolProps(uint32_t device, size_t maxSize) {
  aclrtMemPoolProps props;
  std::memset(&props, 0, sizeof props);
  props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  props.maxSize = maxSize;
  return props;
}

inline uint64_t attribute(aclrtMemPool pool, aclrtMemPoolAttr attr) {
  uint64_t value = ~uint64_t{0};
  EXPECT_EQ(aclrtMemPoolGetAttr(pool, attr, &value), ACL_SUCCESS) << static_cast<int>(attr);
  return value;
}

inline uint32_t flag(aclrtMemPool pool, aclrtMemPoolAttr attr) {
  uint32_t value = ~0u;
  EXPECT_EQ(aclrtMemPoolGetAttr(pool, attr, &value), ACL_SUCCESS) << static_cast<int>(attr);
  return value;
}

inline uint64_t used(aclrtMemPool pool) {
  return attribute(pool, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT);
}
inline uint64_t reserved(aclrtMemPool pool) {
  return attribute(pool, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT);
}

inline void setThreshold(aclrtMemPool pool, uint64_t bytes) {
  ASSERT_ACL_OK(aclrtMemPoolSetAttr(pool, ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD, &bytes));
}

inline bool allBytes(const char* p, size_t n, char value) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != value) return false;
  }
  return true;
}

class AclMemPoolTest : public AclDevice0StreamTest {
 protected:
  void SetUp() override {
    AclDevice0StreamTest::SetUp();
    const aclrtMemPoolProps props = poolProps(0, 32 * kMiB);
    ASSERT_ACL_OK(aclrtMemPoolCreate(&pool_, &props));
  }
  void TearDown() override {
    if (pool_ != nullptr) {
      EXPECT_EQ(aclrtMemPoolDestroy(pool_), ACL_SUCCESS);
    }
    AclDevice0StreamTest::TearDown();
  }
  void* allocate(size_t size, aclrtStream stream) {
    void* p = nullptr;
    EXPECT_EQ(aclrtMemPoolMallocAsync(&p, size, pool_, stream), ACL_SUCCESS)
        << aclGetRecentErrMsg();
    return p;
  }
  // Pinned host memory: asynchronous copies into it do not synchronize.
  char* pinned(size_t size) {
    void* p = nullptr;
    EXPECT_EQ(aclrtMallocHost(&p, size), ACL_SUCCESS);
    return static_cast<char*>(p);
  }

  aclrtMemPool pool_ = nullptr;
};

}  // namespace cohort::acltest
