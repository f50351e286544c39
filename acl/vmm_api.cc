// Virtual memory (aclrtReserveMemAddress ... aclrtUnmapMem) over the runtime's
// reservations and physical allocations (runtime/vmm.h): mapped addresses are device
// memory of the allocation's device for copies and collectives. Access, retained
// handles and address ranges: vmm_ext_api.cc; sharing between processes:
// vmm_share_api.cc.
#include <cstdint>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/unsupported.h"
#include "acl/vmm_util.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

Status zeroFlags(const char* function, uint64_t flags, uint64_t allowed = 0) {
  if ((flags & ~allowed) == 0) return Status::Ok();
  return cohort::makeError(ErrorCode::kInvalidArgument, "{}: flags {:#x} are not supported "
                           "(allowed: {:#x})", function, flags, allowed);
}

// What the emulated devices offer: pinned device memory, addressed by device id.
Status checkProp(const char* function, const aclrtPhysicalMemProp* prop) {
  if (prop == nullptr) return nullArgument(function, "prop");
  if (prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: prop->location.type {} is not ACL_MEM_LOCATION_TYPE_DEVICE "
                             "(the only physical memory an emulated device has)",
                             function, static_cast<int>(prop->location.type));
  }
  if (prop->handleType != ACL_MEM_HANDLE_TYPE_NONE &&
      prop->handleType != ACL_MEM_HANDLE_TYPE_POSIX) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: prop->handleType {} is not valid",
                             function, static_cast<int>(prop->handleType));
  }
  if (prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: prop->allocationType {} is not ACL_MEM_ALLOCATION_TYPE_PINNED",
                             function, static_cast<int>(prop->allocationType));
  }
  return Status::Ok();
}

}  // namespace

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp* prop,
                                          aclrtMemGranularityOptions option, size_t* granularity) {
  const char* fn = "aclrtMemGetAllocationGranularity";
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(checkProp(fn, prop));
    if (granularity == nullptr) return nullArgument(fn, "granularity");
    if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM &&
        option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: option {} is not valid", fn,
                               static_cast<int>(option));
    }
    *granularity = rt::vmmGranularity();
    return Status::Ok();
  });
}

namespace {
constexpr std::size_t kGiB = std::size_t{1} << 30;

Status reserve(const char* fn, void** virPtr, size_t size, size_t alignment, void* expectPtr,
               uint64_t flags) {
  if (virPtr == nullptr) return nullArgument(fn, "virPtr");
  // Flag 1 asks for addresses the device's page table can take huge pages in: every
  // reservation here is aligned to the (2 MiB) granularity anyway.
  COHORT_RETURN_IF_ERROR(zeroFlags(fn, flags, 1));
  const auto start = reinterpret_cast<std::uintptr_t>(expectPtr);
  if (expectPtr != nullptr && size > kGiB && start % kGiB != 0) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: expectPtr {} must be aligned to 1 GiB for more than 1 GiB", fn,
                             expectPtr);
  }
  return withName(fn, rt::vmmReserve(size, alignment, expectPtr, virPtr));
}
}  // namespace

aclError aclrtReserveMemAddress(void** virPtr, size_t size, size_t alignment, void* expectPtr,
                                uint64_t flags) {
  const char* fn = "aclrtReserveMemAddress";
  return apiCall(fn, [&]() -> Outcome {
    return reserve(fn, virPtr, size, alignment, expectPtr, flags);
  });
}

// CANN's "UC memory" is device memory that some operators read and write bypassing the
// L2 cache; addresses reserved here must never become that. An emulated device has no
// cache to bypass (its memory is the host's, which the CPU caches keep coherent), so
// no reservation ever is: this is aclrtReserveMemAddress with CANN's own rules (an
// address the program chose, whole GiB).
aclError aclrtReserveMemAddressNoUCMemory(void** virPtr, size_t size, size_t alignment,
                                          void* expectPtr, uint64_t flags) {
  const char* fn = "aclrtReserveMemAddressNoUCMemory";
  if (!cohort::acl::isInitialized()) return cohort::acl::notInitialized(fn);
  if (expectPtr == nullptr && virPtr != nullptr) {
    return cohort::acl::notSupported(fn, "the system does not choose the addresses: expectPtr "
                                         "must name them (as in CANN)");
  }
  return apiCall(fn, [&]() -> Outcome {
    if (size == 0 || size % kGiB != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: size {} is not a positive multiple of 1 GiB", fn, size);
    }
    return reserve(fn, virPtr, size, alignment, expectPtr, flags);
  });
}

aclError aclrtReleaseMemAddress(void* virPtr) {
  const char* fn = "aclrtReleaseMemAddress";
  return apiCall(fn, [&]() -> Outcome {
    if (virPtr == nullptr) return nullArgument(fn, "virPtr");
    return rt::vmmRelease(virPtr);
  });
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size,
                             const aclrtPhysicalMemProp* prop, uint64_t flags) {
  const char* fn = "aclrtMallocPhysical";
  return apiCall(fn, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    COHORT_RETURN_IF_ERROR(checkProp(fn, prop));
    COHORT_RETURN_IF_ERROR(zeroFlags(fn, flags));
    rt::PhysicalMemory* mem = nullptr;
    COHORT_RETURN_IF_ERROR(rt::vmmCreate(static_cast<int>(prop->location.id), size,
                                         cohort::acl::packAttributes(*prop), &mem));
    *handle = mem;
    return Status::Ok();
  });
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  const char* fn = "aclrtFreePhysical";
  return apiCall(fn, Site::kFree, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    return rt::vmmDestroy(static_cast<rt::PhysicalMemory*>(handle));
  });
}

namespace {
Outcome map(const char* fn, void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
            uint64_t flags, rt::VmmAccess access) {
  if (virPtr == nullptr) return nullArgument(fn, "virPtr");
  if (handle == nullptr) return nullArgument(fn, "handle");
  COHORT_RETURN_IF_ERROR(zeroFlags(fn, flags));
  return rt::vmmMap(virPtr, size, offset, static_cast<rt::PhysicalMemory*>(handle), access);
}
}  // namespace

aclError aclrtMapMem(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                     uint64_t flags) {
  const char* fn = "aclrtMapMem";
  return apiCall(fn, [&]() -> Outcome {
    return map(fn, virPtr, size, offset, handle, flags, rt::VmmAccess::kReadWrite);
  });
}

aclError aclrtMemMapNoAccess(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                             uint64_t flags) {
  const char* fn = "aclrtMemMapNoAccess";
  return apiCall(fn, [&]() -> Outcome {
    return map(fn, virPtr, size, offset, handle, flags, rt::VmmAccess::kNone);
  });
}

aclError aclrtUnmapMem(void* virPtr) {
  const char* fn = "aclrtUnmapMem";
  return apiCall(fn, [&]() -> Outcome {
    if (virPtr == nullptr) return nullArgument(fn, "virPtr");
    return rt::vmmUnmap(virPtr);
  });
}
