// Model run instances (acl/acl_rt_kernel.h): stream capture into a model and its
// launch, and models built from bound streams (aclmdlRIBuild*), over the runtime's
// captures (cohort/runtime_capture.h); task groups and conditional tasks are in
// model_control_api.cc. Task editing, dump configuration and process snapshots are
// features Cohort does not implement: those entry points answer "not supported"
// without looking at their arguments.
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/model_handles.h"
#include "acl/stream_attrs.h"
#include "cohort/runtime_capture.h"
#include "acl/unsupported.h"
#include "common/log.h"

namespace {

using cohort::acl::knownCaptureMode;
using cohort::acl::notSupported;
using cohort::acl::toCaptureMode;
using cohort::acl::toModel;

constexpr const char* kNoModelRI =
    "Cohort records models by stream capture (aclmdlRICaptureBegin/End, with task groups "
    "and conditional tasks) and builds them from bound streams (aclmdlRIBuildBegin ... "
    "BuildEnd); this call is not implemented";
constexpr const char* kNoDump = "Cohort runs no models or operators whose data could be dumped";
constexpr const char* kNoSnapshot = "Cohort cannot back up or restore a process's devices";

aclError noModel(const char* function) { return notSupported(function, kNoModelRI); }

// kInvalidUsage from a model call means the model is still being captured.
Outcome modelOutcome(const char* fn, const Status& st) {
  if (st.code() == ErrorCode::kInvalidUsage) {
    return Outcome(ACL_ERROR_RT_MODEL_CAPTURED, withName(fn, st));
  }
  return withName(fn, st);
}

}  // namespace

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
  const char* fn = "aclmdlRICaptureBegin";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    if (!knownCaptureMode(mode)) return invalidArgument(fn, "mode {} is not a capture mode", mode);
    rt::CaptureDescription capture;
    ACL_RETURN_IF_FAILED(withName(fn, rt::captureDescribe(toStream(stream), &capture)));
    if (capture.status != rt::CaptureStatus::kNone) {
      return failure(ACL_ERROR_RT_STREAM_CAPTURED, ErrorCode::kCaptured, fn,
                     "the stream captures already (model {})", capture.modelId);
    }
    return withName(fn, rt::captureBegin(toStream(stream), toCaptureMode(mode)));
  });
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status,
                                aclmdlRI* modelRI) {
  const char* fn = "aclmdlRICaptureGetInfo";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (status == nullptr) return nullArgument(fn, "status");
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    rt::CaptureDescription capture;
    ACL_RETURN_IF_FAILED(withName(fn, rt::captureDescribe(toStream(stream), &capture)));
    rt::Model* model = nullptr;
    ACL_RETURN_IF_FAILED(withName(fn, rt::captureModel(toStream(stream), &model)));
    *status = static_cast<aclmdlRICaptureStatus>(capture.status);
    *modelRI = model;
    return Status::Ok();
  });
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* modelRI) {
  const char* fn = "aclmdlRICaptureEnd";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    rt::CaptureDescription capture;
    ACL_RETURN_IF_FAILED(withName(fn, rt::captureDescribe(toStream(stream), &capture)));
    if (capture.status == rt::CaptureStatus::kNone) {
      return failure(ACL_ERROR_RT_STREAM_NOT_CAPTURED, ErrorCode::kInvalidUsage, fn,
                     "the stream does not capture");
    }
    if (!capture.origin) {
      return failure(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, ErrorCode::kInvalidUsage, fn,
                     "the stream joined model {}'s capture through an event; end it on the "
                     "stream that began it",
                     capture.modelId);
    }
    if (capture.mode != rt::CaptureMode::kRelaxed && !capture.beganHere) {
      return failure(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, ErrorCode::kInvalidUsage, fn,
                     "model {}'s capture began on another thread", capture.modelId);
    }
    rt::Model* model = nullptr;
    const Status ended = rt::captureEnd(toStream(stream), &model);
    *modelRI = model;
    if (!ended.ok() && capture.unjoinedLanes > 0) {
      return Outcome(ACL_ERROR_RT_STREAM_UNJOINED, withName(fn, ended));
    }
    return withName(fn, ended);
  });
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode* mode) {
  const char* fn = "aclmdlRICaptureThreadExchangeMode";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (mode == nullptr) return nullArgument(fn, "mode");
    if (!knownCaptureMode(*mode)) {
      return invalidArgument(fn, "mode {} is not a capture mode", *mode);
    }
    rt::CaptureMode exchanged = toCaptureMode(*mode);
    ACL_RETURN_IF_FAILED(withName(fn, rt::captureExchangeMode(&exchanged)));
    *mode = static_cast<aclmdlRICaptureMode>(exchanged);
    return Status::Ok();
  });
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
  const char* fn = "aclmdlRIExecuteAsync";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return modelOutcome(fn, rt::modelLaunch(toModel(modelRI), toStream(stream)));
  });
}

aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout) {
  const char* fn = "aclmdlRIExecute";
  return apiCall(fn, Site::kStreamSync, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (timeout < -1) return badTimeout(fn, timeout);
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    // On a stream of its own, so that the wait covers the model's work alone.
    rt::Stream* stream = nullptr;
    ACL_RETURN_IF_FAILED(withName(fn, rt::streamCreate(&stream)));
    Outcome result = modelOutcome(fn, rt::modelLaunch(toModel(modelRI), stream));
    if (result.ok()) result = withName(fn, rt::streamSynchronize(stream, timeout));
    (void)rt::streamDestroy(stream);
    return result;
  });
}

aclError aclmdlRIDestroy(aclmdlRI modelRI) {
  const char* fn = "aclmdlRIDestroy";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    return modelOutcome(fn, rt::modelDestroy(toModel(modelRI)));
  });
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t* modelRIId) {
  const char* fn = "aclmdlRIGetId";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (modelRIId == nullptr) return nullArgument(fn, "modelRIId");
    rt::ModelDescription d;
    ACL_RETURN_IF_FAILED(withName(fn, rt::modelDescribe(toModel(modelRI), &d)));
    *modelRIId = d.id;
    return Status::Ok();
  });
}

aclError aclmdlRIDebugPrint(aclmdlRI modelRI) {
  const char* fn = "aclmdlRIDebugPrint";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    rt::ModelDescription d;
    ACL_RETURN_IF_FAILED(withName(fn, rt::modelDescribe(toModel(modelRI), &d)));
    COHORT_LOG(kInfo, "acl", "model {}{}: {} task(s) on {} stream(s)", d.id,
               d.name.empty() ? "" : " (" + d.name + ")", d.tasks.size(), d.lanes);
    for (std::size_t i = 0; i < d.tasks.size(); ++i) {
      COHORT_LOG(kInfo, "acl", "model {} task {}: {} on stream {}", d.id, i, d.tasks[i].kind,
                 d.tasks[i].lane);
    }
    return Status::Ok();
  });
}

aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char* path, uint32_t flags) {
  const char* fn = "aclmdlRIDebugJsonPrint";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (path == nullptr) return nullArgument(fn, "path");
    (void)flags;  // every flag asks for more detail than Cohort records
    rt::ModelDescription d;
    ACL_RETURN_IF_FAILED(withName(fn, rt::modelDescribe(toModel(modelRI), &d)));
    nlohmann::json tasks = nlohmann::json::array();
    for (std::size_t i = 0; i < d.tasks.size(); ++i) {
      tasks.push_back({{"index", i}, {"type", d.tasks[i].kind}, {"stream", d.tasks[i].lane}});
    }
    const nlohmann::json doc = {
        {"model_id", d.id}, {"name", d.name}, {"streams", d.lanes}, {"tasks", tasks}};
    std::ofstream out(path);
    if (!(out << doc.dump(2) << '\n')) {
      return failure(ACL_ERROR_WRITE_FILE, ErrorCode::kSystemError, fn, "cannot write {}", path);
    }
    return Status::Ok();
  });
}

// ---- Built models: streams bound to the model hold their work for it --------------

aclError aclmdlRIBuildBegin(aclmdlRI* modelRI, uint32_t flag) {
  const char* fn = "aclmdlRIBuildBegin";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (flag != 0) return invalidArgument(fn, "flag {} is reserved and must be 0", flag);
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    rt::Model* model = nullptr;
    ACL_RETURN_IF_FAILED(withName(fn, rt::modelBuildBegin(&model)));
    *modelRI = model;
    return Status::Ok();
  });
}

aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag) {
  const char* fn = "aclmdlRIBindStream";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (stream == nullptr) return nullArgument(fn, "stream");
    if (flag != ACL_MODEL_STREAM_FLAG_HEAD && flag != ACL_MODEL_STREAM_FLAG_DEFAULT) {
      return invalidArgument(fn, "flag {:#x} is neither ACL_MODEL_STREAM_FLAG_HEAD nor "
                             "ACL_MODEL_STREAM_FLAG_DEFAULT", flag);
    }
    cohort::acl::StreamSettings settings;
    ACL_RETURN_IF_FAILED(withName(fn, cohort::acl::StreamAttrs::get().read(stream, &settings)));
    if ((settings.flags & ACL_STREAM_PERSISTENT) == 0) {
      return invalidArgument(fn, "the stream was not created with ACL_STREAM_PERSISTENT "
                             "(aclrtCreateStreamWithConfig): only such streams hold work for a "
                             "model");
    }
    return withName(fn, rt::modelBindStream(toModel(modelRI), toStream(stream),
                                                flag == ACL_MODEL_STREAM_FLAG_HEAD));
  });
}

aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream) {
  const char* fn = "aclmdlRIEndTask";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (stream == nullptr) return nullArgument(fn, "stream");
    return withName(fn, rt::modelEndTask(toModel(modelRI), toStream(stream)));
  });
}

aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void* reserve) {
  const char* fn = "aclmdlRIBuildEnd";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (reserve != nullptr) return invalidArgument(fn, "reserve is reserved and must be NULL");
    return withName(fn, rt::modelBuildEnd(toModel(modelRI)));
  });
}

aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream) {
  const char* fn = "aclmdlRIUnbindStream";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (stream == nullptr) return nullArgument(fn, "stream");
    return withName(fn, rt::modelUnbindStream(toModel(modelRI), toStream(stream)));
  });
}
aclError aclmdlRIAbort(aclmdlRI) { return noModel("aclmdlRIAbort"); }
aclError aclmdlRIUpdate(aclmdlRI) { return noModel("aclmdlRIUpdate"); }
aclError aclmdlRISetName(aclmdlRI modelRI, const char* name) {
  const char* fn = "aclmdlRISetName";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (name == nullptr) return nullArgument(fn, "name");
    return withName(fn, rt::modelSetName(toModel(modelRI), name));
  });
}

aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char* name) {
  const char* fn = "aclmdlRIGetName";
  return apiCall(fn, Site::kGeneral, [&]() -> Outcome {
    if (modelRI == nullptr) return nullArgument(fn, "modelRI");
    if (name == nullptr) return nullArgument(fn, "name");
    rt::ModelDescription d;
    ACL_RETURN_IF_FAILED(withName(fn, rt::modelDescribe(toModel(modelRI), &d)));
    if (d.name.size() + 1 > maxLen) {
      return invalidArgument(fn, "maxLen {} cannot hold the name \"{}\" and its terminating "
                             "null ({} bytes)", maxLen, d.name, d.name.size() + 1);
    }
    std::memcpy(name, d.name.c_str(), d.name.size() + 1);
    return Status::Ok();
  });
}
aclError aclmdlRIGetStreams(aclmdlRI, aclrtStream*, uint32_t*) {
  return noModel("aclmdlRIGetStreams");
}
aclError aclmdlRIGetTasksByStream(aclrtStream, aclmdlRITask*, uint32_t*) {
  return noModel("aclmdlRIGetTasksByStream");
}
aclError aclmdlRIDestroyRegisterCallback(aclmdlRI, aclrtCallback, void*) {
  return noModel("aclmdlRIDestroyRegisterCallback");
}
aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI, aclrtCallback) {
  return noModel("aclmdlRIDestroyUnregisterCallback");
}
aclError aclmdlRITaskGetType(aclmdlRITask, aclmdlRITaskType*) {
  return noModel("aclmdlRITaskGetType");
}
aclError aclmdlRITaskGetSeqId(aclmdlRITask, uint32_t*) { return noModel("aclmdlRITaskGetSeqId"); }
aclError aclmdlRITaskGetParams(aclmdlRITask, aclmdlRITaskParams*) {
  return noModel("aclmdlRITaskGetParams");
}
aclError aclmdlRITaskSetParams(aclmdlRITask, aclmdlRITaskParams*) {
  return noModel("aclmdlRITaskSetParams");
}
aclError aclmdlRITaskDisable(aclmdlRITask) { return noModel("aclmdlRITaskDisable"); }
aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask, aclrtLaunchKernelAttrId,
                                        aclrtLaunchKernelAttrValue*) {
  return noModel("aclmdlRIKernelTaskGetAttribute");
}
aclError aclrtCacheLastTaskOpInfo(const void* const, const size_t) {
  return noModel("aclrtCacheLastTaskOpInfo");
}
aclError aclrtCacheLastTaskExtendInfo(const char* const, const size_t) {
  return noModel("aclrtCacheLastTaskExtendInfo");
}

aclError aclmdlInitDump(void) { return notSupported("aclmdlInitDump", kNoDump); }
aclError aclmdlSetDump(const char*) { return notSupported("aclmdlSetDump", kNoDump); }
aclError aclmdlFinalizeDump(void) { return notSupported("aclmdlFinalizeDump", kNoDump); }

aclError aclrtSnapShotProcessLock(int, void*) {
  return notSupported("aclrtSnapShotProcessLock", kNoSnapshot);
}
aclError aclrtSnapShotProcessUnlock(int, void*) {
  return notSupported("aclrtSnapShotProcessUnlock", kNoSnapshot);
}
aclError aclrtSnapShotProcessBackup(int, aclrtSnapShotBackupArgs*) {
  return notSupported("aclrtSnapShotProcessBackup", kNoSnapshot);
}
aclError aclrtSnapShotProcessRestore(int, aclrtSnapShotRestoreArgs*) {
  return notSupported("aclrtSnapShotProcessRestore", kNoSnapshot);
}
aclError aclrtSnapShotCallbackRegister(aclrtSnapShotStage, aclrtSnapShotCallBack, void*) {
  return notSupported("aclrtSnapShotCallbackRegister", kNoSnapshot);
}
aclError aclrtSnapShotCallbackUnregister(aclrtSnapShotStage, aclrtSnapShotCallBack) {
  return notSupported("aclrtSnapShotCallbackUnregister", kNoSnapshot);
}
