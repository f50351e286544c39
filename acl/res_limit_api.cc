// Device resource limits: how many cube / vector cores an operator may use, per
// device, per stream, and for the threads that take a stream's limits
// (aclrtSetDeviceResLimit ... aclrtGetResInCurrentThread). Cohort runs no operators,
// so any limit from 1 to the device's count is honoured trivially; what matters is
// that each level reports what was set, in CANN's order of precedence.
#include <map>
#include <mutex>
#include <utility>

#include "acl/acl.h"
#include "acl/device_profile.h"
#include "acl/entry_names.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

using cohort::acl::checkDevice;

// A stream by device and id: ids are never reused within a device, so a limit set on
// a destroyed stream can never apply to another one.
using StreamKey = std::pair<int, int>;
using Limits = std::map<int, uint32_t>;  // by aclrtDevResLimitType

// Process-wide, never destroyed.
struct LimitState {
  std::mutex mu;
  std::map<int, Limits> devices;
  std::map<StreamKey, Limits> streams;
};

LimitState& limits() {
  static auto* s = new LimitState();
  return *s;
}

thread_local bool tUsesStream = false;
thread_local StreamKey tStream;

uint32_t hardwareLimit(aclrtDevResLimitType type) {
  return static_cast<uint32_t>(type == ACL_RT_DEV_RES_CUBE_CORE
                                   ? cohort::acl::profile::kCubeCores
                                   : cohort::acl::profile::kVectorCores);
}

Outcome checkType(const char* function, aclrtDevResLimitType type) {
  if (type != ACL_RT_DEV_RES_CUBE_CORE && type != ACL_RT_DEV_RES_VECTOR_CORE) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: type {} is not an aclrtDevResLimitType", function,
                             static_cast<int>(type));
  }
  return Status::Ok();
}

Outcome checkValue(const char* function, aclrtDevResLimitType type, uint32_t value) {
  ACL_RETURN_IF_FAILED(checkType(function, type));
  if (value == 0 || value > hardwareLimit(type)) {
    return cohort::makeError(
        ErrorCode::kInvalidArgument, "{}: value {} is out of range: the device has {} {} cores",
        function, value, hardwareLimit(type), type == ACL_RT_DEV_RES_CUBE_CORE ? "cube" : "vector");
  }
  return Status::Ok();
}

// The key of a caller's stream (null: the current device's default stream).
Outcome keyOf(const char* function, aclrtStream stream, StreamKey* key) {
  if (stream == nullptr) ACL_RETURN_IF_FAILED(requireDevice(function));
  rt::StreamDescription description;
  COHORT_RETURN_IF_ERROR(rt::streamDescribe(toStream(stream), &description));
  *key = StreamKey(description.device, description.id);
  return Status::Ok();
}

// With the lock held: the stream's limit, else the device's, else the hardware's.
uint32_t limitLocked(LimitState& s, const StreamKey* stream, int device,
                     aclrtDevResLimitType type) {
  if (stream != nullptr) {
    auto it = s.streams.find(*stream);
    if (it != s.streams.end() && it->second.count(type) != 0) return it->second.at(type);
  }
  auto it = s.devices.find(device);
  if (it != s.devices.end() && it->second.count(type) != 0) return it->second.at(type);
  return hardwareLimit(type);
}

}  // namespace

aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value) {
  const char* fn = "aclrtSetDeviceResLimit";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkValue(fn, type, value));
    ACL_RETURN_IF_FAILED(checkDevice(fn, deviceId));
    LimitState& s = limits();
    std::lock_guard<std::mutex> lock(s.mu);
    s.devices[deviceId][type] = value;
    return Status::Ok();
  });
}

aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t* value) {
  const char* fn = "aclrtGetDeviceResLimit";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: value is null", fn);
    }
    ACL_RETURN_IF_FAILED(checkType(fn, type));
    ACL_RETURN_IF_FAILED(checkDevice(fn, deviceId));
    LimitState& s = limits();
    std::lock_guard<std::mutex> lock(s.mu);
    *value = limitLocked(s, nullptr, deviceId, type);
    return Status::Ok();
  });
}

aclError aclrtResetDeviceResLimit(int32_t deviceId) {
  const char* fn = "aclrtResetDeviceResLimit";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkDevice(fn, deviceId));
    LimitState& s = limits();
    std::lock_guard<std::mutex> lock(s.mu);
    s.devices.erase(deviceId);
    return Status::Ok();
  });
}

aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value) {
  const char* fn = "aclrtSetStreamResLimit";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkValue(fn, type, value));
    StreamKey key;
    ACL_RETURN_IF_FAILED(keyOf(fn, stream, &key));
    LimitState& s = limits();
    std::lock_guard<std::mutex> lock(s.mu);
    s.streams[key][type] = value;
    return Status::Ok();
  });
}

aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t* value) {
  const char* fn = "aclrtGetStreamResLimit";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: value is null", fn);
    }
    ACL_RETURN_IF_FAILED(checkType(fn, type));
    StreamKey key;
    ACL_RETURN_IF_FAILED(keyOf(fn, stream, &key));
    LimitState& s = limits();
    std::lock_guard<std::mutex> lock(s.mu);
    *value = limitLocked(s, &key, key.first, type);
    return Status::Ok();
  });
}

aclError aclrtResetStreamResLimit(aclrtStream stream) {
  const char* fn = "aclrtResetStreamResLimit";
  return apiCall(fn, [&]() -> Outcome {
    StreamKey key;
    ACL_RETURN_IF_FAILED(keyOf(fn, stream, &key));
    LimitState& s = limits();
    std::lock_guard<std::mutex> lock(s.mu);
    s.streams.erase(key);
    return Status::Ok();
  });
}

aclError aclrtUseStreamResInCurrentThread(aclrtStream stream) {
  const char* fn = "aclrtUseStreamResInCurrentThread";
  return apiCall(fn, [&]() -> Outcome {
    StreamKey key;
    ACL_RETURN_IF_FAILED(keyOf(fn, stream, &key));
    tStream = key;
    tUsesStream = true;
    return Status::Ok();
  });
}

aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream) {
  const char* fn = "aclrtUnuseStreamResInCurrentThread";
  return apiCall(fn, [&]() -> Outcome {
    StreamKey key;
    ACL_RETURN_IF_FAILED(keyOf(fn, stream, &key));
    if (!tUsesStream || tStream != key) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: this thread does not use the limits of that stream (device "
                               "{} stream {}; see aclrtUseStreamResInCurrentThread)",
                               fn, key.first, key.second);
    }
    tUsesStream = false;
    return Status::Ok();
  });
}

aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t* value) {
  const char* fn = "aclrtGetResInCurrentThread";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: value is null", fn);
    }
    ACL_RETURN_IF_FAILED(checkType(fn, type));
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    int device = -1;
    COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
    // The stream's limits apply on the stream's device only.
    const bool useStream = tUsesStream && tStream.first == device;
    LimitState& s = limits();
    std::lock_guard<std::mutex> lock(s.mu);
    *value = limitLocked(s, useStream ? &tStream : nullptr, device, type);
    return Status::Ok();
  });
}

namespace cohort::acl {

Status vectorCoreLimit(aclrtStream stream, uint32_t* cores) {
  StreamKey key;
  const Outcome found = keyOf("vectorCoreLimit", stream, &key);
  if (!found.ok()) return found.status;
  LimitState& s = limits();
  std::lock_guard<std::mutex> lock(s.mu);
  // The calling thread's stream limits (aclrtUseStreamResInCurrentThread) come
  // before the launch stream's own, on that stream's device.
  const bool useThread = tUsesStream && tStream.first == key.first;
  *cores = limitLocked(s, useThread ? &tStream : &key, key.first, ACL_RT_DEV_RES_VECTOR_CORE);
  return Status::Ok();
}

}  // namespace cohort::acl
