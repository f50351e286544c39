// Helpers for the ACL API tests: error assertions that also check the message
// aclGetRecentErrMsg reports, a fixture that brackets each test with
// aclInit/aclFinalize, and a gate that holds a stream until the test opens it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

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

/// Makes the stream's next task fail with `code`.
inline void failStream(aclrtStream stream, ErrorCode code) {
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream), [code](runtime::Stream*) {
    return Status(code, "injected task failure");
  }));
}

}  // namespace cohort::acltest
