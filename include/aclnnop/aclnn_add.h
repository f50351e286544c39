/* aclnnAdd (libopapi.so): out = self + alpha * other, element-wise, with the shapes
 * broadcast as NumPy does. Two phases: GetWorkspaceSize checks the arguments and
 * makes the executor; aclnnAdd queues the computation on the stream. */
#ifndef COHORT_ACLNNOP_ACLNN_ADD_H_
#define COHORT_ACLNNOP_ACLNN_ADD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other,
                                     const aclScalar* alpha, aclTensor* out,
                                     uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // COHORT_ACLNNOP_ACLNN_ADD_H_
