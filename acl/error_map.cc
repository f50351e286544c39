// The one table from cohort::ErrorCode to aclError. Choices, and why:
//
//   Cohort code          ACL number                              why
//   kSuccess             0       ACL_SUCCESS
//   kInvalidArgument     100000  ACL_ERROR_INVALID_PARAM          null / zero / out-of-range
//   argument kNotInitialized      100001  ACL_ERROR_UNINITIALIZE kInvalidDevice       107001
//   ACL_ERROR_RT_INVALID_DEVICEID    (no current device at all is
//                                                                 107002, checked by the layer)
//   kOutOfMemory         207001  ACL_ERROR_RT_MEMORY_ALLOCATION   documented as "only out of
//   memory" kInvalidPointer      107000  ACL_ERROR_RT_PARAM_INVALID       a copy/set with a foreign
//   or freed
//                        207002  ACL_ERROR_RT_MEMORY_FREE  (kFree) pointer; freeing one
//   kDoubleFree          207002  ACL_ERROR_RT_MEMORY_FREE
//   kInvalidMemcpyKind   107000  ACL_ERROR_RT_PARAM_INVALID       the kind contradicts the pointers
//                                                                 (an unknown kind value is 100000)
//   kSizeOverflow        100000  ACL_ERROR_INVALID_PARAM          count > destMax is a parameter
//   check kTimeout             507046  ACL_ERROR_RT_STREAM_SYNC_TIMEOUT (kStreamSync, and by
//   default: an
//                                                                 exec timeout surfaces at a sync)
//                        507047  ACL_ERROR_RT_EVENT_SYNC_TIMEOUT  (kEventSync)
//   kTaskFailed          507018  ACL_ERROR_RT_AICPU_EXCEPTION     a task (host code, like AI CPU
//                                                                 kernels) failed on the stream
//   kInvalidHandle       107017  ACL_ERROR_RT_INVALID_HANDLE      destroyed or foreign stream/event
//   kNotReady            507006  ACL_ERROR_RT_EVENT_NOT_COMPLETE  only events report it as an error
//   kVersionMismatch     500001  ACL_ERROR_FAILURE                program/library mismatch
//   kSystemError         500004  ACL_ERROR_DRV_FAILURE            the OS is the emulated driver
//   kInternal            500000  ACL_ERROR_INTERNAL_ERROR
//   kAborted             107022  ACL_ERROR_RT_DEVICE_TASK_ABORT
//   kRemoteError         507057  ACL_ERROR_RT_SUSPECT_REMOTE_ERROR
//   kInvalidUsage        100000  ACL_ERROR_INVALID_PARAM          call order wrong
//                        107006  ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID (kEventTime: never recorded)
//   kConfigError         100000  ACL_ERROR_INVALID_PARAM          an environment variable is
//   invalid kParseError          100006  ACL_ERROR_PARSE_FILE kValidationError     100008
//   ACL_ERROR_FILE_ATTR_INVALID kUnavailable         207005  ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
//   kConnectionError     507056  ACL_ERROR_RT_LINK_ERROR
//   kMismatch            500001  ACL_ERROR_FAILURE
//   kNotSupported        207000  ACL_ERROR_RT_FEATURE_NOT_SUPPORT
//   kCaptured            107030  ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT   an unsafe call during a capture
//                        107027  ACL_ERROR_RT_STREAM_CAPTURED  (kStreamSync: the stream captures)
//   kKernelFault         507035  ACL_ERROR_RT_VECTOR_CORE_EXCEPTION  a kernel trapped or overran its
//                                UB (AscendC vector kernels run on the 910B's vector cores)
#include "acl/error_map.h"

namespace cohort::acl {

aclError toAclError(ErrorCode code, Site site) {
  switch (code) {
    case ErrorCode::kSuccess:
      return ACL_SUCCESS;
    case ErrorCode::kInvalidArgument:
      return ACL_ERROR_INVALID_PARAM;
    case ErrorCode::kNotInitialized:
      return ACL_ERROR_UNINITIALIZE;
    case ErrorCode::kInvalidDevice:
      return ACL_ERROR_RT_INVALID_DEVICEID;
    case ErrorCode::kOutOfMemory:
      return ACL_ERROR_RT_MEMORY_ALLOCATION;
    case ErrorCode::kInvalidPointer:
      return site == Site::kFree ? ACL_ERROR_RT_MEMORY_FREE : ACL_ERROR_RT_PARAM_INVALID;
    case ErrorCode::kDoubleFree:
      return ACL_ERROR_RT_MEMORY_FREE;
    case ErrorCode::kInvalidMemcpyKind:
      return ACL_ERROR_RT_PARAM_INVALID;
    case ErrorCode::kSizeOverflow:
      return ACL_ERROR_INVALID_PARAM;
    case ErrorCode::kTimeout:
      return site == Site::kEventSync ? ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
                                      : ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
    case ErrorCode::kTaskFailed:
      return ACL_ERROR_RT_AICPU_EXCEPTION;
    case ErrorCode::kInvalidHandle:
      return ACL_ERROR_RT_INVALID_HANDLE;
    case ErrorCode::kNotReady:
      return ACL_ERROR_RT_EVENT_NOT_COMPLETE;
    case ErrorCode::kVersionMismatch:
      return ACL_ERROR_FAILURE;
    case ErrorCode::kSystemError:
      return ACL_ERROR_DRV_FAILURE;
    case ErrorCode::kInternal:
      return ACL_ERROR_INTERNAL_ERROR;
    case ErrorCode::kAborted:
      return ACL_ERROR_RT_DEVICE_TASK_ABORT;
    case ErrorCode::kRemoteError:
      return ACL_ERROR_RT_SUSPECT_REMOTE_ERROR;
    case ErrorCode::kInvalidUsage:
      return site == Site::kEventTime ? ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
                                      : ACL_ERROR_INVALID_PARAM;
    case ErrorCode::kConfigError:
      return ACL_ERROR_INVALID_PARAM;
    case ErrorCode::kParseError:
      return ACL_ERROR_PARSE_FILE;
    case ErrorCode::kValidationError:
      return ACL_ERROR_FILE_ATTR_INVALID;
    case ErrorCode::kUnavailable:
      return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    case ErrorCode::kConnectionError:
      return ACL_ERROR_RT_LINK_ERROR;
    case ErrorCode::kMismatch:
      return ACL_ERROR_FAILURE;
    case ErrorCode::kNotSupported:
      return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    case ErrorCode::kCaptured:
      return site == Site::kStreamSync ? ACL_ERROR_RT_STREAM_CAPTURED
                                       : ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT;
    case ErrorCode::kKernelFault:
      return ACL_ERROR_RT_VECTOR_CORE_EXCEPTION;
  }
  return ACL_ERROR_INTERNAL_ERROR;
}

}  // namespace cohort::acl
