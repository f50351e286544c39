#include "hccl/arguments.h"

#include <fmt/format.h>

#include "cohort/runtime.h"
#include "common/error.h"

namespace cohort::hccl {

std::string pointerText(const void* p) { return fmt::format("{}", p); }

Outcome lookupComm(const char* function, HcclComm comm, std::shared_ptr<CommEntry>* out) {
  if (comm == nullptr) return nullPointer(function, "comm");
  *out = CommRegistry::get().find(comm);
  if (*out == nullptr) {
    return invalidParameter(function, pointerText(comm), "comm",
                            "a communicator made by an HcclCommInit* call or "
                            "HcclCreateSubCommConfig and not destroyed");
  }
  return Status::Ok();
}

Outcome beginCall(const char* function, HcclComm comm, aclrtStream stream, CallContext* out) {
  HCCL_RETURN_IF_FAILED(lookupComm(function, comm, &out->entry));
  if (stream == nullptr) return nullPointer(function, "stream");
  if (out->entry->suspended.load()) {
    return Outcome(HCCL_E_SUSPENDING,
                   makeError(ErrorCode::kUnavailable, "{}: communicator '{}' is suspended "
                             "(HcclCommSuspend); HcclCommResume it first", function,
                             out->entry->name));
  }
  out->stream = static_cast<runtime::Stream*>(stream);  // aclrtStream is the runtime's stream
  return Status::Ok();
}

Outcome toDataType(const char* function, HcclDataType type, const char* parameter, DataType* out) {
  switch (type) {
    case HCCL_DATA_TYPE_INT8:
      *out = DataType::kInt8;
      return Status::Ok();
    case HCCL_DATA_TYPE_INT16:
      *out = DataType::kInt16;
      return Status::Ok();
    case HCCL_DATA_TYPE_INT32:
      *out = DataType::kInt32;
      return Status::Ok();
    case HCCL_DATA_TYPE_FP16:
      *out = DataType::kFloat16;
      return Status::Ok();
    case HCCL_DATA_TYPE_FP32:
      *out = DataType::kFloat32;
      return Status::Ok();
    case HCCL_DATA_TYPE_INT64:
      *out = DataType::kInt64;
      return Status::Ok();
    case HCCL_DATA_TYPE_UINT64:
      *out = DataType::kUint64;
      return Status::Ok();
    case HCCL_DATA_TYPE_UINT8:
      *out = DataType::kUint8;
      return Status::Ok();
    case HCCL_DATA_TYPE_UINT16:
      *out = DataType::kUint16;
      return Status::Ok();
    case HCCL_DATA_TYPE_UINT32:
      *out = DataType::kUint32;
      return Status::Ok();
    case HCCL_DATA_TYPE_FP64:
      *out = DataType::kFloat64;
      return Status::Ok();
    case HCCL_DATA_TYPE_BFP16:
      *out = DataType::kBFloat16;
      return Status::Ok();
    case HCCL_DATA_TYPE_INT128:
    case HCCL_DATA_TYPE_HIF8:
    case HCCL_DATA_TYPE_FP8E4M3:
    case HCCL_DATA_TYPE_FP8E5M2:
    case HCCL_DATA_TYPE_FP8E8M0:
      return Outcome(HCCL_E_NOT_SUPPORT,
                     makeError(ErrorCode::kNotSupported,
                               "{}: {} = {} (INT128, HIF8 or FP8) is not supported by Cohort; "
                               "supported: INT8..BFP16 (0..11)",
                               function, parameter, static_cast<int>(type)));
    default:
      // HCCL answers a value outside its enum HCCL_E_NOT_SUPPORT (HcomCheckDataType).
      return invalidParameter(function, std::to_string(static_cast<int>(type)), parameter,
                              "an HcclDataType from HCCL_DATA_TYPE_INT8 (0) to "
                              "HCCL_DATA_TYPE_BFP16 (11)",
                              HCCL_E_NOT_SUPPORT);
  }
}

Outcome toReduceOp(const char* function, HcclReduceOp op, ReduceOp* out) {
  switch (op) {
    case HCCL_REDUCE_SUM:
      *out = ReduceOp::kSum;
      return Status::Ok();
    case HCCL_REDUCE_PROD:
      *out = ReduceOp::kProd;
      return Status::Ok();
    case HCCL_REDUCE_MAX:
      *out = ReduceOp::kMax;
      return Status::Ok();
    case HCCL_REDUCE_MIN:
      *out = ReduceOp::kMin;
      return Status::Ok();
    default:
      // HCCL answers a value outside its enum HCCL_E_NOT_SUPPORT (HcomCheckReductionOp).
      return invalidParameter(function, std::to_string(static_cast<int>(op)), "op",
                              "HCCL_REDUCE_SUM (0), HCCL_REDUCE_PROD (1), HCCL_REDUCE_MAX (2) or "
                              "HCCL_REDUCE_MIN (3)",
                              HCCL_E_NOT_SUPPORT);
  }
}

Outcome checkRank(const char* function, std::uint32_t value, const char* parameter, int size) {
  if (value < static_cast<std::uint32_t>(size)) return Status::Ok();
  return invalidParameter(function, std::to_string(value), parameter,
                          fmt::format("a rank in [0, {}) (the rank size)", size));
}

Outcome requirePointers(const char* function,
                        std::initializer_list<std::pair<const char*, const void*>> pointers) {
  for (const auto& [name, p] : pointers) {
    if (p == nullptr) return nullPointer(function, name);
  }
  return Status::Ok();
}

Outcome requireDeviceReachable(const char* function,
                               std::initializer_list<std::pair<const char*, const void*>> buffers) {
  for (const auto& [name, p] : buffers) {
    if (p == nullptr) continue;
    runtime::PointerAttributes a;
    COHORT_RETURN_IF_ERROR(runtime::pointerGetAttributes(p, &a));
    if (a.isDevice || a.isPinnedHost || a.isRegistered || a.isManaged) continue;
    return invalidParameter(function, pointerText(p), name,
                            "memory a device can reach: device memory (aclrtMalloc) or host "
                            "memory made for devices (aclrtMallocHost, aclrtHostRegister); "
                            "this is plain host memory");
  }
  return Status::Ok();
}

Outcome requireBuffers(const char* function,
                       std::initializer_list<std::pair<const char*, const void*>> buffers) {
  HCCL_RETURN_IF_FAILED(requirePointers(function, buffers));
  return requireDeviceReachable(function, buffers);
}

std::vector<std::size_t> readCounts(const void* counts, int n) {
  const auto* p = static_cast<const std::uint64_t*>(counts);
  return std::vector<std::size_t>(p, p + n);
}

}  // namespace cohort::hccl
