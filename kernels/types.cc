// The public functions on element types (include/cohort/communicator.h): names, sizes,
// and the host conversion between fp32 and the 16-bit float types.
#include <cstring>

#include "cohort/communicator.h"
#include "common/error.h"
#include "kernels/convert.h"

namespace cohort {

std::size_t dataTypeSize(DataType type) {
  static const std::size_t kSizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};
  const int i = static_cast<int>(type);
  return i >= 0 && i < kDataTypeCount ? kSizes[i] : 0;
}

const char* dataTypeName(DataType type) {
  static const char* kNames[] = {"int8",  "uint8",  "int16",   "uint16",   "int32", "uint32",
                                 "int64", "uint64", "float16", "bfloat16", "float", "double"};
  const int i = static_cast<int>(type);
  return i >= 0 && i < kDataTypeCount ? kNames[i] : "unknown";
}

const char* reduceOpName(ReduceOp op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < kReduceOpCount ? kNames[i] : "unknown";
}

Status convertElements(const void* src, DataType srcType, void* dst, DataType dstType,
                       std::size_t count) {
  auto half = [](DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; };
  if (count > 0 && (src == nullptr || dst == nullptr)) {
    return recordError(Status(ErrorCode::kInvalidArgument, "convertElements: null buffer"));
  }
  if (srcType == dstType && dataTypeSize(srcType) > 0) {
    if (count > 0) std::memcpy(dst, src, count * dataTypeSize(srcType));
  } else if (half(srcType) && dstType == DataType::kFloat32) {
    kernels::toFloat(src, srcType, static_cast<float*>(dst), count);
  } else if (srcType == DataType::kFloat32 && half(dstType)) {
    kernels::fromFloat(static_cast<const float*>(src), dst, dstType, count);
  } else {
    return recordError(makeError(ErrorCode::kInvalidArgument,
                                 "convertElements: {} -> {} is not supported (float <-> "
                                 "float16 or bfloat16 only)",
                                 dataTypeName(srcType), dataTypeName(dstType)));
  }
  return Status::Ok();
}

}  // namespace cohort
