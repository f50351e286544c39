/* The aclnn operator library's base (libnnopbase.so): tensors, scalars and the
 * executors that the two-phase operator calls pass between them. Cohort's subset of
 * CANN's aclnn, written from its documentation. */
#ifndef COHORT_ACLNN_ACL_META_H_
#define COHORT_ACLNN_ACL_META_H_

#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t aclnnStatus;

#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001   /* a required pointer is null */
#define ACLNN_ERR_PARAM_INVALID 161002   /* shapes, types or values that do not fit */
#define ACLNN_ERR_RUNTIME_ERROR 361001   /* the runtime refused the launch */
#define ACLNN_ERR_INNER 561000           /* anything else */

typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclOpExecutor aclOpExecutor;

/* A view of device memory: viewDims with strides (in elements) from offset (in
 * elements) into tensorData, whose storage has storageDims. */
aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t* stride, int64_t offset, aclFormat format,
                           const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData);
aclnnStatus aclDestroyTensor(const aclTensor* tensor);
/* A host value of dataType, copied. */
aclScalar* aclCreateScalar(void* value, aclDataType dataType);
aclnnStatus aclDestroyScalar(const aclScalar* scalar);
/* The view's shape: *viewDims (freed with delete[]) and its length. */
aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum);
aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType);
/* An executor is used by one second-phase call and freed there, unless made
 * repeatable: then it serves every call until aclDestroyAclOpExecutor. */
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor);
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor);

#ifdef __cplusplus
}
#endif

#endif  // COHORT_ACLNN_ACL_META_H_
