// Events (aclrtCreateEvent ... aclrtEventElapsedTime).
#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/registry.h"
#include "cohort/runtime.h"
#include "cohort/runtime_capture.h"
#include "common/error.h"

namespace {

using cohort::acl::Registry;

constexpr uint32_t kKnownEventFlags = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS |
                                      ACL_EVENT_TIME_LINE | ACL_EVENT_DEVICE_USE_ONLY |
                                      ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;

// `external`: ACL_EVENT_EXTERNAL's, a flag that records set and resets clear.
Outcome createEvent(const char* function, aclrtEvent* event, bool external = false) {
  if (event == nullptr) return nullArgument(function, "event");
  ACL_RETURN_IF_FAILED(requireDevice(function));
  rt::Event* created = nullptr;
  COHORT_RETURN_IF_ERROR(external ? rt::eventCreateExternal(&created) : rt::eventCreate(&created));
  Registry::get().addEvent(created);
  *event = created;
  return Status::Ok();
}

// ok: complete; kNotReady: pending; anything else is an error.
Outcome queryEvent(const char* function, aclrtEvent event, bool* complete) {
  if (event == nullptr) return nullArgument(function, "event");
  Status st = rt::eventQuery(toEvent(event));
  if (!st.ok() && st.code() != ErrorCode::kNotReady) return st;
  *complete = st.ok();
  return Status::Ok();
}

}  // namespace

aclError aclrtCreateEvent(aclrtEvent* event) {
  return apiCall("aclrtCreateEvent",
                 [&]() -> Outcome { return createEvent("aclrtCreateEvent", event); });
}

aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  const char* fn = "aclrtCreateEventWithFlag";
  return apiCall(fn, [&]() -> Outcome {
    if ((flag & ~kKnownEventFlags) != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: flag {:#x} has unknown bits {:#x} (known: ACL_EVENT_*)", fn,
                               flag, flag & ~kKnownEventFlags);
    }
    if ((flag & ACL_EVENT_EXTERNAL) != 0 && flag != ACL_EVENT_EXTERNAL) {
      return invalidArgument(fn, "flag {:#x}: ACL_EVENT_EXTERNAL cannot be combined with other "
                             "flags", flag);
    }
    return createEvent(fn, event, flag == ACL_EVENT_EXTERNAL);
  });
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  return apiCall("aclrtDestroyEvent", [&]() -> Outcome {
    if (event == nullptr) return nullArgument("aclrtDestroyEvent", "event");
    COHORT_RETURN_IF_ERROR(rt::eventDestroy(toEvent(event)));
    Registry::get().removeEvent(toEvent(event));
    return Status::Ok();
  });
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  return apiCall("aclrtRecordEvent", [&]() -> Outcome {
    if (event == nullptr) return nullArgument("aclrtRecordEvent", "event");
    ACL_RETURN_IF_FAILED(needStream("aclrtRecordEvent", stream));
    return rt::eventRecord(toEvent(event), toStream(stream));
  });
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  return apiCall("aclrtResetEvent", [&]() -> Outcome {
    bool complete = false;
    ACL_RETURN_IF_FAILED(queryEvent("aclrtResetEvent", event, &complete));  // a live event
    rt::EventDescription description;
    if (rt::eventDescribe(toEvent(event), &description).ok() && description.ipc) {
      return Outcome(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     cohort::makeError(ErrorCode::kNotSupported,
                                       "aclrtResetEvent: not supported for ACL_EVENT_IPC events"));
    }
    ACL_RETURN_IF_FAILED(needStream("aclrtResetEvent", stream));
    // In stream order, so that records queued before the reset do not undo it. An
    // event destroyed meanwhile has nothing left to reset.
    rt::Event* e = toEvent(event);
    return rt::launchKernel(toStream(stream), [e](rt::Stream*) {
      Status st = rt::eventReset(e);
      return st.code() == ErrorCode::kInvalidHandle ? Status::Ok() : st;
    });
  });
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status) {
  return apiCall("aclrtQueryEventStatus", [&]() -> Outcome {
    if (status == nullptr) return nullArgument("aclrtQueryEventStatus", "status");
    bool complete = false;
    ACL_RETURN_IF_FAILED(queryEvent("aclrtQueryEventStatus", event, &complete));
    *status = complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    return Status::Ok();
  });
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus* status) {
  return apiCall("aclrtQueryEvent", [&]() -> Outcome {
    if (status == nullptr) return nullArgument("aclrtQueryEvent", "status");
    bool complete = false;
    ACL_RETURN_IF_FAILED(queryEvent("aclrtQueryEvent", event, &complete));
    *status = complete ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    return Status::Ok();
  });
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  return apiCall("aclrtSynchronizeEvent", Site::kEventSync, [&]() -> Outcome {
    if (event == nullptr) return nullArgument("aclrtSynchronizeEvent", "event");
    return rt::eventSynchronize(toEvent(event), -1);
  });
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
  const char* fn = "aclrtSynchronizeEventWithTimeout";
  return apiCall(fn, Site::kEventSync, [&]() -> Outcome {
    if (event == nullptr) return nullArgument(fn, "event");
    if (timeout < -1) return badTimeout(fn, timeout);
    return rt::eventSynchronize(toEvent(event), timeout);
  });
}

aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  const char* fn = "aclrtEventElapsedTime";
  return apiCall(fn, Site::kEventTime, [&]() -> Outcome {
    if (ms == nullptr) return nullArgument(fn, "ms");
    if (startEvent == nullptr || endEvent == nullptr) return nullArgument(fn, "an event");
    float elapsed = 0;
    COHORT_RETURN_IF_ERROR(rt::eventElapsedTime(&elapsed, toEvent(startEvent), toEvent(endEvent)));
    if (elapsed < 0) {
      return Outcome(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
                     cohort::makeError(ErrorCode::kInvalidUsage,
                                       "{}: the end event completed {:.3f} ms before the start "
                                       "event",
                                       fn, -elapsed));
    }
    *ms = elapsed;
    return Status::Ok();
  });
}
