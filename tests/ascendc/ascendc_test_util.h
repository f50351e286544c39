// The fixture of the kernel tests: device 0 and a stream (AclDevice0StreamTest),
// device buffers made from host vectors and read back, freed after each test.
#pragma once

#include <algorithm>
#include <vector>

#include "acl/acl_test_util.h"

namespace cohort::acltest {

class KernelTest : public AclDevice0StreamTest {
 protected:
  void TearDown() override {
    for (void* p : device_) EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    AclDevice0StreamTest::TearDown();
  }
  /// A device copy of `host` (at least one byte, so an empty vector has an address).
  template <typename T>
  T* deviceCopy(const std::vector<T>& host) {
    void* p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, std::max<size_t>(host.size() * sizeof(T), 1),
                          ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    device_.push_back(p);
    if (!host.empty()) {
      EXPECT_EQ(aclrtMemcpy(p, host.size() * sizeof(T), host.data(), host.size() * sizeof(T),
                            ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    }
    return static_cast<T*>(p);
  }
  template <typename T>
  std::vector<T> hostCopy(const T* device, size_t count) {
    std::vector<T> host(count);
    EXPECT_EQ(aclrtMemcpy(host.data(), count * sizeof(T), device, count * sizeof(T),
                          ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return host;
  }

 private:
  std::vector<void*> device_;
};

}  // namespace cohort::acltest
