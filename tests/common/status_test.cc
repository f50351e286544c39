#include <gtest/gtest.h>

#include <thread>

#include "common/error.h"

namespace cohort {
namespace {

TEST(StatusTest, OkAndErrors) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.toString(), "success");
  Status bad = makeError(ErrorCode::kOutOfMemory, "device {}: {} bytes", 2, 100);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.toString(), "out of memory: device 2: 100 bytes");
}

TEST(StatusTest, CodesAreStable) {
  // These numbers are part of the ABI (the C API maps them): never renumber.
  EXPECT_EQ(static_cast<int>(ErrorCode::kInvalidArgument), 1);
  EXPECT_EQ(static_cast<int>(ErrorCode::kOutOfMemory), 4);
  EXPECT_EQ(static_cast<int>(ErrorCode::kTimeout), 9);
  EXPECT_EQ(static_cast<int>(ErrorCode::kVersionMismatch), 13);
  EXPECT_EQ(static_cast<int>(ErrorCode::kNotSupported), 25);
  EXPECT_EQ(static_cast<int>(ErrorCode::kCaptured), 26);
  EXPECT_EQ(static_cast<int>(ErrorCode::kKernelFault), 27);
  EXPECT_EQ(kLastErrorCode, ErrorCode::kKernelFault);
  for (int c = 0; c <= static_cast<int>(kLastErrorCode); ++c) {
    EXPECT_STRNE(errorString(static_cast<ErrorCode>(c)), "unknown error") << c;
  }
  EXPECT_STREQ(errorString(static_cast<ErrorCode>(999)), "unknown error");
}

TEST(StatusTest, LastErrorIsPerThreadAndTakeClearsIt) {
  (void)takeLastError();
  (void)recordError(Status(ErrorCode::kTimeout, "x"));
  EXPECT_EQ(lastError().code(), ErrorCode::kTimeout);
  std::thread([] { EXPECT_TRUE(lastError().ok()); }).join();
  EXPECT_EQ(takeLastError().code(), ErrorCode::kTimeout);
  EXPECT_TRUE(lastError().ok());
  (void)recordError(Status());  // ok does not overwrite
  EXPECT_TRUE(lastError().ok());
}

TEST(StatusTest, SystemErrorNamesErrno) {
  Status s = systemError(ENOENT, "open /nope");
  EXPECT_EQ(s.code(), ErrorCode::kSystemError);
  EXPECT_NE(s.message().find("open /nope: No such file or directory (errno 2)"), std::string::npos);
}

}  // namespace
}  // namespace cohort
