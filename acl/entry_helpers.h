// Small helpers the stream-family entry points (stream_ext_api.cc, event_ext_api.cc,
// notify_api.cc, ...) share: argument errors, the default-stream device check, handle
// casts and a table of live handles.
#pragma once

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

/// ACL_ERROR_INVALID_PARAM: "function: name is null".
inline Outcome nullArgument(const char* function, const char* name) {
  return makeError(ErrorCode::kInvalidArgument, "{}: {} is null", function, name);
}

/// ACL_ERROR_INVALID_PARAM with "function: what".
template <typename... Args>
Outcome invalidArgument(const char* function, fmt::format_string<Args...> format, Args&&... args) {
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("{}: {}", function, fmt::format(format, std::forward<Args>(args)...)));
}

/// ACL_ERROR_RT_FEATURE_NOT_SUPPORT with "function: not supported: why".
inline Outcome notSupported(const char* function, const char* why) {
  return Outcome(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                 makeError(ErrorCode::kNotSupported, "{}: not supported: {}", function, why));
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
    std::lock_guard<std::mutex> lock(mu_);
    objects_[handle] = std::move(object);
    return handle;
  }
  /// Null when `handle` is not live.
  std::shared_ptr<T> find(void* handle) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(handle);
    return it == objects_.end() ? nullptr : it->second;
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
