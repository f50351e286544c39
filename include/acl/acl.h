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

#ifdef __cplusplus
extern "C" {
#endif

/* Initialises the runtime. configPath is NULL or a JSON file: {} or an object with
 * the optional keys "err_msg_mode" ("0": messages per thread, the default; "1":
 * per process) and "defaultDevice": {"default_device": "N"} (the device a thread
 * uses until it sets one). A second call returns ACL_ERROR_REPEAT_INITIALIZE. */
ACL_FUNC_VISIBILITY aclError aclInit(const char* configPath);
/* Releases every device, context and event still held through this API. A second
 * call returns ACL_ERROR_REPEAT_FINALIZE. aclInit may be called again afterwards. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
/* The messages of the calling thread's failed calls (the process's, with
 * err_msg_mode "1") since the last call, newest first, one per line; NULL when
 * there are none. The text stays valid until the thread calls it again. */
ACL_FUNC_VISIBILITY const char* aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_H_ */
