// Runs with COHORT_DEVICE_COUNT=lots: every call reports the configuration error.
#include <gtest/gtest.h>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

TEST(BadConfigTest, EveryCallNamesTheVariableTheValueAndTheExpectation) {
  EXPECT_ERROR(init(), kConfigError,
               "Value 'lots' for environment variable COHORT_DEVICE_COUNT is invalid. Expected "
               "value: an integer in [1, 64].");
  EXPECT_ERROR(setDevice(0), kConfigError, "COHORT_DEVICE_COUNT");
  void* p = nullptr;
  EXPECT_ERROR(hostMalloc(&p, 64), kConfigError, "COHORT_DEVICE_COUNT");
  EXPECT_EQ(lastError().code(), ErrorCode::kConfigError);
}

}  // namespace
}  // namespace cohort::runtime
