// The wrapper every ACL entry point runs in: the aclInit check, the body, then
// the result turned into an aclError (and recorded when it failed). Also the
// state aclInit sets up.
#pragma once

#include <exception>
#include <new>
#include <utility>

#include "acl/acl_base.h"
#include "acl/error_map.h"
#include "cohort/status.h"

namespace cohort::acl {

/// What an entry point's body returns: a Status mapped through the error table,
/// or one of the ACL layer's own numbers together with the Status explaining it.
struct Outcome {
  Outcome(Status s) : status(std::move(s)) {}  // NOLINT: implicit on purpose
  Outcome(aclError c, Status s) : code(c), status(std::move(s)) {}
  bool ok() const { return code < 0 && status.ok(); }

  aclError code = -1;  ///< -1: use the table
  Status status;
};

/// Options read from aclInit's configuration file.
struct InitOptions {
  bool processWideMessages = false;  ///< "err_msg_mode": "1"
  int defaultDevice = -1;            ///< "defaultDevice": {"default_device": "N"}
};

/// True between aclInit and aclFinalize.
bool isInitialized();
/// Moves the layer to initialised (with its options) or back. Not thread-safe
/// against concurrent entry points (neither is AscendCL's).
void setInitialized(bool initialized, const InitOptions& options = InitOptions());

/// ACL_ERROR_RT_CONTEXT_NULL unless the calling thread has a current device; with
/// a configured default device, sets it for the thread instead.
Outcome requireDevice(const char* function);

/// Turns an outcome into the number to return, recording failures.
aclError finish(const char* function, Site site, const Outcome& outcome);
aclError notInitialized(const char* function);

/// apiCall() for the entry points CANN allows before aclInit (aclrtGetDeviceCount,
/// aclrtGetSocName, the data-type helpers): the same error handling, no init check.
template <typename Body>
aclError apiCallAnyTime(const char* function, Body&& body) {
  try {
    return finish(function, Site::kGeneral, body());
  } catch (const std::bad_alloc&) {
    return finish(function, Site::kGeneral,
                  Outcome(ACL_ERROR_BAD_ALLOC, Status(ErrorCode::kOutOfMemory, "host memory")));
  } catch (const std::exception& e) {
    return finish(function, Site::kGeneral,
                  Outcome(ACL_ERROR_INTERNAL_ERROR, Status(ErrorCode::kInternal, e.what())));
  }
}

template <typename Body>
aclError apiCall(const char* function, Site site, Body&& body) {
  if (!isInitialized()) return notInitialized(function);
  try {
    return finish(function, site, body());
  } catch (const std::bad_alloc&) {
    return finish(function, site,
                  Outcome(ACL_ERROR_BAD_ALLOC, Status(ErrorCode::kOutOfMemory, "host memory")));
  } catch (const std::exception& e) {
    return finish(function, site,
                  Outcome(ACL_ERROR_INTERNAL_ERROR, Status(ErrorCode::kInternal, e.what())));
  }
}

template <typename Body>
aclError apiCall(const char* function, Body&& body) {
  return apiCall(function, Site::kGeneral, std::forward<Body>(body));
}

}  // namespace cohort::acl

#define ACL_RETURN_IF_FAILED(expr)                \
  do {                                            \
    ::cohort::acl::Outcome acl_outcome_ = (expr); \
    if (!acl_outcome_.ok()) return acl_outcome_;  \
  } while (0)
