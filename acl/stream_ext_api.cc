// Streams beyond the basics (aclrtCreateStreamV2 ... aclrtPersistentTaskClean).
#include <cstring>
#include <mutex>
#include <set>

#include "acl/entry_names.h"
#include "acl/report_hub.h"
#include "acl/stream_attrs.h"
#include "cohort/runtime_capture.h"

namespace {

using cohort::acl::StreamAttrs;
using cohort::acl::StreamSettings;

constexpr uint32_t kKnownStreamFlags = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC |
                                       ACL_STREAM_PERSISTENT | ACL_STREAM_HUGE |
                                       ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;
constexpr uint32_t kLowestPriority = 7;  // priorities run 0 (highest) .. 7
// What aclrtGetStreamAvailableNum counts down from: an Ascend 910B device's streams.
constexpr int kStreamBudget = 1984;

// The configuration handles made by aclrtCreateStreamConfigHandle.
std::mutex gHandlesMu;
std::set<const aclrtStreamConfigHandle*> gHandles;  // guarded by gHandlesMu

bool liveHandle(const aclrtStreamConfigHandle* handle) {
  std::lock_guard<std::mutex> lock(gHandlesMu);
  return gHandles.count(handle) != 0;
}

// An integer option's value from 4 or 8 bytes.
Outcome readInteger(const char* fn, const void* value, size_t size, uint64_t* out) {
  if (size == sizeof(uint32_t)) {
    uint32_t v = 0;
    std::memcpy(&v, value, sizeof(v));
    *out = v;
  } else if (size == sizeof(uint64_t)) {
    std::memcpy(out, value, sizeof(*out));
  } else {
    return invalidArgument(fn, "valueSize {} is neither 4 nor 8 bytes", size);
  }
  return Status::Ok();
}

Outcome checkFlags(const char* fn, uint64_t flags) {
  if ((flags & ~static_cast<uint64_t>(kKnownStreamFlags)) != 0) {
    return invalidArgument(fn, "flag {:#x} has unknown bits {:#x} (known: ACL_STREAM_*)", flags,
                           flags & ~static_cast<uint64_t>(kKnownStreamFlags));
  }
  return Status::Ok();
}

Outcome checkPriority(const char* fn, uint64_t priority) {
  if (priority > kLowestPriority) {
    return invalidArgument(fn, "priority {} is out of range [0, {}]", priority, kLowestPriority);
  }
  return Status::Ok();
}

Outcome checkSwitch(const char* fn, const char* what, uint32_t value) {
  if (value > 1) return invalidArgument(fn, "{} {} is neither 0 (off) nor 1 (on)", what, value);
  return Status::Ok();
}

}  // namespace

aclrtStreamConfigHandle* aclrtCreateStreamConfigHandle(void) {
  auto* handle = new (std::nothrow) aclrtStreamConfigHandle{};
  if (handle == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(gHandlesMu);
  gHandles.insert(handle);
  return handle;
}

aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle* handle) {
  const char* fn = "aclrtDestroyStreamConfigHandle";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    {
      std::lock_guard<std::mutex> lock(gHandlesMu);
      if (gHandles.erase(handle) == 0) {
        return invalidArgument(fn, "{} is not a live configuration handle",
                               static_cast<void*>(handle));
      }
    }
    delete handle;
    return Status::Ok();
  });
}

aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle* handle, aclrtStreamConfigAttr attr,
                                 const void* attrValue, size_t valueSize) {
  const char* fn = "aclrtSetStreamConfigOpt";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    if (attrValue == nullptr) return nullArgument(fn, "attrValue");
    if (!liveHandle(handle)) {
      return invalidArgument(fn, "{} is not a live configuration handle",
                             static_cast<void*>(handle));
    }
    uint64_t value = 0;
    switch (attr) {
      case ACL_RT_STREAM_WORK_ADDR_PTR:
        if (valueSize != sizeof(void*)) {
          return invalidArgument(fn,
                                 "ACL_RT_STREAM_WORK_ADDR_PTR takes a pointer ({} bytes), "
                                 "not {} bytes",
                                 sizeof(void*), valueSize);
        }
        std::memcpy(&handle->workptr, attrValue, sizeof(void*));
        return Status::Ok();
      case ACL_RT_STREAM_WORK_SIZE:
        ACL_RETURN_IF_FAILED(readInteger(fn, attrValue, valueSize, &value));
        handle->workSize = static_cast<size_t>(value);
        return Status::Ok();
      case ACL_RT_STREAM_FLAG:
        ACL_RETURN_IF_FAILED(readInteger(fn, attrValue, valueSize, &value));
        ACL_RETURN_IF_FAILED(checkFlags(fn, value));
        handle->flag = static_cast<size_t>(value);
        return Status::Ok();
      case ACL_RT_STREAM_PRIORITY:
        ACL_RETURN_IF_FAILED(readInteger(fn, attrValue, valueSize, &value));
        ACL_RETURN_IF_FAILED(checkPriority(fn, value));
        handle->priority = static_cast<uint32_t>(value);
        return Status::Ok();
    }
    return invalidArgument(fn, "attr {} is not an aclrtStreamConfigAttr (0..3)",
                           static_cast<int>(attr));
  });
}

aclError aclrtCreateStreamV2(aclrtStream* stream, const aclrtStreamConfigHandle* handle) {
  const char* fn = "aclrtCreateStreamV2";
  return apiCall(fn, [&]() -> Outcome {
    if (stream == nullptr) return nullArgument(fn, "stream");
    if (handle == nullptr) return nullArgument(fn, "handle");
    if (!liveHandle(handle)) {
      return invalidArgument(fn, "{} is not a live configuration handle",
                             static_cast<const void*>(handle));
    }
    ACL_RETURN_IF_FAILED(checkFlags(fn, handle->flag));
    ACL_RETURN_IF_FAILED(checkPriority(fn, handle->priority));
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    rt::Stream* created = nullptr;
    COHORT_RETURN_IF_ERROR(rt::streamCreate(&created));
    COHORT_RETURN_IF_ERROR(cohort::acl::continueOnFailure(created));
    StreamAttrs::get().created(created, static_cast<uint32_t>(handle->flag), handle->priority);
    *stream = created;
    return Status::Ok();
  });
}

aclError aclrtDestroyStreamForce(aclrtStream stream) {
  const char* fn = "aclrtDestroyStreamForce";
  return apiCall(fn, [&]() -> Outcome {
    if (stream == nullptr) return nullArgument(fn, "stream");
    rt::StreamDescription d;
    COHORT_RETURN_IF_ERROR(rt::streamDescribe(toStream(stream), &d));
    if (d.isDefault) {
      return invalidArgument(fn, "{} is a default stream; aclrtResetDevice releases it", stream);
    }
    // The device has the queued work already: it runs on, but the call never waits.
    COHORT_RETURN_IF_ERROR(rt::streamDestroyForce(toStream(stream)));
    cohort::acl::ReportHub::get().forgetStream(toStream(stream));
    return Status::Ok();
  });
}

aclError aclrtStreamAbort(aclrtStream stream) {
  const char* fn = "aclrtStreamAbort";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return rt::streamAbort(toStream(stream));
  });
}

aclError aclrtStreamStop(aclrtStream stream) {
  const char* fn = "aclrtStreamStop";
  return apiCall(fn, [&]() -> Outcome {
    if (stream == nullptr)
      return invalidArgument(fn, "the default stream (NULL) cannot be stopped");
    return rt::streamStop(toStream(stream));
  });
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status) {
  const char* fn = "aclrtStreamQuery";
  return apiCall(fn, [&]() -> Outcome {
    if (status == nullptr) return nullArgument(fn, "status");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    Status st = rt::streamQuery(toStream(stream));
    if (!st.ok() && st.code() != ErrorCode::kNotReady) return st;
    *status = st.ok() ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
    return Status::Ok();
  });
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t* streamId) {
  const char* fn = "aclrtStreamGetId";
  return apiCall(fn, [&]() -> Outcome {
    if (streamId == nullptr) return nullArgument(fn, "streamId");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    rt::StreamDescription d;
    COHORT_RETURN_IF_ERROR(rt::streamDescribe(toStream(stream), &d));
    *streamId = d.id;
    return Status::Ok();
  });
}

aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t* flags) {
  const char* fn = "aclrtStreamGetFlags";
  return apiCall(fn, [&]() -> Outcome {
    if (flags == nullptr) return nullArgument(fn, "flags");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    StreamSettings s;
    COHORT_RETURN_IF_ERROR(StreamAttrs::get().read(stream, &s));
    *flags = s.flags;
    return Status::Ok();
  });
}

aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t* priority) {
  const char* fn = "aclrtStreamGetPriority";
  return apiCall(fn, [&]() -> Outcome {
    if (priority == nullptr) return nullArgument(fn, "priority");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    StreamSettings s;
    COHORT_RETURN_IF_ERROR(StreamAttrs::get().read(stream, &s));
    *priority = s.priority;
    return Status::Ok();
  });
}

aclError aclrtGetStreamAvailableNum(uint32_t* streamCount) {
  const char* fn = "aclrtGetStreamAvailableNum";
  return apiCall(fn, [&]() -> Outcome {
    if (streamCount == nullptr) return nullArgument(fn, "streamCount");
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    int device = -1;
    COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
    rt::DeviceInfo info;
    COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(device, &info));
    *streamCount = static_cast<uint32_t>(std::max(0, kStreamBudget - info.streamCount));
    return Status::Ok();
  });
}

aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue* value) {
  const char* fn = "aclrtSetStreamAttribute";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    switch (stmAttrType) {
      case ACL_STREAM_ATTR_FAILURE_MODE:
        if (value->failureMode != ACL_CONTINUE_ON_FAILURE &&
            value->failureMode != ACL_STOP_ON_FAILURE) {
          return invalidArgument(fn,
                                 "failureMode {} is neither ACL_CONTINUE_ON_FAILURE (0) nor "
                                 "ACL_STOP_ON_FAILURE (1)",
                                 value->failureMode);
        }
        // The same runtime setting as aclrtSetStreamFailureMode.
        return rt::streamSetFailureMode(toStream(stream),
                                        value->failureMode == ACL_CONTINUE_ON_FAILURE);
      case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: {
        ACL_RETURN_IF_FAILED(checkSwitch(fn, "overflowSwitch", value->overflowSwitch));
        const uint32_t v = value->overflowSwitch;
        return StreamAttrs::get().update(stream, [v](StreamSettings& s) { s.overflowSwitch = v; });
      }
      case ACL_STREAM_ATTR_USER_CUSTOM_TAG: {
        const uint32_t v = value->userCustomTag;
        return StreamAttrs::get().update(stream, [v](StreamSettings& s) { s.userCustomTag = v; });
      }
      case ACL_STREAM_ATTR_CACHE_OP_INFO: {
        ACL_RETURN_IF_FAILED(checkSwitch(fn, "cacheOpInfoSwitch", value->cacheOpInfoSwitch));
        const uint32_t v = value->cacheOpInfoSwitch;
        return StreamAttrs::get().update(stream, [v](StreamSettings& s) { s.cacheOpInfo = v; });
      }
      case ACL_STREAM_ATTR_PRIORITY: {
        ACL_RETURN_IF_FAILED(checkPriority(fn, value->streamPriority));
        const uint32_t v = value->streamPriority;
        return StreamAttrs::get().update(stream, [v](StreamSettings& s) { s.priority = v; });
      }
    }
    return invalidArgument(fn, "stmAttrType {} is not an aclrtStreamAttr (1..5)",
                           static_cast<int>(stmAttrType));
  });
}

aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue* value) {
  const char* fn = "aclrtGetStreamAttribute";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    StreamSettings s;
    COHORT_RETURN_IF_ERROR(StreamAttrs::get().read(stream, &s));
    std::memset(value, 0, sizeof(*value));
    switch (stmAttrType) {
      case ACL_STREAM_ATTR_FAILURE_MODE: {
        rt::StreamDescription d;
        COHORT_RETURN_IF_ERROR(rt::streamDescribe(toStream(stream), &d));
        value->failureMode = d.continueAfterError ? ACL_CONTINUE_ON_FAILURE : ACL_STOP_ON_FAILURE;
        return Status::Ok();
      }
      case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        value->overflowSwitch = s.overflowSwitch;
        return Status::Ok();
      case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        value->userCustomTag = s.userCustomTag;
        return Status::Ok();
      case ACL_STREAM_ATTR_CACHE_OP_INFO:
        value->cacheOpInfoSwitch = s.cacheOpInfo;
        return Status::Ok();
      case ACL_STREAM_ATTR_PRIORITY:
        value->streamPriority = s.priority;
        return Status::Ok();
    }
    return invalidArgument(fn, "stmAttrType {} is not an aclrtStreamAttr (1..5)",
                           static_cast<int>(stmAttrType));
  });
}

aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag) {
  const char* fn = "aclrtSetStreamOverflowSwitch";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkSwitch(fn, "flag", flag));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return StreamAttrs::get().update(stream,
                                     [flag](StreamSettings& s) { s.overflowSwitch = flag; });
  });
}

aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t* flag) {
  const char* fn = "aclrtGetStreamOverflowSwitch";
  return apiCall(fn, [&]() -> Outcome {
    if (flag == nullptr) return nullArgument(fn, "flag");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    StreamSettings s;
    COHORT_RETURN_IF_ERROR(StreamAttrs::get().read(stream, &s));
    *flag = s.overflowSwitch;
    return Status::Ok();
  });
}

aclError aclrtRegStreamStateCallback(const char* regName, aclrtStreamStateCallback callback,
                                     void* args) {
  return apiCall("aclrtRegStreamStateCallback", [&]() -> Outcome {
    return StreamAttrs::get().registerCallback(regName, callback, args);
  });
}

// Both work on streams bound to a model being built (aclmdlRIBindStream): what they
// record starts another bound stream when a launch gets there.
aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream) {
  const char* fn = "aclrtActiveStream";
  return apiCall(fn, [&]() -> Outcome {
    if (activeStream == nullptr) return nullArgument(fn, "activeStream");
    if (stream == nullptr) return nullArgument(fn, "stream");
    return withName(fn, rt::streamActivate(toStream(activeStream), toStream(stream)));
  });
}

aclError aclrtSwitchStream(void* leftValue, aclrtCondition cond, void* rightValue,
                           aclrtCompareDataType dataType, aclrtStream trueStream,
                           aclrtStream falseStream, aclrtStream stream) {
  const char* fn = "aclrtSwitchStream";
  return apiCall(fn, [&]() -> Outcome {
    if (leftValue == nullptr) return nullArgument(fn, "leftValue");
    if (rightValue == nullptr) return nullArgument(fn, "rightValue");
    if (trueStream == nullptr) return nullArgument(fn, "trueStream");
    if (stream == nullptr) return nullArgument(fn, "stream");
    if (cond < ACL_RT_EQUAL || cond > ACL_RT_LESS_OR_EQUAL) {
      return invalidArgument(fn, "cond {} is not an aclrtCondition", static_cast<int>(cond));
    }
    if (dataType != ACL_RT_SWITCH_INT32 && dataType != ACL_RT_SWITCH_INT64) {
      return invalidArgument(fn, "dataType {} is not an aclrtCompareDataType",
                             static_cast<int>(dataType));
    }
    static_assert(static_cast<int>(rt::Compare::kLessOrEqual) == ACL_RT_LESS_OR_EQUAL,
                  "the enumerations list the comparisons in the same order");
    const auto compare = static_cast<rt::Compare>(static_cast<int>(cond));
    return withName(fn, rt::streamSwitch(leftValue, compare, rightValue,
                                         dataType == ACL_RT_SWITCH_INT64, toStream(trueStream),
                                         toStream(falseStream), toStream(stream)));
  });
}

aclError aclrtPersistentTaskClean(aclrtStream stream) {
  (void)stream;
  return apiCall("aclrtPersistentTaskClean", [&]() -> Outcome {
    return unsupportedCase("aclrtPersistentTaskClean",
                        "Cohort's ACL_STREAM_PERSISTENT streams run their tasks at once and "
                        "keep none to clean");
  });
}
