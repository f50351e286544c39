// Execution control: the op timeouts (which bound what Cohort's tasks wait for), the
// calling thread's last task, and the float overflow status that Cohort does not
// record (aclrtSetOpWaitTimeout ... aclrtNpuClearFloatOverFlowStatus).
#include <cstdint>
#include <limits>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/unsupported.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

// Timeouts take effect in whole milliseconds (aclrtGetOpTimeOutInterval).
constexpr uint64_t kIntervalUs = 1000;

constexpr const char* kNoOverflowRecord =
    "Cohort's arithmetic does not record float overflows, so there is no overflow status";

}  // namespace

aclError aclrtSetOpWaitTimeout(uint32_t timeout) {
  return apiCall("aclrtSetOpWaitTimeout", [&]() -> Outcome {
    rt::setEventWaitTimeout(1000L * timeout);  // 0: never
    return Status::Ok();
  });
}

aclError aclrtSetOpExecuteTimeOut(uint32_t timeout) {
  return apiCall("aclrtSetOpExecuteTimeOut", [&]() -> Outcome {
    rt::setTaskWaitTimeout(1000L * timeout);  // 0: the maximum, never
    return Status::Ok();
  });
}

aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout) {
  return apiCall("aclrtSetOpExecuteTimeOutWithMs", [&]() -> Outcome {
    rt::setTaskWaitTimeout(static_cast<long>(timeout));
    return Status::Ok();
  });
}

aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t* actualTimeout) {
  const char* fn = "aclrtSetOpExecuteTimeOutV2";
  return apiCall(fn, [&]() -> Outcome {
    if (actualTimeout == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: actualTimeout is null", fn);
    }
    const uint64_t maxMs = static_cast<uint64_t>(std::numeric_limits<long>::max());
    const uint64_t ms = timeout / kIntervalUs + (timeout % kIntervalUs != 0 ? 1 : 0);
    if (ms > maxMs) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: timeout {} us is too long", fn,
                               timeout);
    }
    rt::setTaskWaitTimeout(static_cast<long>(ms));
    *actualTimeout = ms == 0 ? std::numeric_limits<uint64_t>::max() : ms * kIntervalUs;
    return Status::Ok();
  });
}

aclError aclrtGetOpExecuteTimeout(uint32_t* const timeoutMs) {
  const char* fn = "aclrtGetOpExecuteTimeout";
  return apiCall(fn, [&]() -> Outcome {
    if (timeoutMs == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: timeoutMs is null", fn);
    }
    const long ms = rt::taskWaitTimeoutMs();
    const long most = static_cast<long>(std::numeric_limits<uint32_t>::max() - 1);
    *timeoutMs = ms == 0 ? std::numeric_limits<uint32_t>::max()
                         : static_cast<uint32_t>(ms < most ? ms : most);
    return Status::Ok();
  });
}

aclError aclrtGetOpTimeOutInterval(uint64_t* interval) {
  return apiCall("aclrtGetOpTimeOutInterval", [&]() -> Outcome {
    if (interval == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtGetOpTimeOutInterval: interval is null");
    }
    *interval = kIntervalUs;
    return Status::Ok();
  });
}

aclError aclrtGetThreadLastTaskId(uint32_t* taskId) {
  const char* fn = "aclrtGetThreadLastTaskId";
  return apiCall(fn, [&]() -> Outcome {
    if (taskId == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: taskId is null", fn);
    }
    uint64_t index = 0;
    COHORT_RETURN_IF_ERROR(withName(fn, rt::threadLastTask(&index)));
    *taskId = static_cast<uint32_t>(index);
    return Status::Ok();
  });
}

aclError aclrtGetOverflowStatus(void*, size_t, aclrtStream) {
  return cohort::acl::notSupported("aclrtGetOverflowStatus", kNoOverflowRecord);
}
aclError aclrtResetOverflowStatus(aclrtStream) {
  return cohort::acl::notSupported("aclrtResetOverflowStatus", kNoOverflowRecord);
}
aclError aclrtGetFloatOverflowStatus(void*, uint64_t, aclrtStream) {
  return cohort::acl::notSupported("aclrtGetFloatOverflowStatus", kNoOverflowRecord);
}
aclError aclrtResetFloatOverflowStatus(aclrtStream) {
  return cohort::acl::notSupported("aclrtResetFloatOverflowStatus", kNoOverflowRecord);
}
aclError aclrtNpuGetFloatOverFlowStatus(void*, uint64_t, uint32_t, aclrtStream) {
  return cohort::acl::notSupported("aclrtNpuGetFloatOverFlowStatus", kNoOverflowRecord);
}
aclError aclrtNpuClearFloatOverFlowStatus(uint32_t, aclrtStream) {
  return cohort::acl::notSupported("aclrtNpuClearFloatOverFlowStatus", kNoOverflowRecord);
}
