// Small helpers the ACL entry points share: argument errors, the default-stream
// device check, device lookups, handle casts and a table of live handles. Every
// function here is stateless and thread-safe.
#pragma once

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "acl/acl.h"
#include "acl/api_call.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace cohort::acl {

inline runtime::Stream* toStream(aclrtStream stream) {
  return static_cast<runtime::Stream*>(stream);
}
inline runtime::Event* toEvent(aclrtEvent event) { return static_cast<runtime::Event*>(event); }

/// CANN's default failure mode for a stream it creates, ACL_CONTINUE_ON_FAILURE: the
/// tasks behind a failed one still run, and a synchronize reports the failure once.
inline Status continueOnFailure(runtime::Stream* created) {
  return runtime::streamSetFailureMode(created, true);
}

/// The vector cores a kernel this thread launches on `stream` may use: the limits of
/// the stream this thread adopted, else the stream's, the device's, the SoC's
/// (aclrtSetStreamResLimit and friends, res_limit_api.cc).
Status vectorCoreLimit(aclrtStream stream, uint32_t* cores);

// The argument errors return a Status (kInvalidArgument, ACL_ERROR_INVALID_PARAM):
// it converts to an Outcome, so helpers that return either can use them.

/// "function: name is null".
inline Status nullArgument(const char* function, const char* name) {
  return makeError(ErrorCode::kInvalidArgument, "{}: {} is null", function, name);
}

/// "function: what".
template <typename... Args>
Status invalidArgument(const char* function, fmt::format_string<Args...> format, Args&&... args) {
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("{}: {}", function, fmt::format(format, std::forward<Args>(args)...)));
}

/// A wait's timeout in milliseconds that is neither -1 nor >= 0.
inline Status badTimeout(const char* function, int32_t timeout) {
  return makeError(ErrorCode::kInvalidArgument,
                   "{}: timeout {} ms is invalid (-1 waits forever, >= 0 ms)", function, timeout);
}

/// `code` with the Status (`kind`, "function: what") that explains it: for the
/// numbers the error table does not give `kind`.
template <typename... Args>
Outcome failure(aclError code, ErrorCode kind, const char* function,
                fmt::format_string<Args...> format, Args&&... args) {
  return Outcome(code, Status(kind, fmt::format("{}: {}", function,
                                                fmt::format(format, std::forward<Args>(args)...))));
}

/// ACL_ERROR_RT_FEATURE_NOT_SUPPORT with "function: not supported: why", for a case a
/// supported function refuses (unsupported.h's notSupported is for whole functions).
inline Outcome unsupportedCase(const char* function, const char* why) {
  return Outcome(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                 makeError(ErrorCode::kNotSupported, "{}: not supported: {}", function, why));
}

/// `status`, its message prefixed with "function: " when it is a failure: for the
/// runtime's answers, which do not know which entry point asked.
inline Status withName(const char* function, const Status& status) {
  return status.ok() ? status : makeError(status.code(), "{}: {}", function, status.message());
}

/// The runtime's description of a visible device; its error (kInvalidDevice naming the
/// visible range) under the function's name otherwise.
inline Status describeDevice(const char* function, int device, runtime::DeviceInfo* info) {
  return withName(function, runtime::getDeviceInfo(device, info));
}

/// describeDevice() for a check alone.
inline Status checkDevice(const char* function, int device) {
  runtime::DeviceInfo info;
  return describeDevice(function, device, &info);
}

/// The default stream (null) needs a current device.
inline Outcome needStream(const char* function, aclrtStream stream) {
  return stream == nullptr ? requireDevice(function) : Outcome(Status::Ok());
}

/// The live objects behind opaque handles (notifies, labels, ...): a handle is the
/// object's address, checked here before it is used. A queued task holds its own
/// reference, so removing a handle never leaves a task with a dangling one.
/// Thread-safe; objects live until removed and no task holds them.
template <typename T>
class HandleTable {
 public:
  void* add(std::shared_ptr<T> object) {
    void* handle = object.get();
    return addAt(handle, std::move(object));
  }
  /// add() under a handle the caller chose (memory of its own): replaces what was there.
  void* addAt(void* handle, std::shared_ptr<T> object) {
    std::shared_ptr<T> replaced;  // released after the lock
    std::lock_guard<std::mutex> lock(mu_);
    replaced = std::exchange(objects_[handle], std::move(object));
    return handle;
  }
  /// Null when `handle` is not live.
  std::shared_ptr<T> find(void* handle) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(handle);
    return it == objects_.end() ? nullptr : it->second;
  }
  /// find() for an entry point's argument `name`: "function: name is null" for a
  /// null handle, kInvalidHandle ("function: <handle> is not a live <kind>") for one
  /// that is not live. `out` may be null when only the check is wanted.
  Status lookup(const char* function, const char* name, void* handle, const char* kind,
                std::shared_ptr<T>* out = nullptr) const {
    if (handle == nullptr) return nullArgument(function, name);
    std::shared_ptr<T> object = find(handle);
    if (!object) {
      return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live {}", function, handle,
                       kind);
    }
    if (out != nullptr) *out = std::move(object);
    return Status::Ok();
  }
  bool remove(void* handle) {
    std::shared_ptr<T> gone;  // released after the lock: its destructor may take time
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(handle);
    if (it == objects_.end()) return false;
    gone = std::move(it->second);
    objects_.erase(it);
    return true;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return objects_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<void*, std::shared_ptr<T>> objects_;
};

}  // namespace cohort::acl
