// Model subscription (aclprofModelSubscribe ... aclprofGetOpAttriValue): CANN
// reports the operators of a loaded model through a pipe. Cohort runs no models,
// so subscribing is not supported and subscription data never exists; between
// aclprofInit and aclprofFinalize these calls conflict with the session API, as
// CANN documents (ACL_ERROR_PROF_API_CONFLICT).
#include "acl/entry_names.h"
#include "acl/prof_common.h"

namespace cohort::acl::prof {
namespace {

Outcome conflict(const char* fn) {
  return failure(ACL_ERROR_PROF_API_CONFLICT, ErrorCode::kInvalidUsage, fn,
                 "cannot be mixed with the session API: call aclprofFinalize first, then {}", fn);
}

// Subscribing: needs a model.
Outcome unsupported(const char* fn) {
  if (initialized()) return conflict(fn);
  return failure(ACL_ERROR_API_NOT_SUPPORT, ErrorCode::kNotSupported, fn,
                 "not supported: Cohort runs no models, so there is nothing to subscribe to");
}

// Reading subscription data: whatever opInfo points to, it is not such data.
Outcome noData(const char* fn, const void* opInfo) {
  if (initialized()) return conflict(fn);
  if (opInfo == nullptr) return invalidArgument(fn, "opInfo is null");
  return invalidArgument(fn,
                      "opInfo is not subscription data (Cohort runs no models, so "
                      "aclprofModelSubscribe never delivers any)");
}

// For the readers that return a value rather than an aclError.
void noteNoData(const char* fn, const void* opInfo) {
  apiCallAnyTime(fn, [&]() -> Outcome { return noData(fn, opInfo); });
}

}  // namespace
}  // namespace cohort::acl::prof

namespace prof = cohort::acl::prof;

aclError aclprofModelSubscribe(uint32_t /*modelId*/,
                               const aclprofSubscribeConfig* /*profSubscribeConfig*/) {
  return apiCallAnyTime("aclprofModelSubscribe",
                  [&]() -> Outcome { return prof::unsupported("aclprofModelSubscribe"); });
}

aclError aclprofModelUnSubscribe(uint32_t /*modelId*/) {
  return apiCallAnyTime("aclprofModelUnSubscribe",
                  [&]() -> Outcome { return prof::unsupported("aclprofModelUnSubscribe"); });
}

aclprofSubscribeConfig* aclprofCreateSubscribeConfig(int8_t /*timeInfoSwitch*/,
                                                     aclprofAicoreMetrics /*aicoreMetrics*/,
                                                     void* /*fd*/) {
  apiCallAnyTime("aclprofCreateSubscribeConfig",
           [&]() -> Outcome { return prof::unsupported("aclprofCreateSubscribeConfig"); });
  return nullptr;
}

aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig* /*profSubscribeConfig*/) {
  return apiCallAnyTime("aclprofDestroySubscribeConfig",
                  [&]() -> Outcome { return prof::unsupported("aclprofDestroySubscribeConfig"); });
}

aclError aclprofGetOpDescSize(size_t* /*opDescSize*/) {
  return apiCallAnyTime("aclprofGetOpDescSize",
                  [&]() -> Outcome { return prof::unsupported("aclprofGetOpDescSize"); });
}

aclError aclprofGetOpNum(const void* opInfo, size_t /*opInfoLen*/, uint32_t* /*opNumber*/) {
  return apiCallAnyTime("aclprofGetOpNum",
                  [&]() -> Outcome { return prof::noData("aclprofGetOpNum", opInfo); });
}

aclError aclprofGetOpTypeLen(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/,
                             size_t* /*opTypeLen*/) {
  return apiCallAnyTime("aclprofGetOpTypeLen",
                  [&]() -> Outcome { return prof::noData("aclprofGetOpTypeLen", opInfo); });
}

aclError aclprofGetOpType(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/,
                          char* /*opType*/, size_t /*opTypeLen*/) {
  return apiCallAnyTime("aclprofGetOpType",
                  [&]() -> Outcome { return prof::noData("aclprofGetOpType", opInfo); });
}

aclError aclprofGetOpNameLen(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/,
                             size_t* /*opNameLen*/) {
  return apiCallAnyTime("aclprofGetOpNameLen",
                  [&]() -> Outcome { return prof::noData("aclprofGetOpNameLen", opInfo); });
}

aclError aclprofGetOpName(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/,
                          char* /*opName*/, size_t /*opNameLen*/) {
  return apiCallAnyTime("aclprofGetOpName",
                  [&]() -> Outcome { return prof::noData("aclprofGetOpName", opInfo); });
}

uint64_t aclprofGetOpStart(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/) {
  prof::noteNoData("aclprofGetOpStart", opInfo);
  return 0;
}

uint64_t aclprofGetOpEnd(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/) {
  prof::noteNoData("aclprofGetOpEnd", opInfo);
  return 0;
}

uint64_t aclprofGetOpDuration(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/) {
  prof::noteNoData("aclprofGetOpDuration", opInfo);
  return 0;
}

size_t aclprofGetModelId(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/) {
  prof::noteNoData("aclprofGetModelId", opInfo);
  return 0;
}

aclprofSubscribeOpFlag aclprofGetOpFlag(const void* opInfo, size_t /*opInfoLen*/,
                                        uint32_t /*index*/) {
  prof::noteNoData("aclprofGetOpFlag", opInfo);
  return ACL_SUBSCRIBE_NONE;
}

const char* aclprofGetOpAttriValue(const void* opInfo, size_t /*opInfoLen*/, uint32_t /*index*/,
                                   aclprofSubscribeOpAttri /*attri*/) {
  prof::noteNoData("aclprofGetOpAttriValue", opInfo);
  return nullptr;
}
