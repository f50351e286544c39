// Exceptions of failed tasks and device faults: the exception callbacks and their
// info (aclrtSetExceptionInfoCallback ... aclrtGetErrorCodeFromExceptionInfo) and the
// latest fault of a device (aclrtGetErrorVerbose, aclrtRepairError). The memory UCE
// functions declared beside them are memory_ext_api.cc's.
#include <algorithm>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/error_map.h"
#include "acl/exceptions.h"
#include "cohort/runtime.h"
#include "common/error.h"
#include "common/log.h"

/// What a callback is given (aclrtExceptionInfo): lives on the reporting thread's
/// stack for the duration of the callbacks.
struct rtExceptionInfo {
  uint32_t taskId;
  uint32_t streamId;
  uint32_t threadId;
  uint32_t deviceId;
  uint32_t errorCode;
};

namespace {

using cohort::acl::checkDevice;

constexpr uint32_t kNoInfo = 0xFFFFFFFFu;

// Callbacks and faults. Process-wide, never destroyed: stream workers report
// failures until the process ends.
struct ExceptionState {
  std::mutex mu;
  aclrtExceptionInfoCallback setCallback = nullptr;    // aclrtSetExceptionInfoCallback
  std::vector<aclrtExceptionInfoCallback> registered;  // aclrtExceptionInfoCallbackRegister
  std::map<int, aclrtErrorType> faults;                // by device
};

ExceptionState& state() {
  static auto* s = new ExceptionState();
  return *s;
}

aclrtErrorType faultKind(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidPointer:
    case ErrorCode::kDoubleFree:
    case ErrorCode::kOutOfMemory:
    case ErrorCode::kSizeOverflow:
      return ACL_RT_ERROR_MEMORY;
    case ErrorCode::kConnectionError:
    case ErrorCode::kRemoteError:
      return ACL_RT_ERROR_LINK;
    case ErrorCode::kKernelFault:
      return ACL_RT_ERROR_AICORE;
    default:
      return ACL_RT_ERROR_OTHERS;
  }
}

// The runtime's task-failure observer: records the fault, then calls the callbacks
// on this (the failing task's) thread, without the lock.
void onTaskFailure(const rt::TaskFailure& failure) {
  rtExceptionInfo info;
  info.taskId = static_cast<uint32_t>(failure.taskIndex);
  info.streamId = static_cast<uint32_t>(failure.streamId);
  info.threadId = failure.threadId;
  info.deviceId = static_cast<uint32_t>(failure.device);
  info.errorCode = static_cast<uint32_t>(
      cohort::acl::toAclError(failure.status.code(), cohort::acl::Site::kGeneral));
  std::vector<aclrtExceptionInfoCallback> callbacks;
  {
    ExceptionState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.faults[failure.device] = faultKind(failure.status.code());
    if (s.setCallback != nullptr) callbacks.push_back(s.setCallback);
    callbacks.insert(callbacks.end(), s.registered.begin(), s.registered.end());
  }
  for (aclrtExceptionInfoCallback callback : callbacks) callback(&info);
}

// Installed when the library loads, so that faults are known before any callback is.
const bool kObserverInstalled = [] {
  rt::setTaskFailureObserver(onTaskFailure);
  return true;
}();

}  // namespace

namespace cohort::acl {

aclrtErrorType deviceFault(int device) {
  ExceptionState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.faults.find(device);
  return it == s.faults.end() ? ACL_RT_NO_ERROR : it->second;
}

void forgetDeviceFault(int device) {
  ExceptionState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.faults.erase(device);
}

void forgetReleasedDeviceFaults() {
  ExceptionState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  for (auto it = s.faults.begin(); it != s.faults.end();) {
    rt::DeviceInfo info;
    const bool released = rt::getDeviceInfo(it->first, &info).ok() && info.referenceCount == 0;
    it = released ? s.faults.erase(it) : std::next(it);
  }
}

}  // namespace cohort::acl

aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback) {
  return apiCall("aclrtSetExceptionInfoCallback", [&]() -> Outcome {
    (void)kObserverInstalled;
    ExceptionState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.setCallback = callback;
    return Status::Ok();
  });
}

aclError aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback) {
  const char* fn = "aclrtExceptionInfoCallbackRegister";
  return apiCall(fn, [&]() -> Outcome {
    if (callback == nullptr) return nullArgument(fn, "callback");
    ExceptionState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (std::find(s.registered.begin(), s.registered.end(), callback) == s.registered.end()) {
      s.registered.push_back(callback);
    }
    return Status::Ok();
  });
}

aclError aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback) {
  const char* fn = "aclrtExceptionInfoCallbackUnregister";
  return apiCall(fn, [&]() -> Outcome {
    if (callback == nullptr) return nullArgument(fn, "callback");
    ExceptionState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.registered.erase(std::remove(s.registered.begin(), s.registered.end(), callback),
                       s.registered.end());
    return Status::Ok();
  });
}

uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo* info) {
  return info == nullptr ? kNoInfo : info->taskId;
}
uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo* info) {
  return info == nullptr ? kNoInfo : info->streamId;
}
uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo* info) {
  return info == nullptr ? kNoInfo : info->threadId;
}
uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo* info) {
  return info == nullptr ? kNoInfo : info->deviceId;
}
uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo* info) {
  return info == nullptr ? kNoInfo : info->errorCode;
}

aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo* errorInfo) {
  const char* fn = "aclrtGetErrorVerbose";
  return apiCall(fn, [&]() -> Outcome {
    if (errorInfo == nullptr) return nullArgument(fn, "errorInfo");
    ACL_RETURN_IF_FAILED(checkDevice(fn, deviceId));
    *errorInfo = aclrtErrorInfo{};
    errorInfo->errorType = cohort::acl::deviceFault(deviceId);
    return Status::Ok();
  });
}

aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo* errorInfo) {
  const char* fn = "aclrtRepairError";
  return apiCall(fn, [&]() -> Outcome {
    if (errorInfo == nullptr) return nullArgument(fn, "errorInfo");
    ACL_RETURN_IF_FAILED(checkDevice(fn, deviceId));
    cohort::acl::forgetDeviceFault(deviceId);
    return Status::Ok();
  });
}
