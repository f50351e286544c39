/* aclnnMul (libopapi.so): out = self * other, element-wise, broadcast as aclnnAdd. */
#ifndef COHORT_ACLNNOP_ACLNN_MUL_H_
#define COHORT_ACLNNOP_ACLNN_MUL_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor* self, const aclTensor* other,
                                     aclTensor* out, uint64_t* workspaceSize,
                                     aclOpExecutor** executor);
aclnnStatus aclnnMul(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // COHORT_ACLNNOP_ACLNN_MUL_H_
