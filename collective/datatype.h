// Element types: their validity and which take an average. The kernels over them
// live in kernels/ (reduce.h, convert.h).
#pragma once

#include "cohort/communicator.h"

namespace cohort::collective {

bool isFloat(DataType type);
bool validType(DataType type);
bool validOp(ReduceOp op);

}  // namespace cohort::collective
