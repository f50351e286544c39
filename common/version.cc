// The API version check: every translation unit that includes cohort/version.h
// registers, at load time, the API version it was compiled against. The highest
// one is compared with the library's own by checkApiVersion().
#include "common/version.h"

#include <atomic>

#include "common/error.h"

namespace cohort {

namespace {
constexpr int kLibraryApiVersion = COHORT_API_VERSION_MAJOR * 1000 + COHORT_API_VERSION_MINOR;
std::atomic<int> gRequestedApiVersion{0};
}  // namespace

VersionInfo loadedVersion() {
  return VersionInfo{COHORT_VERSION_STRING, kLibraryApiVersion, COHORT_PROTOCOL_VERSION};
}

namespace detail {
bool registerApiVersion(int compiledApiVersion) {
  int seen = gRequestedApiVersion.load();
  while (compiledApiVersion > seen &&
         !gRequestedApiVersion.compare_exchange_weak(seen, compiledApiVersion)) {
  }
  return true;
}
}  // namespace detail

std::string apiVersionString(int apiVersion) {
  return fmt::format("{}.{}", apiVersion / 1000, apiVersion % 1000);
}

Status checkApiVersion() {
  const int requested = gRequestedApiVersion.load();
  const bool sameMajor = requested / 1000 == kLibraryApiVersion / 1000;
  if (requested > kLibraryApiVersion || (requested != 0 && !sameMajor)) {
    return makeError(ErrorCode::kVersionMismatch,
                     "the program was compiled against Cohort API {} but the installed runtime "
                     "library (libcohort {}) provides API {}; install a runtime of API {} or "
                     "newer with the same major version",
                     apiVersionString(requested), COHORT_VERSION_STRING,
                     apiVersionString(kLibraryApiVersion), apiVersionString(requested));
  }
  return Status::Ok();
}

}  // namespace cohort
