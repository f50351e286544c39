// Streams and host callbacks (aclrtCreateStream ... aclrtUnSubscribeReport).
#include <pthread.h>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/report_hub.h"
#include "acl/stream_attrs.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

using cohort::acl::ReportHub;

constexpr uint32_t kKnownStreamFlags = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC |
                                       ACL_STREAM_PERSISTENT | ACL_STREAM_HUGE |
                                       ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;

Outcome createStream(const char* function, aclrtStream* stream, uint32_t priority = 0,
                     uint32_t flag = 0) {
  if (stream == nullptr) return nullArgument(function, "stream");
  ACL_RETURN_IF_FAILED(requireDevice(function));
  rt::Stream* created = nullptr;
  COHORT_RETURN_IF_ERROR(rt::streamCreate(&created));
  COHORT_RETURN_IF_ERROR(cohort::acl::continueOnFailure(created));
  // For aclrtStreamGetFlags / aclrtStreamGetPriority (stream_ext_api.cc).
  if (priority != 0 || flag != 0) cohort::acl::StreamAttrs::get().created(created, flag, priority);
  *stream = created;
  return Status::Ok();
}

// A synchronize of a stream aclrtStreamStop stopped fails with
// ACL_ERROR_RT_INTERNAL_ERROR on CANN, whatever it held.
Outcome synchronized(aclrtStream stream, Status s) {
  if (s.code() != ErrorCode::kAborted) return s;
  rt::StreamDescription d;
  if (rt::streamDescribe(toStream(stream), &d).ok() && d.stopped) {
    return Outcome(ACL_ERROR_RT_INTERNAL_ERROR, std::move(s));
  }
  return s;
}

}  // namespace

aclError aclrtCreateStream(aclrtStream* stream) {
  return apiCall("aclrtCreateStream",
                 [&]() -> Outcome { return createStream("aclrtCreateStream", stream); });
}

aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag) {
  const char* fn = "aclrtCreateStreamWithConfig";
  return apiCall(fn, [&]() -> Outcome {
    if ((flag & ~kKnownStreamFlags) != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: flag {:#x} has unknown bits {:#x} (known: ACL_STREAM_*)", fn,
                               flag, flag & ~kKnownStreamFlags);
    }
    return createStream(fn, stream, priority, flag);
  });
}

aclError aclrtDestroyStream(aclrtStream stream) {
  return apiCall("aclrtDestroyStream", [&]() -> Outcome {
    if (stream == nullptr) return nullArgument("aclrtDestroyStream", "stream");
    COHORT_RETURN_IF_ERROR(rt::streamDestroy(toStream(stream)));
    ReportHub::get().forgetStream(toStream(stream));
    return Status::Ok();
  });
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  return apiCall("aclrtSynchronizeStream", Site::kStreamSync, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needStream("aclrtSynchronizeStream", stream));
    return synchronized(stream, rt::streamSynchronize(toStream(stream), -1));
  });
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  const char* fn = "aclrtSynchronizeStreamWithTimeout";
  return apiCall(fn, Site::kStreamSync, [&]() -> Outcome {
    if (timeout < -1) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: timeout {} ms is invalid (-1 waits forever, >= 0 ms)", fn,
                               timeout);
    }
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return synchronized(stream, rt::streamSynchronize(toStream(stream), timeout));
  });
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  return apiCall("aclrtStreamWaitEvent", [&]() -> Outcome {
    if (event == nullptr) return nullArgument("aclrtStreamWaitEvent", "event");
    ACL_RETURN_IF_FAILED(needStream("aclrtStreamWaitEvent", stream));
    return rt::streamWaitEvent(toStream(stream), toEvent(event));
  });
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return apiCall("aclrtSubscribeReport", [&]() -> Outcome {
    return ReportHub::get().subscribe(threadId, toStream(stream));
  });
}

aclError aclrtLaunchCallback(aclrtCallback fn, void* userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream) {
  return apiCall("aclrtLaunchCallback", [&]() -> Outcome {
    if (fn == nullptr) return nullArgument("aclrtLaunchCallback", "fn");
    if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtLaunchCallback: blockType {} is neither "
                               "ACL_CALLBACK_NO_BLOCK (0) nor ACL_CALLBACK_BLOCK (1)",
                               static_cast<int>(blockType));
    }
    return ReportHub::get().launch(fn, userData, blockType == ACL_CALLBACK_BLOCK, toStream(stream));
  });
}

aclError aclrtProcessReport(int32_t timeout) {
  return apiCall("aclrtProcessReport", [&]() -> Outcome {
    if (timeout < -1) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtProcessReport: timeout {} ms is invalid (-1 waits forever, "
                               ">= 0 ms)",
                               timeout);
    }
    return ReportHub::get().process(static_cast<uint64_t>(pthread_self()), timeout);
  });
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return apiCall("aclrtUnSubscribeReport", [&]() -> Outcome {
    return ReportHub::get().unsubscribe(threadId, toStream(stream));
  });
}

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
  const char* fn = "aclrtSetStreamFailureMode";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: mode {} is neither ACL_CONTINUE_ON_FAILURE (0) nor "
                               "ACL_STOP_ON_FAILURE (1)", fn, mode);
    }
    return rt::streamSetFailureMode(toStream(stream), mode == ACL_CONTINUE_ON_FAILURE);
  });
}
