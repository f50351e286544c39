// Internal side of the version check (public side: cohort/version.h).
#pragma once

#include <string>

#include "cohort/status.h"
#include "cohort/version.h"

namespace cohort {

/// kVersionMismatch when any part of the program was compiled against a newer
/// (or another major) API than this library provides.
Status checkApiVersion();

/// "MAJOR.MINOR" for an API version number.
std::string apiVersionString(int apiVersion);

}  // namespace cohort
