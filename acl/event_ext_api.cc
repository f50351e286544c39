// Events beyond the basics (aclrtCreateEventExWithFlag ... aclrtIpcOpenEventHandle).
#include <algorithm>
#include <cstring>

#include "acl/entry_names.h"
#include "cohort/runtime_capture.h"
#include "acl/registry.h"

namespace {

using cohort::acl::Registry;

constexpr uint32_t kExFlags =
    ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS;
// What aclrtGetEventAvailNum counts down from: an Ascend 910B device's events.
constexpr std::size_t kEventBudget = 65536;

static_assert(sizeof(aclrtIpcEventHandle) == sizeof(rt::MemHandle::bytes),
              "an IPC event handle carries a runtime memory handle");

Outcome describe(const char* fn, aclrtEvent event, rt::EventDescription* d) {
  if (event == nullptr) return nullArgument(fn, "event");
  return rt::eventDescribe(toEvent(event), d);
}

// CANN refuses these for ACL_EVENT_IPC events.
Outcome refuseIpc(const char* fn, const rt::EventDescription& d) {
  if (!d.ipc) return Status::Ok();
  return unsupportedCase(fn, "not for ACL_EVENT_IPC events");
}

// Both WithTimeout and WithFlag: the wait fails the stream after `seconds` (0: never,
// which COHORT_EXEC_TIMEOUT bounds).
Outcome waitWithTimeout(const char* fn, aclrtStream stream, aclrtEvent event, long seconds) {
  if (event == nullptr) return nullArgument(fn, "event");
  ACL_RETURN_IF_FAILED(needStream(fn, stream));
  return rt::streamWaitEventFor(toStream(stream), toEvent(event),
                                seconds > 0 ? seconds * 1000 : -1);
}

// The EXTERNAL flags tie a captured model to the streams outside it: they need a
// capturing stream.
Outcome needCapture(const char* fn, aclrtStream stream, const char* flag) {
  rt::CaptureDescription capture;
  ACL_RETURN_IF_FAILED(withName(fn, rt::captureDescribe(toStream(stream), &capture)));
  if (capture.status == rt::CaptureStatus::kNone) {
    return failure(ACL_ERROR_RT_STREAM_NOT_CAPTURED, ErrorCode::kInvalidUsage, fn,
                   "{} is for a stream that captures a model, and this one does not", flag);
  }
  return Status::Ok();
}

}  // namespace

aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t flag) {
  const char* fn = "aclrtCreateEventExWithFlag";
  return apiCall(fn, [&]() -> Outcome {
    if (event == nullptr) return nullArgument(fn, "event");
    const bool ipc = (flag & ACL_EVENT_IPC) != 0;
    if (ipc && flag != ACL_EVENT_IPC) {
      return invalidArgument(fn, "flag {:#x}: ACL_EVENT_IPC cannot be combined with other flags",
                             flag);
    }
    if (!ipc && (flag & ~kExFlags) != 0) {
      return invalidArgument(fn,
                             "flag {:#x} has bits {:#x} this call does not take (ACL_EVENT_SYNC, "
                             "ACL_EVENT_TIME_LINE, ACL_EVENT_CAPTURE_STREAM_PROGRESS, or "
                             "ACL_EVENT_IPC alone)",
                             flag, flag & ~kExFlags);
    }
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    rt::Event* created = nullptr;
    COHORT_RETURN_IF_ERROR(ipc ? rt::eventCreateIpc(&created) : rt::eventCreate(&created));
    Registry::get().addEvent(created);
    *event = created;
    return Status::Ok();
  });
}

aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag) {
  const char* fn = "aclrtRecordEventWithFlag";
  return apiCall(fn, [&]() -> Outcome {
    if (event == nullptr) return nullArgument(fn, "event");
    if (flag != ACL_EVENT_RECORD_DEFAULT && flag != ACL_EVENT_RECORD_EXTERNAL) {
      return invalidArgument(fn,
                             "flag {} is neither ACL_EVENT_RECORD_DEFAULT (0) nor "
                             "ACL_EVENT_RECORD_EXTERNAL (1)",
                             flag);
    }
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    if (flag == ACL_EVENT_RECORD_EXTERNAL) {
      ACL_RETURN_IF_FAILED(needCapture(fn, stream, "ACL_EVENT_RECORD_EXTERNAL"));
      return rt::eventRecordExternal(toEvent(event), toStream(stream));
    }
    return rt::eventRecord(toEvent(event), toStream(stream));
  });
}

aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout) {
  const char* fn = "aclrtStreamWaitEventWithTimeout";
  return apiCall(fn, [&]() -> Outcome {
    if (timeout < 0) {
      return invalidArgument(fn, "timeout {} s is invalid (0 never times out, > 0 seconds)",
                             timeout);
    }
    return waitWithTimeout(fn, stream, event, timeout);
  });
}

aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event, uint32_t timeout,
                                      uint32_t flag) {
  const char* fn = "aclrtStreamWaitEventWithFlag";
  return apiCall(fn, [&]() -> Outcome {
    if (flag != ACL_EVENT_WAIT_DEFAULT && flag != ACL_EVENT_WAIT_EXTERNAL) {
      return invalidArgument(fn,
                             "flag {} is neither ACL_EVENT_WAIT_DEFAULT (0) nor "
                             "ACL_EVENT_WAIT_EXTERNAL (1)",
                             flag);
    }
    if (flag == ACL_EVENT_WAIT_EXTERNAL) {
      ACL_RETURN_IF_FAILED(needStream(fn, stream));
      ACL_RETURN_IF_FAILED(needCapture(fn, stream, "ACL_EVENT_WAIT_EXTERNAL"));
    }
    return waitWithTimeout(fn, stream, event, static_cast<long>(timeout));
  });
}

aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t* timestamp) {
  const char* fn = "aclrtEventGetTimestamp";
  return apiCall(fn, Site::kEventTime, [&]() -> Outcome {
    if (timestamp == nullptr) return nullArgument(fn, "timestamp");
    rt::EventDescription d;
    ACL_RETURN_IF_FAILED(describe(fn, event, &d));
    ACL_RETURN_IF_FAILED(refuseIpc(fn, d));
    if (!d.recorded) {
      return cohort::makeError(ErrorCode::kInvalidUsage, "{}: the event was never recorded", fn);
    }
    if (!d.completed) {
      return cohort::makeError(ErrorCode::kNotReady,
                               "{}: the event's latest record has not run yet (synchronize "
                               "first)",
                               fn);
    }
    *timestamp = d.timestampUs;
    return Status::Ok();
  });
}

aclError aclrtGetEventId(aclrtEvent event, uint32_t* eventId) {
  const char* fn = "aclrtGetEventId";
  return apiCall(fn, [&]() -> Outcome {
    if (eventId == nullptr) return nullArgument(fn, "eventId");
    rt::EventDescription d;
    ACL_RETURN_IF_FAILED(describe(fn, event, &d));
    ACL_RETURN_IF_FAILED(refuseIpc(fn, d));
    *eventId = d.id;
    return Status::Ok();
  });
}

aclError aclrtGetEventAvailNum(uint32_t* eventCount) {
  const char* fn = "aclrtGetEventAvailNum";
  return apiCall(fn, [&]() -> Outcome {
    if (eventCount == nullptr) return nullArgument(fn, "eventCount");
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    std::size_t live = 0;
    COHORT_RETURN_IF_ERROR(rt::eventCount(&live));
    *eventCount = static_cast<uint32_t>(kEventBudget - std::min(live, kEventBudget));
    return Status::Ok();
  });
}

aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus* status) {
  const char* fn = "aclrtQueryEventWaitStatus";
  return apiCall(fn, [&]() -> Outcome {
    if (status == nullptr) return nullArgument(fn, "status");
    rt::EventDescription d;
    ACL_RETURN_IF_FAILED(describe(fn, event, &d));
    ACL_RETURN_IF_FAILED(refuseIpc(fn, d));
    *status = d.waitsPending ? ACL_EVENT_WAIT_STATUS_NOT_READY : ACL_EVENT_WAIT_STATUS_COMPLETE;
    return Status::Ok();
  });
}

aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle* handle) {
  const char* fn = "aclrtIpcGetEventHandle";
  return apiCall(fn, [&]() -> Outcome {
    if (event == nullptr) return nullArgument(fn, "event");
    if (handle == nullptr) return nullArgument(fn, "handle");
    rt::EventDescription d;
    COHORT_RETURN_IF_ERROR(rt::eventDescribe(toEvent(event), &d));
    if (!d.ipc) {
      return invalidArgument(fn,
                             "{} was not created by aclrtCreateEventExWithFlag with "
                             "ACL_EVENT_IPC",
                             event);
    }
    rt::MemHandle h;
    COHORT_RETURN_IF_ERROR(rt::eventIpcHandle(toEvent(event), &h));
    std::memcpy(handle->reserved, h.bytes, sizeof(handle->reserved));
    return Status::Ok();
  });
}

aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent* event) {
  const char* fn = "aclrtIpcOpenEventHandle";
  return apiCall(fn, [&]() -> Outcome {
    if (event == nullptr) return nullArgument(fn, "event");
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    rt::MemHandle h;
    std::memcpy(h.bytes, handle.reserved, sizeof(h.bytes));
    rt::Event* opened = nullptr;
    COHORT_RETURN_IF_ERROR(rt::eventOpenIpc(h, &opened));
    Registry::get().addEvent(opened);
    *event = opened;
    return Status::Ok();
  });
}
