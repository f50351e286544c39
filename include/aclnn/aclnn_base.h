/* What every aclnn operator header includes. */
#ifndef COHORT_ACLNN_ACLNN_BASE_H_
#define COHORT_ACLNN_ACLNN_BASE_H_

#include "aclnn/acl_meta.h"

#endif  // COHORT_ACLNN_ACLNN_BASE_H_
