/*
 * Cohort's ACL-compatible C API: the memory calls of CANN's media-processing
 * header (acl/ops/acl_dvpp.h). Media processing itself (channels, picture
 * descriptions, resize, JPEG and video codecs) needs DVPP hardware that Cohort does
 * not emulate, so those declarations are not provided; a program that uses only
 * DVPP memory builds and runs.
 */
#ifndef COHORT_ACL_OPS_ACL_DVPP_H_
#define COHORT_ACL_OPS_ACL_DVPP_H_

#include <stddef.h>

#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory of the current device that media processing may read and write:
 * the same memory as aclrtMalloc's here. ACL_ERROR_INVALID_PARAM for a null devPtr
 * or a size of 0; ACL_ERROR_RT_CONTEXT_NULL without a current device. */
ACL_FUNC_VISIBILITY aclError acldvppMalloc(void** devPtr, size_t size);
/* Releases memory from acldvppMalloc. */
ACL_FUNC_VISIBILITY aclError acldvppFree(void* devPtr);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_OPS_ACL_DVPP_H_ */
