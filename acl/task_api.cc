// Built-in tasks that need no kernel (aclrtReduceAsync, aclrtProfTrace,
// aclrtTaskUpdateAsync); aclrtRandomNumAsync is in random_api.cc.
#include <cstring>
#include <string>

#include "acl/entry_names.h"
#include "common/trace.h"
#include "kernels/reduce.h"

namespace {

constexpr int32_t kProfTraceBytes = 18;  // CANN pads a marker's data to this and refuses more

// The element type of an aclDataType aclrtReduceAsync takes; false for others.
bool typeFor(aclDataType type, cohort::DataType* out) {
  switch (type) {
    case ACL_INT8: *out = cohort::DataType::kInt8; return true;
    case ACL_INT16: *out = cohort::DataType::kInt16; return true;
    case ACL_INT32: *out = cohort::DataType::kInt32; return true;
    case ACL_UINT32: *out = cohort::DataType::kUint32; return true;
    case ACL_FLOAT: *out = cohort::DataType::kFloat32; return true;
    case ACL_FLOAT16: *out = cohort::DataType::kFloat16; return true;
    case ACL_BF16: *out = cohort::DataType::kBFloat16; return true;
    default: return false;
  }
}

// `bytes` at p lie in device memory of `device` (imported memory: of no device).
Outcome checkBuffer(const char* fn, const char* role, const void* p, std::size_t bytes,
                    int device) {
  rt::PointerAttributes a;
  COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(p, &a));
  if (!a.isDevice) return invalidArgument(fn, "{} {} is not device memory", role, p);
  if (a.device >= 0 && a.device != device) {
    return invalidArgument(fn, "{} {} is memory of device {}, the stream's is device {}", role, p,
                           a.device, device);
  }
  if (a.allocationBase == nullptr) {
    return invalidArgument(fn, "{} {} lies in no live allocation (freed?)", role, p);
  }
  if (static_cast<const char*>(p) + bytes >
      static_cast<const char*>(a.allocationBase) + a.allocationSize) {
    return invalidArgument(fn, "{} bytes at {} {} overrun its allocation ({} bytes at {})", bytes,
                           role, p, a.allocationSize, a.allocationBase);
  }
  return Status::Ok();
}

}  // namespace

aclError aclrtReduceAsync(void* dst, const void* src, uint64_t count, aclrtReduceKind kind,
                          aclDataType type, aclrtStream stream, void* reserve) {
  const char* fn = "aclrtReduceAsync";
  return apiCall(fn, [&]() -> Outcome {
    if (reserve != nullptr) return invalidArgument(fn, "reserve must be NULL");
    if (dst == nullptr) return nullArgument(fn, "dst");
    if (src == nullptr) return nullArgument(fn, "src");
    cohort::ReduceOp op = cohort::ReduceOp::kSum;
    switch (kind) {
      case ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM:
        op = cohort::ReduceOp::kSum;
        break;
      case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX:
        op = cohort::ReduceOp::kMax;
        break;
      case ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN:
        op = cohort::ReduceOp::kMin;
        break;
      case ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL:
        return unsupportedCase(fn, "ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL has no documented result");
      default:
        return invalidArgument(fn, "kind {} is not an aclrtReduceKind (10..13)",
                               static_cast<int>(kind));
    }
    cohort::DataType elementType = cohort::DataType::kInt8;
    if (!typeFor(type, &elementType)) {
      return invalidArgument(fn,
                             "type {} is not reducible here (ACL_INT8, ACL_INT16, ACL_INT32, "
                             "ACL_UINT32, ACL_FLOAT16, ACL_BF16, ACL_FLOAT)",
                             static_cast<int>(type));
    }
    const std::size_t size = cohort::dataTypeSize(elementType);
    if (count % size != 0) {
      return invalidArgument(fn, "count {} bytes is not a whole number of {}-byte elements", count,
                             size);
    }
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    int device = -1;
    COHORT_RETURN_IF_ERROR(rt::streamGetDevice(toStream(stream), &device));
    if (count == 0) return Status::Ok();
    ACL_RETURN_IF_FAILED(checkBuffer(fn, "dst", dst, count, device));
    ACL_RETURN_IF_FAILED(checkBuffer(fn, "src", src, count, device));
    // The collectives' kernels (kernels/reduce.h): the same rounding and special values.
    const cohort::kernels::Reduction& r = cohort::kernels::reductionFor(elementType, op);
    const std::size_t bytes = count;
    return rt::launchKernel(toStream(stream), [&r, dst, src, bytes](rt::Stream*) {
      r.fn(dst, dst, src, bytes, r.context);
      return Status::Ok();
    });
  });
}

aclError aclrtProfTrace(void* userdata, int32_t length, aclrtStream stream) {
  const char* fn = "aclrtProfTrace";
  return apiCall(fn, [&]() -> Outcome {
    if (userdata == nullptr) return nullArgument(fn, "userdata");
    if (length <= 0 || length > kProfTraceBytes) {
      return invalidArgument(fn, "length {} is out of range [1, {}]", length, kProfTraceBytes);
    }
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    unsigned char data[kProfTraceBytes] = {};
    std::memcpy(data, userdata, static_cast<std::size_t>(length));
    std::string hex;
    for (unsigned char c : data) hex += fmt::format("{:02x}", c);
    return rt::launchKernel(toStream(stream), [hex](rt::Stream*) {
      // On the stream's track, when the stream gets there (recorded only while a trace
      // or a profiling session is on).
      if (cohort::trace::enabled()) {
        cohort::trace::instant("prof", "aclrtProfTrace", fmt::format("\"data\":\"{}\"", hex));
      }
      return Status::Ok();
    });
  });
}

aclError aclrtTaskUpdateAsync(aclrtStream taskStream, uint32_t taskId, aclrtTaskUpdateInfo* info,
                              aclrtStream execStream) {
  (void)taskStream, (void)taskId, (void)info, (void)execStream;
  return apiCall("aclrtTaskUpdateAsync", [&]() -> Outcome {
    return unsupportedCase("aclrtTaskUpdateAsync",
                        "tasks are updated on streams bound to a model runtime instance, whose "
                        "tasks Cohort does not keep");
  });
}
