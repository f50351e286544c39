// An invalid Cohort variable makes aclInit fail with the variable named (this
// binary runs with COHORT_DEVICE_COUNT=lots).
#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

TEST(AclBadConfigTest, InitReportsTheVariable) {
  EXPECT_ACL_ERROR(aclInit(nullptr), ACL_ERROR_INVALID_PARAM,
                   "Value 'lots' for environment variable COHORT_DEVICE_COUNT is invalid");
  int32_t device = -1;
  EXPECT_ACL_ERROR(aclrtGetDevice(&device), ACL_ERROR_UNINITIALIZE, "before aclInit");
}

}  // namespace
}  // namespace cohort::acltest
