// The names the files of ACL entry points (acl/*_api.cc) use, brought to global
// scope: the C API's functions must be defined there, outside cohort::acl, and
// each file would otherwise repeat the same list of using-declarations.
//
// Include it from those .cc files only, never from a header: it changes the global
// namespace of whoever includes it. A file adds the few names of its own below its
// includes.
#pragma once

#include "acl/api_call.h"
#include "acl/entry_helpers.h"
#include "common/error.h"

namespace rt = cohort::runtime;

using cohort::ErrorCode;
using cohort::Status;
using cohort::acl::apiCall;
using cohort::acl::apiCallAnyTime;
using cohort::acl::badTimeout;
using cohort::acl::describeDevice;
using cohort::acl::failure;
using cohort::acl::invalidArgument;
using cohort::acl::needStream;
using cohort::acl::nullArgument;
using cohort::acl::Outcome;
using cohort::acl::requireDevice;
using cohort::acl::Site;
using cohort::acl::toEvent;
using cohort::acl::toStream;
using cohort::acl::unsupportedCase;
using cohort::acl::withName;
