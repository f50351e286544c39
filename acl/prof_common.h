// What the profiling entry points (prof_api.cc, prof_tx_api.cc,
// prof_subscribe_api.cc) share beyond entry_helpers.h. They run in apiCallAnyTime:
// CANN's profiling functions work before aclInit.
#pragma once

#include <string>

#include "acl/acl_prof.h"
#include "acl/api_call.h"
#include "acl/entry_helpers.h"

namespace cohort::acl::prof {

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
