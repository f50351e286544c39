// Virtual memory beyond mapping: the access of mappings (aclrtMemSetAccess /
// aclrtMemGetAccess: the page protection, which the runtime's copies check), handles
// retained from a mapped address and their properties, and the block an address lies
// in (aclrtMemGetAddressRange).
#include <string>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/vmm_util.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

// A location access can be given for: a device of this process, or the host.
Status checkLocation(const char* function, const std::string& name,
                     const aclrtMemLocation& location) {
  if (location.type == ACL_MEM_LOCATION_TYPE_HOST) return Status::Ok();
  if (location.type != ACL_MEM_LOCATION_TYPE_DEVICE) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: {}.type {} is not ACL_MEM_LOCATION_TYPE_DEVICE or "
                             "ACL_MEM_LOCATION_TYPE_HOST", function, name,
                             static_cast<int>(location.type));
  }
  int count = 0;
  COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
  if (location.id >= static_cast<std::uint32_t>(count)) {
    return cohort::makeError(ErrorCode::kInvalidDevice, "{}: {}.id {} is not a device (0..{})",
                             function, name, location.id, count - 1);
  }
  return Status::Ok();
}

}  // namespace

aclError aclrtMemSetAccess(void* virPtr, size_t size, aclrtMemAccessDesc* desc, size_t count) {
  const char* fn = "aclrtMemSetAccess";
  return apiCall(fn, [&]() -> Outcome {
    if (virPtr == nullptr) return nullArgument(fn, "virPtr");
    if (desc == nullptr || count == 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: desc is null or count is 0", fn);
    }
    // One address space for every device and the host: the pages get the widest access
    // any of them is given.
    int widest = ACL_RT_MEM_ACCESS_FLAGS_NONE;
    for (std::size_t i = 0; i < count; ++i) {
      const int flags = static_cast<int>(desc[i].flags);
      if (flags != ACL_RT_MEM_ACCESS_FLAGS_NONE && flags != ACL_RT_MEM_ACCESS_FLAGS_READ &&
          flags != ACL_RT_MEM_ACCESS_FLAGS_READWRITE) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: desc[{}].flags {} is not an aclrtMemAccessFlags value "
                                 "(0, 1 or 3)", fn, i, flags);
      }
      COHORT_RETURN_IF_ERROR(
          checkLocation(fn, fmt::format("desc[{}].location", i), desc[i].location));
      widest = flags > widest ? flags : widest;
    }
    return withName(fn, rt::vmmSetAccess(virPtr, size, static_cast<rt::VmmAccess>(widest)));
  });
}

aclError aclrtMemGetAccess(void* virPtr, aclrtMemLocation* location, uint64_t* flag) {
  const char* fn = "aclrtMemGetAccess";
  return apiCall(fn, [&]() -> Outcome {
    if (virPtr == nullptr) return nullArgument(fn, "virPtr");
    if (location == nullptr) return nullArgument(fn, "location");
    if (flag == nullptr) return nullArgument(fn, "flag");
    COHORT_RETURN_IF_ERROR(checkLocation(fn, "location", *location));
    rt::VmmMapping mapping;
    COHORT_RETURN_IF_ERROR(withName(fn, rt::vmmLookup(virPtr, &mapping)));
    *flag = static_cast<uint64_t>(mapping.access);
    return Status::Ok();
  });
}

aclError aclrtMemRetainAllocationHandle(void* virPtr, aclrtDrvMemHandle* handle) {
  const char* fn = "aclrtMemRetainAllocationHandle";
  return apiCall(fn, [&]() -> Outcome {
    if (virPtr == nullptr) return nullArgument(fn, "virPtr");
    if (handle == nullptr) return nullArgument(fn, "handle");
    rt::PhysicalMemory* mem = nullptr;
    COHORT_RETURN_IF_ERROR(withName(fn, rt::vmmRetain(virPtr, &mem)));
    *handle = mem;
    return Status::Ok();
  });
}

aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle,
                                                   aclrtPhysicalMemProp* prop) {
  const char* fn = "aclrtMemGetAllocationPropertiesFromHandle";
  return apiCall(fn, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    if (prop == nullptr) return nullArgument(fn, "prop");
    rt::PhysicalMemoryInfo info;
    COHORT_RETURN_IF_ERROR(withName(fn, rt::vmmInfo(static_cast<const rt::PhysicalMemory*>(handle), &info)));
    *prop = cohort::acl::unpackAttributes(info.attributes, info.device);
    return Status::Ok();
  });
}

aclError aclrtMemGetAddressRange(void* ptr, void** pbase, size_t* psize) {
  const char* fn = "aclrtMemGetAddressRange";
  return apiCall(fn, [&]() -> Outcome {
    if (ptr == nullptr) return nullArgument(fn, "ptr");
    if (pbase == nullptr) return nullArgument(fn, "pbase");
    if (psize == nullptr) return nullArgument(fn, "psize");
    // Mapped addresses: the block is the mapping (one aclrtMapMem), not the run of
    // adjacent mappings that copies may cross.
    rt::VmmMapping mapping;
    if (rt::vmmLookup(ptr, &mapping).ok()) {
      *pbase = mapping.base;
      *psize = mapping.size;
      return Status::Ok();
    }
    rt::PointerAttributes a;
    COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(ptr, &a));
    if (a.allocationBase == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidPointer,
                               "{}: {} is not in a live allocation or mapping of the runtime "
                               "(plain host memory, or freed)", fn, ptr);
    }
    *pbase = a.allocationBase;
    *psize = a.allocationSize;
    return Status::Ok();
  });
}
