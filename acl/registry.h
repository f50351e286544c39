// What the ACL layer holds on behalf of the program: device references taken by
// aclrtSetDevice, contexts, and events, so that handles can be checked and
// aclFinalize can release everything.
#pragma once

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

  Status createContext(int device, Context** out);
  Status destroyContext(Context* context);
  /// Makes the context's device the thread's current device.
  Status setCurrentContext(Context* context);
  /// The context set last on this thread if it is still valid, else the default
  /// context of the thread's current device; kInvalidDevice when there is none.
  Status currentContext(Context** out);

  void addEvent(runtime::Event* event);
  void removeEvent(runtime::Event* event);

  /// aclFinalize: destroys the remaining events and explicit contexts and drops
  /// every device reference taken through the layer.
  void releaseAll();

 private:
  Registry() = default;
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
