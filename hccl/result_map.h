// Cohort error codes -> HcclResult: one table (result_map.cc), and the names and
// texts of the results.
#pragma once

#include "cohort/status.h"
#include "hccl/hccl_types.h"

namespace cohort::hccl {

/// The HcclResult for a Status code (HCCL_SUCCESS for kSuccess).
HcclResult toHcclResult(ErrorCode code);

/// HCCL's text for a result ("parameter error"); "unknown error" for other values.
const char* resultString(HcclResult result);

/// "HCCL_E_PARA" for every value of HcclResult; "HCCL_E_RESERVED" for others.
const char* resultName(HcclResult result);

}  // namespace cohort::hccl
