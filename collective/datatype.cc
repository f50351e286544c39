#include "collective/datatype.h"

namespace cohort::collective {

bool validType(DataType type) {
  return static_cast<int>(type) >= 0 && static_cast<int>(type) < kDataTypeCount;
}
bool validOp(ReduceOp op) {
  return static_cast<int>(op) >= 0 && static_cast<int>(op) < kReduceOpCount;
}
bool isFloat(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat32 ||
         t == DataType::kFloat64;
}

}  // namespace cohort::collective
