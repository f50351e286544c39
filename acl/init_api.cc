// aclInit / aclFinalize, the configuration file, and the error-report functions.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/error_state.h"
#include "acl/exceptions.h"
#include "acl/init_callbacks.h"
#include "acl/registry.h"
#include "acl/report_hub.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

using cohort::acl::InitOptions;
using Json = nlohmann::json;

// AscendCL allows at most 10 levels of nesting in its configuration file.
constexpr int kMaxJsonDepth = 10;

std::atomic<bool> gFinalized{false};
// aclInit calls since the last finalisation, repeated ones included (aclFinalizeReference).
std::atomic<std::uint64_t> gInitCount{0};

int depthOf(const Json& j) {
  int deepest = 0;
  if (j.is_object() || j.is_array()) {
    for (const auto& child : j) deepest = std::max(deepest, depthOf(child));
    return deepest + 1;
  }
  return 0;
}

Outcome invalidAttribute(const std::string& path, const std::string& what) {
  return Outcome(ACL_ERROR_FILE_ATTR_INVALID,
                 cohort::makeError(ErrorCode::kValidationError, "aclInit: {}: {}", path, what));
}

// "0", "1" or 0, 1 as a number; -1 otherwise.
long integerOf(const Json& j) {
  if (j.is_number_integer()) return j.get<long>();
  if (!j.is_string()) return -1;
  const std::string s = j.get<std::string>();
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stol(s);
}

Outcome readOptions(const Json& j, const std::string& path, InitOptions* options) {
  if (j.contains("err_msg_mode")) {
    const long mode = integerOf(j["err_msg_mode"]);
    if (mode != 0 && mode != 1) {
      return invalidAttribute(path, "err_msg_mode is " + j["err_msg_mode"].dump() +
                                        "; expected \"0\" (per thread) or \"1\" (per process)");
    }
    options->processWideMessages = mode == 1;
  }
  if (j.contains("defaultDevice")) {
    const Json& d = j["defaultDevice"];
    const long id =
        d.is_object() && d.contains("default_device") ? integerOf(d["default_device"]) : -1;
    int count = 0;
    COHORT_RETURN_IF_ERROR(cohort::runtime::getDeviceCount(&count));
    if (id < 0 || id >= count) {
      return invalidAttribute(path,
                              fmt::format("defaultDevice is {}; expected {{\"default_device\": "
                                          "\"N\"}} with N a visible device in [0, {}]",
                                          d.dump(), count - 1));
    }
    options->defaultDevice = static_cast<int>(id);
  }
  return Status::Ok();
}

Outcome parseConfigFile(const char* path, InitOptions* options, std::string* configText) {
  std::ifstream in(path);
  if (!in) {
    return Outcome(
        ACL_ERROR_INVALID_FILE,
        cohort::systemError(errno, fmt::format("aclInit: cannot read the configuration file "
                                               "'{}'",
                                               path)));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  *configText = text;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Status::Ok();
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return Outcome(ACL_ERROR_PARSE_FILE,
                   cohort::makeError(ErrorCode::kParseError, "aclInit: '{}' is not valid JSON: {}",
                                     path, e.what()));
  }
  if (!j.is_object() || depthOf(j) > kMaxJsonDepth) {
    return Outcome(ACL_ERROR_PARSE_FILE, cohort::makeError(ErrorCode::kParseError,
                                                           "aclInit: '{}' must hold one JSON "
                                                           "object nested at most {} levels deep",
                                                           path, kMaxJsonDepth));
  }
  return readOptions(j, path, options);
}

Outcome initialize(const char* configPath) {
  if (cohort::acl::isInitialized()) {
    gInitCount.fetch_add(1);
    return Outcome(ACL_ERROR_REPEAT_INITIALIZE,
                   Status(ErrorCode::kInvalidUsage, "aclInit: already initialised"));
  }
  COHORT_RETURN_IF_ERROR(cohort::runtime::init());
  InitOptions options;
  std::string configText;
  if (configPath != nullptr && configPath[0] != '\0') {
    ACL_RETURN_IF_FAILED(parseConfigFile(configPath, &options, &configText));
  }
  cohort::acl::setInitialized(true, options);
  gFinalized.store(false);
  gInitCount.store(1);
  // A failing callback's number is aclInit's; the runtime stays initialised.
  return cohort::acl::runInitCallbacks(configText);
}

Outcome finalize() {
  if (!cohort::acl::isInitialized()) {
    if (gFinalized.load()) {
      return Outcome(ACL_ERROR_REPEAT_FINALIZE,
                     Status(ErrorCode::kInvalidUsage, "aclFinalize: already finalised"));
    }
    return Outcome(ACL_ERROR_UNINITIALIZE,
                   Status(ErrorCode::kNotInitialized, "aclFinalize: aclInit was never called"));
  }
  cohort::acl::runFinalizeCallbacks();
  cohort::acl::ReportHub::get().reset();
  cohort::acl::Registry::get().releaseAll();
  cohort::acl::forgetReleasedDeviceFaults();
  cohort::acl::setInitialized(false);
  gFinalized.store(true);
  gInitCount.store(0);
  return Status::Ok();
}

// Drops one aclInit count; the last one finalizes.
Outcome finalizeReference(uint64_t* refCount) {
  if (!cohort::acl::isInitialized()) return finalize();  // its errors
  std::uint64_t left = gInitCount.load();
  while (left > 0 && !gInitCount.compare_exchange_weak(left, left - 1)) {
  }
  if (left <= 1) ACL_RETURN_IF_FAILED(finalize());
  if (refCount != nullptr) *refCount = left > 0 ? left - 1 : 0;
  return Status::Ok();
}

}  // namespace

aclError aclInit(const char* configPath) {
  return cohort::acl::finish("aclInit", cohort::acl::Site::kGeneral, initialize(configPath));
}

aclError aclFinalize(void) {
  return cohort::acl::finish("aclFinalize", cohort::acl::Site::kGeneral, finalize());
}

aclError aclFinalizeReference(uint64_t* refCount) {
  return cohort::acl::finish("aclFinalizeReference", cohort::acl::Site::kGeneral,
                             finalizeReference(refCount));
}

const char* aclGetRecentErrMsg(void) { return cohort::acl::takeRecentMessages(); }

aclError aclrtGetLastError(aclrtLastErrLevel level) {
  if (level != ACL_RT_THREAD_LEVEL) return ACL_ERROR_INVALID_PARAM;
  return cohort::acl::lastErrorNumber(/*reset=*/true);
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level) {
  if (level != ACL_RT_THREAD_LEVEL) return ACL_ERROR_INVALID_PARAM;
  return cohort::acl::lastErrorNumber(/*reset=*/false);
}
