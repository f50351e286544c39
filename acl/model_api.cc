// Model run instances (captured or built task graphs), dump configuration and
// process snapshots (acl/acl_rt_kernel.h): features Cohort does not implement.
// Every entry point answers "not supported" without looking at its arguments.
#include "acl/acl.h"
#include "acl/unsupported.h"

namespace {

using cohort::acl::notSupported;

constexpr const char* kNoModelRI =
    "Cohort does not capture or build model run instances: streams run their tasks as "
    "they are queued";
constexpr const char* kNoDump = "Cohort runs no models or operators whose data could be dumped";
constexpr const char* kNoSnapshot = "Cohort cannot back up or restore a process's devices";

aclError noModel(const char* function) { return notSupported(function, kNoModelRI); }

}  // namespace

aclError aclmdlRICaptureBegin(aclrtStream, aclmdlRICaptureMode) {
  return noModel("aclmdlRICaptureBegin");
}
aclError aclmdlRICaptureGetInfo(aclrtStream, aclmdlRICaptureStatus*, aclmdlRI*) {
  return noModel("aclmdlRICaptureGetInfo");
}
aclError aclmdlRICaptureEnd(aclrtStream, aclmdlRI*) { return noModel("aclmdlRICaptureEnd"); }
aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode*) {
  return noModel("aclmdlRICaptureThreadExchangeMode");
}
aclError aclmdlRICaptureToModelRIBegin(aclrtStream, aclmdlRI, aclmdlRICaptureMode) {
  return noModel("aclmdlRICaptureToModelRIBegin");
}
aclError aclmdlRICaptureTaskGrpBegin(aclrtStream) { return noModel("aclmdlRICaptureTaskGrpBegin"); }
aclError aclmdlRICaptureTaskGrpEnd(aclrtStream, aclrtTaskGrp*) {
  return noModel("aclmdlRICaptureTaskGrpEnd");
}
aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream, aclrtTaskGrp) {
  return noModel("aclmdlRICaptureTaskUpdateBegin");
}
aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream) {
  return noModel("aclmdlRICaptureTaskUpdateEnd");
}
aclError aclmdlRIBuildBegin(aclmdlRI*, uint32_t) { return noModel("aclmdlRIBuildBegin"); }
aclError aclmdlRIBindStream(aclmdlRI, aclrtStream, uint32_t) {
  return noModel("aclmdlRIBindStream");
}
aclError aclmdlRIEndTask(aclmdlRI, aclrtStream) { return noModel("aclmdlRIEndTask"); }
aclError aclmdlRIBuildEnd(aclmdlRI, void*) { return noModel("aclmdlRIBuildEnd"); }
aclError aclmdlRIUnbindStream(aclmdlRI, aclrtStream) { return noModel("aclmdlRIUnbindStream"); }
aclError aclmdlRIExecute(aclmdlRI, int32_t) { return noModel("aclmdlRIExecute"); }
aclError aclmdlRIExecuteAsync(aclmdlRI, aclrtStream) { return noModel("aclmdlRIExecuteAsync"); }
aclError aclmdlRIAbort(aclmdlRI) { return noModel("aclmdlRIAbort"); }
aclError aclmdlRIDestroy(aclmdlRI) { return noModel("aclmdlRIDestroy"); }
aclError aclmdlRIUpdate(aclmdlRI) { return noModel("aclmdlRIUpdate"); }
aclError aclmdlRISetName(aclmdlRI, const char*) { return noModel("aclmdlRISetName"); }
aclError aclmdlRIGetName(aclmdlRI, uint32_t, char*) { return noModel("aclmdlRIGetName"); }
aclError aclmdlRIGetId(aclmdlRI, uint32_t*) { return noModel("aclmdlRIGetId"); }
aclError aclmdlRIGetStreams(aclmdlRI, aclrtStream*, uint32_t*) {
  return noModel("aclmdlRIGetStreams");
}
aclError aclmdlRIGetTasksByStream(aclrtStream, aclmdlRITask*, uint32_t*) {
  return noModel("aclmdlRIGetTasksByStream");
}
aclError aclmdlRIDebugPrint(aclmdlRI) { return noModel("aclmdlRIDebugPrint"); }
aclError aclmdlRIDebugJsonPrint(aclmdlRI, const char*, uint32_t) {
  return noModel("aclmdlRIDebugJsonPrint");
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
aclError aclmdlRICondHandleCreate(aclmdlRI, uint32_t, aclmdlRICondHandleFlag, aclmdlRICondHandle*) {
  return noModel("aclmdlRICondHandleCreate");
}
aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle, uint64_t**) {
  return noModel("aclmdlRICondHandleGetCondPtr");
}
aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams, aclrtStream, uint32_t) {
  return noModel("aclmdlRIAddCondTask");
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
