// Helpers for the ACL API tests: error assertions that also check the message
// aclGetRecentErrMsg reports, fixtures that bracket each test with aclInit/aclFinalize
// (with device 0 current, and streams of it), and a gate that holds a stream until the
// test opens it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "cohort/runtime.h"
#include "test_util.h"

// The call returns ACL_SUCCESS (the recent messages are printed if not).
#define ASSERT_ACL_OK(expr)                                                                   \
  do {                                                                                        \
    const aclError e_ = (expr);                                                               \
    if (e_ != ACL_SUCCESS) {                                                                  \
      const char* m_ = aclGetRecentErrMsg();                                                  \
      FAIL() << #expr << " returned " << e_ << ": " << (m_ != nullptr ? m_ : "(no message)"); \
    }                                                                                         \
  } while (0)

// The call returns `number` and the newest recent message contains `needle`.
#define EXPECT_ACL_ERROR(expr, number, needle)                                     \
  do {                                                                             \
    const aclError e_ = (expr);                                                    \
    EXPECT_EQ(e_, number) << #expr;                                                \
    const char* m_ = aclGetRecentErrMsg();                                         \
    ASSERT_NE(m_, nullptr) << #expr << ": no message recorded";                    \
    const std::string s_(m_);                                                      \
    const std::string newest_ = s_.substr(0, s_.find('\n'));                       \
    EXPECT_NE(newest_.find(needle), std::string::npos)                             \
        << #expr << ": message lacks '" << (needle) << "': " << newest_;           \
    EXPECT_NE(newest_.find(std::to_string(number)), std::string::npos) << newest_; \
  } while (0)

namespace cohort::acltest {

/// aclInit before each test, aclFinalize (which releases everything) after it.
class AclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_ACL_OK(aclInit(nullptr));
    aclGetRecentErrMsg();                    // start with no messages
    aclrtGetLastError(ACL_RT_THREAD_LEVEL);  // and no last error
  }
  void TearDown() override { ASSERT_ACL_OK(aclFinalize()); }
};

/// AclTest, then device 0 current for the test's thread.
class AclDevice0Test : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
  }
};

/// AclDevice0Test with a stream of device 0, stream_, destroyed after the test (a test
/// that destroys it, or has it destroyed, sets stream_ to null).
class AclDevice0StreamTest : public AclDevice0Test {
 protected:
  void SetUp() override {
    AclDevice0Test::SetUp();
    ASSERT_ACL_OK(aclrtCreateStream(&stream_));
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
    }
    AclDevice0Test::TearDown();
  }

  aclrtStream stream_ = nullptr;
};

/// AclDevice0Test with two streams of device 0, destroyed after the test: for one
/// stream (producer_) to signal what the other (consumer_) waits for.
class AclDevice0StreamPairTest : public AclDevice0Test {
 protected:
  void SetUp() override {
    AclDevice0Test::SetUp();
    ASSERT_ACL_OK(aclrtCreateStream(&producer_));
    ASSERT_ACL_OK(aclrtCreateStream(&consumer_));
  }
  void TearDown() override {
    if (producer_ != nullptr) {
      EXPECT_EQ(aclrtDestroyStream(producer_), ACL_SUCCESS);
    }
    if (consumer_ != nullptr) {
      EXPECT_EQ(aclrtDestroyStream(consumer_), ACL_SUCCESS);
    }
    AclDevice0Test::TearDown();
  }

  aclrtStream producer_ = nullptr;
  aclrtStream consumer_ = nullptr;
};

/// AclDevice0Test with the properties of a plain physical allocation of device 0
/// (prop_) and their minimum granularity (gran_): for the virtual-memory tests.
class AclDevice0VmmTest : public AclDevice0Test {
 protected:
  void SetUp() override {
    AclDevice0Test::SetUp();
    ASSERT_ACL_OK(aclrtMemGetAllocationGranularity(&prop_, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                                                   &gran_));
  }

  aclrtPhysicalMemProp prop_ = {ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_ALLOCATION_TYPE_PINNED,
                                ACL_HBM_MEM_HUGE, {0, ACL_MEM_LOCATION_TYPE_DEVICE}, 0};
  size_t gran_ = 0;
};

/// Holds a stream (a kernel that waits) until open() is called or the gate is
/// destroyed. Thread-safe.
class Gate {
 public:
  ~Gate() { open(); }
  void hold(aclrtStream stream) {
    auto flag = open_;
    ASSERT_OK(
        runtime::launchKernel(static_cast<runtime::Stream*>(stream), [flag](runtime::Stream*) {
          while (!flag->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return Status::Ok();
        }));
  }
  void open() { open_->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> open_ = std::make_shared<std::atomic<bool>>(false);
};

/// Byte i of the device memory [p, p + n) becomes (seed + i) % 256.
inline void fillPattern(void* p, size_t n, int seed) {
  std::vector<unsigned char> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>(seed + i);
  ASSERT_ACL_OK(aclrtMemcpy(p, n, data.data(), n, ACL_MEMCPY_HOST_TO_DEVICE));
}

/// Whether the device memory [p, p + n) holds fillPattern's bytes for `seed` (false
/// when it cannot be read).
inline bool holdsPattern(const void* p, size_t n, int seed) {
  std::vector<unsigned char> data(n);
  if (aclrtMemcpy(data.data(), n, p, n, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return false;
  for (size_t i = 0; i < n; ++i) {
    if (data[i] != static_cast<unsigned char>(seed + i)) return false;
  }
  return true;
}

/// How many users hold device `device` (aclrtSetDevice and contexts).
inline int referenceCount(int device) {
  runtime::DeviceInfo info;
  EXPECT_OK(runtime::getDeviceInfo(device, &info));
  return info.referenceCount;
}

/// Makes the stream's next task fail with `code`.
inline void failStream(aclrtStream stream, ErrorCode code) {
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream), [code](runtime::Stream*) {
    return Status(code, "injected task failure");
  }));
}

}  // namespace cohort::acltest
