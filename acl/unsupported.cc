#include "acl/unsupported.h"

#include <mutex>
#include <set>
#include <string>

#include "acl/error_state.h"
#include "common/error.h"
#include "common/log.h"

namespace cohort::acl {

aclError notSupported(const char* function, const char* why) {
  static std::mutex mu;
  static std::set<std::string>* warned = new std::set<std::string>();  // used at exit too
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    first = warned->insert(function).second;
  }
  if (first) COHORT_LOG(kWarn, "acl", "{} is not supported: {}", function, why);
  noteFailure(function, ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
              makeError(ErrorCode::kNotSupported, "{} is not supported: {}", function, why));
  return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
}

}  // namespace cohort::acl
