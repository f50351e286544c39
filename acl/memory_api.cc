// Memory (aclrtMalloc ... aclrtGetMemInfo).
#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
#include "acl/entry_names.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

// The runtime knows four directions and "default"; the ACL-only kinds are
// variants of host-to-device and device-to-device.
Outcome toKind(const char* function, aclrtMemcpyKind kind, rt::MemcpyKind* out) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
      *out = rt::MemcpyKind::kHostToHost;
      break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
      *out = rt::MemcpyKind::kHostToDevice;
      break;
    case ACL_MEMCPY_DEVICE_TO_HOST:
      *out = rt::MemcpyKind::kDeviceToHost;
      break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE:
      *out = rt::MemcpyKind::kDeviceToDevice;
      break;
    case ACL_MEMCPY_DEFAULT:
      *out = rt::MemcpyKind::kDefault;
      break;
    default:
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: kind {} is not an aclrtMemcpyKind (0..7)", function,
                               static_cast<int>(kind));
  }
  return Status::Ok();
}

// Plain (pageable) host memory: neither device memory nor aclrtMallocHost memory.
bool isPageableHost(const void* p) {
  rt::PointerAttributes attributes;
  return rt::pointerGetAttributes(p, &attributes).ok() && !attributes.isDevice &&
         !attributes.isPinnedHost && !attributes.isRegistered;
}

bool isDevice(const void* p) {
  rt::PointerAttributes attributes;
  return rt::pointerGetAttributes(p, &attributes).ok() && attributes.isDevice;
}

Outcome memcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                    aclrtStream stream) {
  const char* fn = "aclrtMemcpyAsync";
  rt::MemcpyKind rtKind;
  ACL_RETURN_IF_FAILED(toKind(fn, kind, &rtKind));
  const bool hostToHost = rtKind == rt::MemcpyKind::kHostToHost ||
                          (rtKind == rt::MemcpyKind::kDefault && !isDevice(dst) && !isDevice(src));
  if (hostToHost) {
    return cohort::makeError(ErrorCode::kNotSupported,
                             "{}: host-to-host copies are not "
                             "asynchronous on a device stream (use memcpy or aclrtMemcpy)",
                             fn);
  }
  if (stream == nullptr) ACL_RETURN_IF_FAILED(requireDevice(fn));
  COHORT_RETURN_IF_ERROR(rt::memcpyAsync(dst, destMax, src, count, rtKind, toStream(stream)));
  // With pageable host memory the call returns after the copy, as AscendCL's does:
  // the caller may reuse or free its buffer at once.
  if (count > 0 && (isPageableHost(dst) || isPageableHost(src))) {
    return rt::streamSynchronize(toStream(stream), -1);
  }
  return Status::Ok();
}

}  // namespace

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return apiCall("aclrtMalloc", [&]() -> Outcome {
    if (devPtr == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "aclrtMalloc: devPtr is null");
    }
    ACL_RETURN_IF_FAILED(requireDevice("aclrtMalloc"));
    return rt::deviceMalloc(devPtr, size);  // every policy gives the same memory
  });
}

aclError aclrtFree(void* devPtr) {
  return apiCall("aclrtFree", Site::kFree, [&]() -> Outcome { return rt::deviceFree(devPtr); });
}

// DVPP memory (acl/ops/acl_dvpp.h): no media engine reads it here, so it is device
// memory as aclrtMalloc gives it.
aclError acldvppMalloc(void** devPtr, size_t size) {
  return apiCall("acldvppMalloc", [&]() -> Outcome {
    if (devPtr == nullptr) return nullArgument("acldvppMalloc", "devPtr");
    ACL_RETURN_IF_FAILED(requireDevice("acldvppMalloc"));
    return withName("acldvppMalloc", rt::deviceMalloc(devPtr, size));
  });
}

aclError acldvppFree(void* devPtr) {
  return apiCall("acldvppFree", Site::kFree, [&]() -> Outcome {
    if (devPtr == nullptr) return nullArgument("acldvppFree", "devPtr");
    return withName("acldvppFree", rt::deviceFree(devPtr));
  });
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
  return apiCall("aclrtMallocHost", [&]() -> Outcome { return rt::hostMalloc(hostPtr, size); });
}

aclError aclrtFreeHost(void* hostPtr) {
  return apiCall("aclrtFreeHost", Site::kFree, [&]() -> Outcome { return rt::hostFree(hostPtr); });
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind) {
  return apiCall("aclrtMemcpy", [&]() -> Outcome {
    rt::MemcpyKind rtKind;
    ACL_RETURN_IF_FAILED(toKind("aclrtMemcpy", kind, &rtKind));
    // CANN documents kind as reserved here: the copy goes by the two pointers and
    // fails only when it cannot be made (a kind outside the enum is refused: not known).
    return rt::memcpy(dst, destMax, src, count, rt::MemcpyKind::kDefault);
  });
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream) {
  return apiCall("aclrtMemcpyAsync",
                 [&]() -> Outcome { return memcpyAsync(dst, destMax, src, count, kind, stream); });
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  return apiCall("aclrtMemset",
                 [&]() -> Outcome { return rt::memset(devPtr, maxCount, value, count); });
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream) {
  return apiCall("aclrtMemsetAsync", [&]() -> Outcome {
    if (stream == nullptr) ACL_RETURN_IF_FAILED(requireDevice("aclrtMemsetAsync"));
    return rt::memsetAsync(devPtr, maxCount, value, count, toStream(stream));
  });
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
  return apiCall("aclrtGetMemInfo", [&]() -> Outcome {
    if (static_cast<int>(attr) < ACL_DDR_MEM || static_cast<int>(attr) > ACL_MEM_P2P_HUGE1G) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtGetMemInfo: attr {} is not an aclrtMemAttr (0..{})",
                               static_cast<int>(attr), static_cast<int>(ACL_MEM_P2P_HUGE1G));
    }
    if (free == nullptr || total == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "aclrtGetMemInfo: free or total is null");
    }
    ACL_RETURN_IF_FAILED(requireDevice("aclrtGetMemInfo"));
    return rt::getMemInfo(free, total);  // one kind of emulated memory answers every attr
  });
}
