// Task groups and conditional tasks of captured models (acl/acl_rt_kernel.h:
// aclmdlRICaptureTaskGrpBegin ... TaskUpdateEnd, aclmdlRICondHandleCreate ...
// aclmdlRIAddCondTask, aclmdlRICaptureToModelRIBegin), over the runtime's
// (cohort/runtime_capture.h).
#include <vector>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/model_handles.h"
#include "cohort/runtime_capture.h"

namespace {

using cohort::acl::knownCaptureMode;
using cohort::acl::toCaptureMode;
using cohort::acl::toModel;

rt::TaskGroup* toGroup(aclrtTaskGrp group) { return static_cast<rt::TaskGroup*>(group); }
rt::CondHandle* toCond(aclmdlRICondHandle handle) { return static_cast<rt::CondHandle*>(handle); }

// The runtime's "not a capturing stream" (kInvalidUsage) is CANN's
// ACL_ERROR_RT_STREAM_NOT_CAPTURED; a task a group cannot hold, its
// ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT.
Outcome captureOutcome(const char* fn, aclrtStream stream, const Status& st) {
  if (st.ok()) return st;
  rt::CaptureDescription capture;
  if (st.code() == ErrorCode::kInvalidUsage &&
      rt::captureDescribe(toStream(stream), &capture).ok() &&
      capture.status == rt::CaptureStatus::kNone) {
    return Outcome(ACL_ERROR_RT_STREAM_NOT_CAPTURED, withName(fn, st));
  }
  if (st.code() == ErrorCode::kNotSupported) {
    return Outcome(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, withName(fn, st));
  }
  return withName(fn, st);
}

}  // namespace

// ---- Task groups: tasks of a capture replaced after it ---------------------------

aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream) {
  const char* fn = "aclmdlRICaptureTaskGrpBegin";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return captureOutcome(fn, stream, rt::captureGroupBegin(toStream(stream)));
  });
}

aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp* handle) {
  const char* fn = "aclmdlRICaptureTaskGrpEnd";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    rt::TaskGroup* group = nullptr;
    ACL_RETURN_IF_FAILED(captureOutcome(fn, stream, rt::captureGroupEnd(toStream(stream), &group)));
    *handle = group;
    return Status::Ok();
  });
}

aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle) {
  const char* fn = "aclmdlRICaptureTaskUpdateBegin";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    rt::CaptureDescription capture;
    ACL_RETURN_IF_FAILED(withName(fn, rt::captureDescribe(toStream(stream), &capture)));
    if (capture.status != rt::CaptureStatus::kNone) {
      return failure(ACL_ERROR_RT_STREAM_CAPTURED, ErrorCode::kCaptured, fn,
                     "the stream captures (model {}); updates are queued on a stream that does "
                     "not",
                     capture.modelId);
    }
    return withName(fn, rt::groupUpdateBegin(toStream(stream), toGroup(handle)));
  });
}

aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream) {
  const char* fn = "aclmdlRICaptureTaskUpdateEnd";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return withName(fn, rt::groupUpdateEnd(toStream(stream)));
  });
}

// ---- Conditional tasks: branch models chosen by a value in device memory ---------

aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue,
                                  aclmdlRICondHandleFlag flag, aclmdlRICondHandle* handle) {
  const char* fn = "aclmdlRICondHandleCreate";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (handle == nullptr) return nullArgument(fn, "handle");
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (flag != 0 && flag != ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT) {
      return invalidArgument(fn,
                             "flag {} is neither 0 nor ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT (1)",
                             static_cast<int>(flag));
    }
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    rt::CondHandle* made = nullptr;
    const Status st = rt::condCreate(toModel(modelRI), defaultLaunchValue,
                                     flag == ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &made);
    if (st.code() == ErrorCode::kInvalidUsage) {  // the model is not being captured
      return Outcome(ACL_ERROR_RT_MODEL_CAPTURED, withName(fn, st));
    }
    ACL_RETURN_IF_FAILED(withName(fn, st));
    *handle = made;
    return Status::Ok();
  });
}

aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t** ptr) {
  const char* fn = "aclmdlRICondHandleGetCondPtr";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (ptr == nullptr) return nullArgument(fn, "ptr");
    if (handle == nullptr) return nullArgument(fn, "handle");
    return withName(fn, rt::condValue(toCond(handle), ptr));
  });
}

aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags) {
  const char* fn = "aclmdlRIAddCondTask";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (params.handle == nullptr) return nullArgument(fn, "params.handle");
    if (params.modelRIArray == nullptr) return nullArgument(fn, "params.modelRIArray");
    if (flags != 0) return invalidArgument(fn, "flags {} must be 0 (reserved)", flags);
    if (params.type != ACL_MODEL_RI_COND_TYPE_IF && params.type != ACL_MODEL_RI_COND_TYPE_WHILE &&
        params.type != ACL_MODEL_RI_COND_TYPE_SWITCH) {
      return invalidArgument(fn, "params.type {} is not an ACL_MODEL_RI_COND_TYPE_*",
                             static_cast<int>(params.type));
    }
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    std::vector<rt::Model*> branches(params.size, nullptr);
    ACL_RETURN_IF_FAILED(captureOutcome(
        fn, stream,
        rt::captureCondTask(toStream(stream), toCond(params.handle),
                            static_cast<rt::CondType>(params.type), params.size, branches.data())));
    for (uint32_t i = 0; i < params.size; ++i) params.modelRIArray[i] = branches[i];
    return Status::Ok();
  });
}

aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI,
                                       aclmdlRICaptureMode mode) {
  const char* fn = "aclmdlRICaptureToModelRIBegin";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    if (!knownCaptureMode(mode)) return invalidArgument(fn, "mode {} is not a capture mode", mode);
    const Status st = rt::captureBeginInto(toStream(stream), toModel(modelRI), toCaptureMode(mode));
    if (st.code() == ErrorCode::kCaptured) {
      return Outcome(ACL_ERROR_RT_STREAM_CAPTURED, withName(fn, st));
    }
    return withName(fn, st);
  });
}
