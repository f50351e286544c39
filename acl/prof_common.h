// What the profiling entry points (prof_api.cc, prof_tx_api.cc,
// prof_subscribe_api.cc) share: their wrapper, which unlike apiCall does not
// need aclInit (CANN's profiling functions work before it), and small helpers.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "acl/acl_prof.h"
#include "acl/api_call.h"
#include "common/error.h"

namespace cohort::acl::prof {

/// Runs an entry point's body and turns its outcome into the number to return,
/// recording failures (aclGetRecentErrMsg, the log) under `function`.
template <typename Body>
aclError profCall(const char* function, Body&& body) {
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

/// `code` with the Status (`kind`, "function: what") that explains it.
template <typename... Args>
Outcome failure(aclError code, ErrorCode kind, const char* function,
                fmt::format_string<Args...> format, Args&&... args) {
  return Outcome(code, Status(kind, fmt::format("{}: {}", function,
                                                fmt::format(format, std::forward<Args>(args)...))));
}

/// ACL_ERROR_INVALID_PARAM with "function: what".
template <typename... Args>
Outcome invalidParam(const char* function, fmt::format_string<Args...> format, Args&&... args) {
  return failure(ACL_ERROR_INVALID_PARAM, ErrorCode::kInvalidArgument, function, format,
                 std::forward<Args>(args)...);
}

/// The first `length` bytes of `text` up to a NUL, with bytes that are not UTF-8
/// replaced by '?': the trace file is JSON, which must be UTF-8.
std::string messageOf(const char* text, std::size_t length);

/// aclprofSetConfig's check of a setting's value (ACL_ERROR_INVALID_PARAM when it is
/// not one the setting takes); gives its name, and why nothing is recorded for it
/// (null when something is).
Outcome checkSetting(const char* fn, aclprofConfigType type, const std::string& value,
                     const char** name, const char** absent);
/// "ACL_PROF_PATH" for ACL_PROF_PATH.
const char* settingName(aclprofConfigType type);

/// Whether aclprofInit holds (model subscription conflicts with it).
bool initialized();

/// ACL_ERROR_PROF_NOT_RUN unless a profiling session is recording.
Outcome requireSession(const char* function);

}  // namespace cohort::acl::prof
