#include "hccl/api_call.h"

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "hccl/result_map.h"

namespace cohort::hccl {

namespace {
// HCCL's log errNo: (module << 24) + (submodule << 16) + result, module 5 (HCCL),
// submodule 0 (the HCCL C API).
constexpr std::uint64_t kHcclModuleId = 5;
}  // namespace

Outcome nullPointer(const char* function, const char* parameter) {
  return Outcome(HCCL_E_PTR, makeError(ErrorCode::kInvalidArgument,
                                       "{}: parameter {} is a null pointer", function, parameter));
}

Outcome invalidParameter(const char* function, const std::string& value, const char* parameter,
                         const std::string& expected, HcclResult result) {
  return Outcome(result,
                 makeError(ErrorCode::kInvalidArgument,
                           "EI0003: Failed to verify parameters of operator {}. Value {} for "
                           "parameter {} is invalid. The expected value is {}.",
                           function, value, parameter, expected));
}

Outcome nothingToDo(const char* function, const char* what) {
  COHORT_LOG(kWarn, "hccl", "{}: {}: nothing to do, HCCL_SUCCESS", function, what);
  return Status::Ok();
}

Outcome requireValidEnvironment() {
  const Status s = Config::global().status();
  if (s.ok()) return s;
  return Outcome(HCCL_E_PARA, makeError(s.code(), "EI0001: {}", s.message()));
}

HcclResult finish(const char* function, const Outcome& outcome) {
  if (outcome.ok()) return HCCL_SUCCESS;
  const HcclResult result = outcome.code >= 0 ? static_cast<HcclResult>(outcome.code)
                                              : toHcclResult(outcome.status.code());
  const std::uint64_t errNo = (kHcclModuleId << 24) + static_cast<std::uint64_t>(result);
  if (result == HCCL_E_AGAIN) {
    COHORT_LOG(kWarn, "hccl", "{}: errNo[0x{:016x}] {} ({}): {}", function, errNo,
               resultName(result), static_cast<int>(result), outcome.status.message());
  } else {
    COHORT_LOG(kError, "hccl", "{}: errNo[0x{:016x}] {} ({}): {}", function, errNo,
               resultName(result), static_cast<int>(result), outcome.status.message());
  }
  (void)recordError(outcome.status.ok() ? Status(ErrorCode::kInternal, "unexplained failure")
                                        : outcome.status);
  return result;
}

}  // namespace cohort::hccl
