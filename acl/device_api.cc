// Devices and contexts (aclrtSetDevice ... aclrtGetCurrentContext).
#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/registry.h"
#include "cohort/runtime.h"
#include "common/error.h"

using cohort::acl::Registry;

aclError aclrtSetDevice(int32_t deviceId) {
  return apiCall("aclrtSetDevice",
                 [&]() -> Outcome { return Registry::get().setDevice(deviceId); });
}

aclError aclrtResetDevice(int32_t deviceId) {
  return apiCall("aclrtResetDevice",
                 [&]() -> Outcome { return Registry::get().resetDevice(deviceId); });
}

aclError aclrtGetDevice(int32_t* deviceId) {
  return apiCall("aclrtGetDevice", [&]() -> Outcome {
    if (deviceId == nullptr) return nullArgument("aclrtGetDevice", "deviceId");
    ACL_RETURN_IF_FAILED(requireDevice("aclrtGetDevice"));
    int device = -1;
    COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
    *deviceId = device;
    return Status::Ok();
  });
}

// CANN answers before aclInit too: hccl_test asks it first, to choose the device.
aclError aclrtGetDeviceCount(uint32_t* count) {
  return cohort::acl::apiCallAnyTime("aclrtGetDeviceCount", [&]() -> Outcome {
    if (count == nullptr) return nullArgument("aclrtGetDeviceCount", "count");
    int n = 0;
    COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&n));
    *count = static_cast<uint32_t>(n);
    return Status::Ok();
  });
}

aclError aclrtSynchronizeDevice(void) {
  return apiCall("aclrtSynchronizeDevice", Site::kStreamSync, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(requireDevice("aclrtSynchronizeDevice"));
    return rt::synchronizeDevice(-1);
  });
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout) {
  const char* fn = "aclrtSynchronizeDeviceWithTimeout";
  return apiCall(fn, Site::kStreamSync, [&]() -> Outcome {
    if (timeout < -1) return badTimeout(fn, timeout);
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    return rt::synchronizeDevice(timeout);
  });
}

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
  return apiCall("aclrtCreateContext", [&]() -> Outcome {
    if (context == nullptr) return nullArgument("aclrtCreateContext", "context");
    cohort::acl::Context* created = nullptr;
    COHORT_RETURN_IF_ERROR(Registry::get().createContext(deviceId, &created));
    *context = created;
    return Status::Ok();
  });
}

aclError aclrtDestroyContext(aclrtContext context) {
  return apiCall("aclrtDestroyContext", [&]() -> Outcome {
    if (context == nullptr) return nullArgument("aclrtDestroyContext", "context");
    return Registry::get().destroyContext(static_cast<cohort::acl::Context*>(context));
  });
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  return apiCall("aclrtSetCurrentContext", [&]() -> Outcome {
    if (context == nullptr) return nullArgument("aclrtSetCurrentContext", "context");
    return Registry::get().setCurrentContext(static_cast<cohort::acl::Context*>(context));
  });
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
  return apiCall("aclrtGetCurrentContext", [&]() -> Outcome {
    if (context == nullptr) return nullArgument("aclrtGetCurrentContext", "context");
    ACL_RETURN_IF_FAILED(requireDevice("aclrtGetCurrentContext"));
    cohort::acl::Context* current = nullptr;
    Status st = Registry::get().currentContext(&current);
    if (!st.ok()) return Outcome(ACL_ERROR_RT_CONTEXT_NULL, st);
    *context = current;
    return Status::Ok();
  });
}

aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode) {
  const char* fn = "aclrtSetDeviceSatMode";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    if (mode == ACL_RT_OVERFLOW_MODE_SATURATION) {
      // The reductions are IEEE 754: claiming saturation would be untrue.
      return Outcome(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     cohort::makeError(ErrorCode::kNotSupported,
                                       "{}: ACL_RT_OVERFLOW_MODE_SATURATION is not supported: "
                                       "Cohort's arithmetic gives inf/NaN on overflow (INFNAN)",
                                       fn));
    }
    if (mode != ACL_RT_OVERFLOW_MODE_INFNAN) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: mode {} is not an "
                               "aclrtFloatOverflowMode", fn, static_cast<int>(mode));
    }
    return Status::Ok();  // what every device does already
  });
}

aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode* mode) {
  const char* fn = "aclrtGetDeviceSatMode";
  return apiCall(fn, [&]() -> Outcome {
    if (mode == nullptr) return nullArgument(fn, "mode");
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    // Only INFNAN can be set, which is also what every device starts with.
    *mode = ACL_RT_OVERFLOW_MODE_INFNAN;
    return Status::Ok();
  });
}
