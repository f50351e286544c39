// Assertions on cohort::Status that print the message on failure.
#pragma once

#include <gtest/gtest.h>

#include "cohort/status.h"

#define ASSERT_OK(expr)                                  \
  do {                                                   \
    const ::cohort::Status s_ = (expr);                  \
    ASSERT_TRUE(s_.ok()) << #expr << ": " << s_.toString(); \
  } while (0)
#define EXPECT_OK(expr)                                  \
  do {                                                   \
    const ::cohort::Status s_ = (expr);                  \
    EXPECT_TRUE(s_.ok()) << #expr << ": " << s_.toString(); \
  } while (0)
// The status has this code and its message contains `needle`.
#define EXPECT_ERROR(expr, errorCode, needle)                                     \
  do {                                                                            \
    const ::cohort::Status s_ = (expr);                                           \
    EXPECT_EQ(s_.code(), ::cohort::ErrorCode::errorCode) << #expr << ": " << s_.toString(); \
    EXPECT_NE(s_.message().find(needle), std::string::npos)                       \
        << #expr << ": message lacks '" << (needle) << "': " << s_.toString();    \
  } while (0)
