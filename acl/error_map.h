// Cohort error codes -> AscendCL error numbers: one table (error_map.cc), plus
// the names of the numbers for messages.
#pragma once

#include "acl/acl_base.h"
#include "cohort/status.h"

namespace cohort::acl {

/// Where an error surfaced, for the codes whose ACL number depends on it.
enum class Site {
  kGeneral,
  kStreamSync,  ///< stream or device synchronisation: kTimeout -> 507046
  kEventSync,   ///< event synchronisation: kTimeout -> 507047
  kEventTime,   ///< elapsed time: kInvalidUsage (never recorded) -> 107006
  kFree,        ///< aclrtFree / aclrtFreeHost: bad or freed pointer -> 207002
};

/// The ACL number for a failed Status's code at `site` (ACL_SUCCESS for kSuccess).
aclError toAclError(ErrorCode code, Site site);

/// "ACL_ERROR_RT_MEMORY_ALLOCATION" for any number this layer returns; "unknown
/// error" otherwise.
const char* aclErrorName(aclError code);

}  // namespace cohort::acl
