// Physical allocations shared between the processes of a node (aclrtMemExportTo /
// ImportFromShareableHandle, aclrtMemSetPidToShareableHandle and their V2 forms) over
// the runtime's vmmExport / vmmImport (runtime/vmm_share.cc). The shareable handle is
// the runtime's 64-bit number; V2 passes it through a uint64_t for the DEFAULT share
// type. FABRIC handles serve servers of a super node, which do not exist here.
#include <cstdint>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/unsupported.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

// V2's share types: DEFAULT is the V1 handle; FABRIC is answered by the caller.
Status checkShareType(const char* function, aclrtMemSharedHandleType shareType) {
  if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT) return Status::Ok();
  return cohort::makeError(ErrorCode::kInvalidArgument,
                           "{}: shareType {} is not an aclrtMemSharedHandleType", function,
                           static_cast<int>(shareType));
}

aclError fabric(const char* function) {
  return cohort::acl::notSupported(function, "FABRIC handles share memory across the servers of "
                                             "a super node; memory is shared within one node "
                                             "only (ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT)");
}

Outcome exportHandle(const char* fn, aclrtDrvMemHandle handle, uint64_t flags,
                     uint64_t* shareableHandle) {
  if (handle == nullptr) return nullArgument(fn, "handle");
  if (shareableHandle == nullptr) return nullArgument(fn, "shareableHandle");
  if (flags != ACL_RT_VMM_EXPORT_FLAG_DEFAULT &&
      flags != ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: flags {:#x} are not ACL_RT_VMM_EXPORT_FLAG_DEFAULT (0) or "
                             "ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION (1)", fn, flags);
  }
  return withName(fn, rt::vmmExport(static_cast<rt::PhysicalMemory*>(handle),
                                    flags == ACL_RT_VMM_EXPORT_FLAG_DEFAULT, shareableHandle));
}

Outcome setPids(const char* fn, uint64_t shareableHandle, const int32_t* pid, size_t pidNum) {
  if (pid == nullptr || pidNum == 0) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: pid is null or pidNum is 0", fn);
  }
  for (std::size_t i = 0; i < pidNum; ++i) {
    if (pid[i] <= 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: pid[{}] = {} is not a process",
                               fn, i, pid[i]);
    }
  }
  return withName(fn, rt::vmmSetImportPids(shareableHandle, pid, pidNum));
}

Outcome importHandle(const char* fn, uint64_t shareableHandle, int device,
                     aclrtDrvMemHandle* handle) {
  if (handle == nullptr) return nullArgument(fn, "handle");
  rt::PhysicalMemory* mem = nullptr;
  bool denied = false;
  Status s = withName(fn, rt::vmmImport(shareableHandle, device, &mem, &denied));
  if (denied) return Outcome(ACL_ERROR_RT_NO_PERMISSION, s);
  if (!s.ok()) return s;
  *handle = mem;
  return Status::Ok();
}

}  // namespace

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t* shareableHandle) {
  const char* fn = "aclrtMemExportToShareableHandle";
  return apiCall(fn, [&]() -> Outcome {
    if (handleType != ACL_MEM_HANDLE_TYPE_NONE) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: handleType {} must be ACL_MEM_HANDLE_TYPE_NONE (reserved)", fn,
                               static_cast<int>(handleType));
    }
    return exportHandle(fn, handle, flags, shareableHandle);
  });
}

aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags,
                                           aclrtMemSharedHandleType shareType,
                                           void* shareableHandle) {
  const char* fn = "aclrtMemExportToShareableHandleV2";
  if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC && cohort::acl::isInitialized()) {
    return fabric(fn);
  }
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(checkShareType(fn, shareType));
    return exportHandle(fn, handle, flags, static_cast<uint64_t*>(shareableHandle));
  });
}

aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t* pid, size_t pidNum) {
  const char* fn = "aclrtMemSetPidToShareableHandle";
  return apiCall(fn, [&]() -> Outcome { return setPids(fn, shareableHandle, pid, pidNum); });
}

aclError aclrtMemSetPidToShareableHandleV2(void* shareableHandle,
                                           aclrtMemSharedHandleType shareType, int32_t* pid,
                                           size_t pidNum) {
  const char* fn = "aclrtMemSetPidToShareableHandleV2";
  if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC && cohort::acl::isInitialized()) {
    return fabric(fn);
  }
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(checkShareType(fn, shareType));
    if (shareableHandle == nullptr) return nullArgument(fn, "shareableHandle");
    return setPids(fn, *static_cast<const uint64_t*>(shareableHandle), pid, pidNum);
  });
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                           aclrtDrvMemHandle* handle) {
  const char* fn = "aclrtMemImportFromShareableHandle";
  return apiCall(fn, [&]() -> Outcome {
    return importHandle(fn, shareableHandle, deviceId, handle);
  });
}

aclError aclrtMemImportFromShareableHandleV2(void* shareableHandle,
                                             aclrtMemSharedHandleType shareType, uint64_t flags,
                                             aclrtDrvMemHandle* handle) {
  const char* fn = "aclrtMemImportFromShareableHandleV2";
  if (shareType == ACL_MEM_SHARE_HANDLE_TYPE_FABRIC && cohort::acl::isInitialized()) {
    return fabric(fn);
  }
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(checkShareType(fn, shareType));
    if (shareableHandle == nullptr) return nullArgument(fn, "shareableHandle");
    if (flags != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: flags {:#x} must be 0", fn,
                               flags);
    }
    // No device argument: the handle is for the calling thread's current device.
    ACL_RETURN_IF_FAILED(cohort::acl::requireDevice(fn));
    int device = -1;
    COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
    return importHandle(fn, *static_cast<const uint64_t*>(shareableHandle), device, handle);
  });
}
