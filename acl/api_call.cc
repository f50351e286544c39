#include "acl/api_call.h"

#include <atomic>

#include "acl/error_state.h"
#include "acl/registry.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace cohort::acl {

namespace {
std::atomic<bool> gInitialized{false};
std::atomic<int> gDefaultDevice{-1};
}  // namespace

bool isInitialized() { return gInitialized.load(std::memory_order_acquire); }

void setInitialized(bool initialized, const InitOptions& options) {
  gDefaultDevice.store(initialized ? options.defaultDevice : -1, std::memory_order_release);
  setProcessWideMessages(initialized && options.processWideMessages);
  gInitialized.store(initialized, std::memory_order_release);
}

Outcome requireDevice(const char* function) {
  int device = -1;
  if (runtime::getDevice(&device).ok()) return Status::Ok();
  const int fallback = gDefaultDevice.load(std::memory_order_acquire);
  if (fallback >= 0) return Registry::get().setDevice(fallback);
  return Outcome(ACL_ERROR_RT_CONTEXT_NULL,
                 makeError(ErrorCode::kInvalidDevice,
                           "{}: no current device on this thread (call aclrtSetDevice, "
                           "aclrtCreateContext or aclrtSetCurrentContext first)",
                           function));
}

aclError finish(const char* function, Site site, const Outcome& outcome) {
  if (outcome.ok()) return ACL_SUCCESS;
  const aclError code = outcome.code >= 0 ? outcome.code : toAclError(outcome.status.code(), site);
  noteFailure(function, code, outcome.status);
  return code;
}

aclError notInitialized(const char* function) {
  noteFailure(function, ACL_ERROR_UNINITIALIZE,
              makeError(ErrorCode::kNotInitialized,
                        "{} called before aclInit (or after aclFinalize)", function));
  return ACL_ERROR_UNINITIALIZE;
}

}  // namespace cohort::acl
