// Device state: the forced reset, the device-state and task-abort callbacks, the
// device-wide abort and the default context's state (aclrtResetDeviceForce,
// aclrtRegDeviceStateCallback, aclrtDeviceTaskAbort, aclrtSetDeviceTaskAbortCallback,
// aclrtGetPrimaryCtxState).
#include <chrono>

#include "acl/acl.h"
#include "acl/device_state.h"
#include "acl/entry_names.h"
#include "acl/exceptions.h"
#include "acl/registry.h"
#include "cohort/runtime.h"
#include "common/error.h"
#include "common/log.h"

namespace cohort::acl {

NamedCallbacks<aclrtDeviceStateCallback>& deviceStateCallbacks() {
  static auto* callbacks = new NamedCallbacks<aclrtDeviceStateCallback>();
  return *callbacks;
}

NamedCallbacks<aclrtDeviceTaskAbortCallback>& taskAbortCallbacks() {
  static auto* callbacks = new NamedCallbacks<aclrtDeviceTaskAbortCallback>();
  return *callbacks;
}

void notifyDeviceState(int device, aclrtDeviceState state) {
  if (state == ACL_RT_DEVICE_STATE_RESET_POST) {
    runtime::DeviceInfo info;
    // A device released for good has no fault: the next one comes up fresh.
    if (runtime::getDeviceInfo(device, &info).ok() && info.referenceCount == 0) {
      forgetDeviceFault(device);
    }
  }
  for (const auto& [callback, args] : deviceStateCallbacks().snapshot()) {
    callback(device, state, args);
  }
}

}  // namespace cohort::acl

namespace {

using cohort::acl::Registry;

// CANN's limit for the abort timeout.
constexpr uint32_t kMaxAbortTimeoutMs = 36u * 60u * 1000u;

}  // namespace

aclError aclrtResetDeviceForce(int32_t deviceId) {
  return apiCall("aclrtResetDeviceForce",
                 [&]() -> Outcome { return Registry::get().resetDeviceForce(deviceId); });
}

aclError aclrtRegDeviceStateCallback(const char* regName, aclrtDeviceStateCallback callback,
                                     void* args) {
  const char* fn = "aclrtRegDeviceStateCallback";
  return apiCall(fn, [&]() -> Outcome {
    return cohort::acl::deviceStateCallbacks().set(fn, regName, callback, args);
  });
}

aclError aclrtSetDeviceTaskAbortCallback(const char* regName, aclrtDeviceTaskAbortCallback callback,
                                         void* args) {
  const char* fn = "aclrtSetDeviceTaskAbortCallback";
  return apiCall(fn, [&]() -> Outcome {
    return cohort::acl::taskAbortCallbacks().set(fn, regName, callback, args);
  });
}

aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout) {
  const char* fn = "aclrtDeviceTaskAbort";
  return apiCall(fn, [&]() -> Outcome {
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describeDevice(fn, deviceId, &info));
    if (timeout > kMaxAbortTimeoutMs) {
      return Outcome(ACL_ERROR_RT_PARAM_INVALID,
                     cohort::makeError(ErrorCode::kInvalidArgument,
                                       "{}: timeout {} ms is more than 36 minutes ({} ms)", fn,
                                       timeout, kMaxAbortTimeoutMs));
    }
    const auto start = std::chrono::steady_clock::now();
    auto tell = [&](aclrtDeviceTaskAbortStage stage) {
      for (const auto& [callback, args] : cohort::acl::taskAbortCallbacks().snapshot()) {
        const int32_t result = callback(deviceId, stage, timeout, args);
        if (result != 0) {
          COHORT_LOG(kWarn, "acl", "{}: an abort callback returned {} at stage {}", fn, result,
                     static_cast<int>(stage));
        }
      }
    };
    tell(ACL_RT_DEVICE_TASK_ABORT_PRE);
    Status aborted = info.referenceCount > 0 ? rt::deviceAbort(deviceId) : Status::Ok();
    tell(ACL_RT_DEVICE_TASK_ABORT_POST);
    COHORT_RETURN_IF_ERROR(aborted);
    const auto tookMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    if (timeout > 0 && tookMs > static_cast<long long>(timeout)) {
      return Outcome(ACL_ERROR_RT_TASK_TIMEOUT,
                     cohort::makeError(ErrorCode::kTimeout,
                                       "{}: stopping device {}'s tasks took {} ms, more than the "
                                       "timeout of {} ms",
                                       fn, deviceId, tookMs, timeout));
    }
    return Status::Ok();
  });
}

aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t* flags, int32_t* active) {
  const char* fn = "aclrtGetPrimaryCtxState";
  return apiCall(fn, [&]() -> Outcome {
    if (active == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: active is null", fn);
    }
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describeDevice(fn, deviceId, &info));
    if (flags != nullptr) *flags = 0;  // reserved
    // The default context lives while the device is set.
    *active = info.referenceCount > 0 ? 1 : 0;
    return Status::Ok();
  });
}
