// What the ACL layer holds on behalf of the program: device references taken by
// aclrtSetDevice, contexts, and events, so that handles can be checked and
// aclFinalize can release everything.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "cohort/runtime.h"

namespace cohort::acl {

/// A device binding for threads (aclrtContext). A device's default context stands
/// for "the device set by aclrtSetDevice": one per device, never freed, valid
/// while the device is set. An explicit context (aclrtCreateContext) holds one
/// device reference until aclrtDestroyContext.
struct Context {
  int device;
  bool isDefault;
  /// aclrtCtxSetSysParamOpt values by aclSysParamOpt (guarded by the registry's lock;
  /// a default context's are cleared when its device is released).
  std::map<int, std::int64_t> sysParams;
};

/// Process-wide, thread-safe. The current context is per thread.
class Registry {
 public:
  static Registry& get();

  /// runtime::setDevice plus a reference counted here; the device's default
  /// context becomes the thread's current context.
  Status setDevice(int device);
  /// Drops one reference taken by setDevice (kInvalidDevice if none is held).
  Status resetDevice(int device);
  /// aclrtResetDeviceForce: drops every reference taken by setDevice, destroys the
  /// device's explicit contexts and tears the device down whatever other references
  /// it has (kInvalidDevice if setDevice holds none). setDevice, resetDevice and this
  /// tell the device-state callbacks (device_state.h) before and after.
  Status resetDeviceForce(int device);

  Status createContext(int device, Context** out);
  Status destroyContext(Context* context);
  /// Makes the context's device the thread's current device.
  Status setCurrentContext(Context* context);
  /// The context set last on this thread if it is still valid, else the default
  /// context of the thread's current device; kInvalidDevice when there is none.
  Status currentContext(Context** out);
  /// A system parameter of the current context (kInvalidDevice without one); *found
  /// is false when it was never set there.
  Status setContextParam(int option, std::int64_t value);
  Status contextParam(int option, std::int64_t* value, bool* found);

  void addEvent(runtime::Event* event);
  void removeEvent(runtime::Event* event);

  /// aclFinalize: destroys the remaining events and explicit contexts and drops
  /// every device reference taken through the layer.
  void releaseAll();

 private:
  Registry() = default;
  Status setDeviceUntold(int device);
  Status resetDeviceUntold(int device);
  Status currentContextLocked(Context** out);
  Context* defaultContextLocked(int device);
  bool isDefaultLocked(const Context* context) const;
  bool isValidLocked(const Context* context);

  std::mutex mu_;
  std::map<int, int> deviceRefs_;                     // aclrtSetDevice references
  std::map<int, std::unique_ptr<Context>> defaults_;  // by device, never erased
  std::map<const Context*, std::unique_ptr<Context>> explicit_;
  std::set<runtime::Event*> events_;
};

}  // namespace cohort::acl
