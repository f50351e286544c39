// Invalid Ascend variables are refused like Cohort's own, naming the variable,
// the value and what is expected (this binary runs with ASCEND_GLOBAL_LOG_LEVEL=7
// and ASCEND_RT_VISIBLE_DEVICES=a,b).
#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

TEST(AclBadEnvTest, InitNamesEveryInvalidVariable) {
  EXPECT_ACL_ERROR(aclInit(nullptr), ACL_ERROR_INVALID_PARAM,
                   "Value '7' for environment variable ASCEND_GLOBAL_LOG_LEVEL is invalid");
  EXPECT_ACL_ERROR(aclInit(nullptr), ACL_ERROR_INVALID_PARAM,
                   "Value 'a,b' for environment variable ASCEND_RT_VISIBLE_DEVICES is invalid");
}

}  // namespace
}  // namespace cohort::acltest
