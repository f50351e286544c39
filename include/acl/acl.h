/*
 * Cohort's ACL-compatible C API: the header programs include (acl/acl.h).
 *
 *   aclInit(NULL);  aclrtSetDevice(0);  ...  aclrtResetDevice(0);  aclFinalize();
 *
 * Compile as for Ascend:
 *   g++ test.cpp -I$ASCEND_HOME/include -L$ASCEND_HOME/lib64 -lascendcl
 * with ASCEND_HOME = Cohort's install prefix.
 */
#ifndef COHORT_ACL_ACL_H_
#define COHORT_ACL_ACL_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

/* aclInit, aclFinalize and aclGetRecentErrMsg are declared with the runtime API
 * (acl/acl_rt_system.h, through acl/acl_rt.h), as in CANN. */

#endif /* COHORT_ACL_ACL_H_ */
