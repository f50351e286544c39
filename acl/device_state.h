// Callbacks registered by name that the layer calls when a device changes state:
// the device-state callbacks (aclrtRegDeviceStateCallback, around aclrtSetDevice
// and the resets) and the task-abort callbacks (aclrtSetDeviceTaskAbortCallback,
// around aclrtDeviceTaskAbort).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl.h"
#include "acl/api_call.h"

namespace cohort::acl {

/// Callbacks of one kind, each under a unique, non-empty name with its argument.
/// Thread-safe; callers get a copy to call without the lock held, so a callback
/// may register or remove callbacks. Never destroyed (used at exit).
template <typename Fn>
class NamedCallbacks {
 public:
  /// Adds (fn non-null) or removes (fn null) the callback named `name`. Adding a
  /// name already present is ACL_ERROR_INVALID_PARAM, as is removing one absent.
  Outcome set(const char* function, const char* name, Fn fn, void* args) {
    if (name == nullptr || name[0] == '\0') {
      return Outcome(ACL_ERROR_INVALID_PARAM,
                     Status(ErrorCode::kInvalidArgument,
                            std::string(function) + ": regName is null or empty"));
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(name);
    if (fn != nullptr && it != entries_.end()) {
      return Outcome(ACL_ERROR_INVALID_PARAM,
                     Status(ErrorCode::kInvalidArgument,
                            std::string(function) + ": a callback is already registered as '" +
                                name + "' (remove it first: a NULL callback)"));
    }
    if (fn == nullptr && it == entries_.end()) {
      return Outcome(
          ACL_ERROR_INVALID_PARAM,
          Status(ErrorCode::kInvalidArgument,
                 std::string(function) + ": no callback is registered as '" + name + "'"));
    }
    if (fn == nullptr) {
      entries_.erase(it);
    } else {
      entries_.emplace(name, std::make_pair(fn, args));
    }
    return Status::Ok();
  }
  std::vector<std::pair<Fn, void*>> snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<Fn, void*>> out;
    for (const auto& entry : entries_) out.push_back(entry.second);
    return out;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<Fn, void*>> entries_;
};

NamedCallbacks<aclrtDeviceStateCallback>& deviceStateCallbacks();
NamedCallbacks<aclrtDeviceTaskAbortCallback>& taskAbortCallbacks();

/// Calls every device-state callback with (device, state), in name order.
void notifyDeviceState(int device, aclrtDeviceState state);

}  // namespace cohort::acl
