// What the entry points of features Cohort does not implement share: one warning
// per function per process, the failure recorded like any other (aclrtGetLastError,
// aclGetRecentErrMsg), and the number returned.
#pragma once

#include "acl/acl_base.h"

namespace cohort::acl {

/// Logs "`function` is not supported: `why`" at warn level the first time it is
/// called for `function`, records the failure and returns
/// ACL_ERROR_RT_FEATURE_NOT_SUPPORT. Checks nothing else (not even aclInit): the
/// answer does not depend on the arguments. Thread-safe.
aclError notSupported(const char* function, const char* why);

}  // namespace cohort::acl
