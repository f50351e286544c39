// Failed stream tasks as the ACL layer reports them: the exception callbacks
// (aclrtSetExceptionInfoCallback, aclrtExceptionInfoCallbackRegister) and each
// device's latest fault (aclrtGetErrorVerbose). Fed by the runtime's task-failure
// observer, which exception_api.cc installs when the library loads.
#pragma once

#include "acl/acl_rt.h"

namespace cohort::acl {

/// The kind of the latest task failure on `device` since it came up or was repaired
/// (ACL_RT_NO_ERROR if none). Thread-safe.
aclrtErrorType deviceFault(int device);
/// Forgets it: aclrtRepairError, and a device released (a fresh one has no faults).
void forgetDeviceFault(int device);
/// Forgets the faults of every device no longer set (aclFinalize released them).
void forgetReleasedDeviceFaults();

}  // namespace cohort::acl
