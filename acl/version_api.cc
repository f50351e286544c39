// Versions: the AscendCL API version, the CANN version Cohort implements
// (acl/cann_version.h) and Cohort's own (aclrtGetVersion, aclsysGetVersionStr,
// aclsysGetVersionNum, aclsysGetCANNVersion). All work before aclInit.
#include <cctype>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "acl/cann_version.h"
#include "acl/entry_names.h"
#include "cohort/version.h"
#include "common/error.h"

namespace {

// The packages a Cohort installation provides: its runtime (libascendcl) and HCCL
// (libhccl), both of the CANN version implemented, and Cohort itself.
Outcome versionOf(const char* function, const char* pkgName, std::string* version) {
  if (pkgName == nullptr) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: pkgName is null", function);
  }
  const std::string name(pkgName);
  if (name == "runtime" || name == "cann" || name == "hccl") {
    *version = cohort::acl::kCannVersion;
    return Status::Ok();
  }
  if (name == "cohort") {
    *version = COHORT_VERSION_STRING;
    return Status::Ok();
  }
  return Outcome(ACL_ERROR_INVALID_FILE,
                 cohort::makeError(ErrorCode::kInvalidArgument,
                                   "{}: package '{}' is not installed (Cohort provides "
                                   "\"runtime\", \"cann\", \"hccl\" and \"cohort\")",
                                   function, name));
}

// CANN's numbering: major * 10^7 + minor * 10^5 + patch * 10^3, and a pre-release
// (alpha / beta / rc, optionally after one '.' or '-', then its number after at most
// one separator) lowers it by 300 / 200 / 100 and adds its number. False if the text
// is not such a version.
bool versionNumber(const std::string& text, int32_t* number) {
  std::size_t pos = 0;
  long parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != '.') return false;
      ++pos;
    }
    const std::size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) &&
           pos < start + 3) {
      parts[i] = parts[i] * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == start) return false;
  }
  long value = parts[0] * 10000000L + parts[1] * 100000L + parts[2] * 1000L;
  if (pos < text.size()) {
    if (text[pos] == '.' || text[pos] == '-') ++pos;
    std::string rest = text.substr(pos);
    for (char& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    long weight = 0;
    std::size_t keyword = 0;
    if (rest.rfind("alpha", 0) == 0) {
      weight = 300, keyword = 5;
    } else if (rest.rfind("beta", 0) == 0) {
      weight = 200, keyword = 4;
    } else if (rest.rfind("rc", 0) == 0) {
      weight = 100, keyword = 2;
    } else {
      return false;
    }
    // Nothing after the keyword, or an optional separator and a tail.
    std::string tail = rest.substr(keyword);
    if (!tail.empty() && (tail[0] == '.' || tail[0] == '-')) tail.erase(0, 1);
    long pre = 0;
    if (!tail.empty() || rest.size() > keyword) {
      if (tail.empty() || tail.size() > 4) return false;
      for (char c : tail) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
        pre = pre * 10 + (c - '0');
      }
    }
    value += pre - weight;
  }
  *number = static_cast<int32_t>(value);
  return true;
}

}  // namespace

aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion) {
  return apiCallAnyTime("aclrtGetVersion", [&]() -> Outcome {
    if (majorVersion == nullptr || minorVersion == nullptr || patchVersion == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtGetVersion: a version pointer is null");
    }
    *majorVersion = ACL_MAJOR_VERSION;
    *minorVersion = ACL_MINOR_VERSION;
    *patchVersion = ACL_PATCH_VERSION;
    return Status::Ok();
  });
}

aclError aclsysGetVersionStr(char* pkgName, char* versionStr) {
  const char* fn = "aclsysGetVersionStr";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (versionStr == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: versionStr is null", fn);
    }
    std::string version;
    ACL_RETURN_IF_FAILED(versionOf(fn, pkgName, &version));
    std::memcpy(versionStr, version.c_str(), version.size() + 1);  // < ACL_PKG_VERSION_MAX_SIZE
    return Status::Ok();
  });
}

aclError aclsysGetVersionNum(char* pkgName, int32_t* versionNum) {
  const char* fn = "aclsysGetVersionNum";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (versionNum == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: versionNum is null", fn);
    }
    std::string version;
    ACL_RETURN_IF_FAILED(versionOf(fn, pkgName, &version));
    if (!versionNumber(version, versionNum)) {
      return cohort::makeError(ErrorCode::kInternal, "{}: version '{}' has no number", fn, version);
    }
    return Status::Ok();
  });
}

aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion* version) {
  const char* fn = "aclsysGetCANNVersion";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (version == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: version is null", fn);
    }
    if (name < ACL_PKG_NAME_CANN || name > ACL_PKG_NAME_DRIVER) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: name {} is not an aclCANNPackageName", fn,
                               static_cast<int>(name));
    }
    if (name != ACL_PKG_NAME_CANN && name != ACL_PKG_NAME_RUNTIME && name != ACL_PKG_NAME_HCCL) {
      return Outcome(ACL_ERROR_INVALID_FILE,
                     cohort::makeError(ErrorCode::kInvalidArgument,
                                       "{}: package {} is not installed (Cohort provides the "
                                       "CANN, runtime and HCCL packages)",
                                       fn, static_cast<int>(name)));
    }
    std::memset(version, 0, sizeof(*version));
    const std::string text = cohort::acl::kCannVersion;
    std::memcpy(version->version, text.c_str(), text.size());
    // "A.B.C" split at its dots; the fourth part (the patch) is "0" when absent.
    std::string parts[4] = {"", "", "", "0"};
    std::size_t start = 0;
    for (int i = 0; i < 4 && start <= text.size(); ++i) {
      const std::size_t dot = text.find('.', start);
      parts[i] = text.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    char* fields[4] = {version->majorVersion, version->minorVersion, version->releaseVersion,
                       version->patchVersion};
    for (int i = 0; i < 4; ++i) std::memcpy(fields[i], parts[i].c_str(), parts[i].size());
    return Status::Ok();
  });
}
