// The kernel entry points (acl/acl_rt_kernel.h) that Cohort does not offer. AscendC
// kernels compiled for the CPU load and launch (kernel_launch_api.cc); what is left
// works on the device's own binaries (an AI Core ELF, an AI CPU package, SIMT
// kernels, device addresses of functions) and answers "not supported".
#include "acl/acl.h"
#include "acl/api_call.h"
#include "acl/unsupported.h"
#include "common/error.h"

namespace {

using cohort::acl::notSupported;

constexpr const char* kNoDeviceCode =
    "Cohort's emulated devices run AscendC kernels compiled for the CPU (ascendc.cmake), "
    "not the device's own binaries";

aclError noKernels(const char* function) { return notSupported(function, kNoDeviceCode); }

}  // namespace

aclError aclrtCheckArchCompatibility(const char* socVersion, int32_t* canCompatible) {
  const char* fn = "aclrtCheckArchCompatibility";
  return cohort::acl::apiCall(fn, [&]() -> cohort::acl::Outcome {
    if (socVersion == nullptr || canCompatible == nullptr) {
      return cohort::makeError(cohort::ErrorCode::kInvalidArgument, "{}: {} is null", fn,
                               socVersion == nullptr ? "socVersion" : "canCompatible");
    }
    // No operator instructions run here, whatever SoC they were built for.
    *canCompatible = 0;
    return cohort::Status::Ok();
  });
}

aclrtBinary aclrtCreateBinary(const void*, size_t) {
  (void)noKernels("aclrtCreateBinary");
  return nullptr;
}
aclError aclrtDestroyBinary(aclrtBinary) { return noKernels("aclrtDestroyBinary"); }
aclError aclrtBinaryLoad(const aclrtBinary, aclrtBinHandle*) {
  return noKernels("aclrtBinaryLoad");
}
aclError aclrtBinaryGetFunctionByEntry(aclrtBinHandle, uint64_t, aclrtFuncHandle*) {
  return noKernels("aclrtBinaryGetFunctionByEntry");
}
aclError aclrtBinaryGetDevAddress(const aclrtBinHandle, void**, size_t*) {
  return noKernels("aclrtBinaryGetDevAddress");
}
aclError aclrtBinaryGetGlobal(aclrtBinHandle, const char*, void**, size_t*) {
  return noKernels("aclrtBinaryGetGlobal");
}
aclError aclrtBinarySetExceptionCallback(aclrtBinHandle, aclrtOpExceptionCallback, void*) {
  return noKernels("aclrtBinarySetExceptionCallback");
}
aclError aclrtRegisterCpuFunc(const aclrtBinHandle, const char*, const char*, aclrtFuncHandle*) {
  return noKernels("aclrtRegisterCpuFunc");
}
aclError aclrtGetFuncBySymbol(const void*, aclrtFuncHandle*) {
  return noKernels("aclrtGetFuncBySymbol");
}
aclError aclrtFunctionGetBinary(const aclrtFuncHandle, aclrtBinHandle*) {
  return noKernels("aclrtFunctionGetBinary");
}
aclError aclrtFunctionGetParamCount(const void*, size_t*) {
  return noKernels("aclrtFunctionGetParamCount");
}
aclError aclrtFunctionGetParamInfo(const void*, size_t, size_t*, size_t*) {
  return noKernels("aclrtFunctionGetParamInfo");
}
aclError aclrtFunctionGetAvailDynUbufPerBlock(void*, uint32_t, size_t*) {
  return noKernels("aclrtFunctionGetAvailDynUbufPerBlock");
}
aclError aclrtGetFunctionAddr(aclrtFuncHandle, void**, void**) {
  return noKernels("aclrtGetFunctionAddr");
}
aclError aclrtGetFunctionSize(aclrtFuncHandle, size_t*, size_t*) {
  return noKernels("aclrtGetFunctionSize");
}
aclError aclrtGetFunctionAttribute(aclrtFuncHandle, aclrtFuncAttribute, int64_t*) {
  return noKernels("aclrtGetFunctionAttribute");
}
aclError aclrtGetHardwareSyncAddr(void**) {
  return notSupported("aclrtGetHardwareSyncAddr",
                      "Cohort's devices have no cube and vector cores to synchronise");
}
aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo*, void**, uint32_t*) {
  return noKernels("aclrtGetArgsFromExceptionInfo");
}
aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo*, aclrtFuncHandle*) {
  return noKernels("aclrtGetFuncHandleFromExceptionInfo");
}

aclError aclrtLaunchKernelV2(aclrtFuncHandle, uint32_t, const void*, size_t, aclrtLaunchKernelCfg*,
                             aclrtStream) {
  return noKernels("aclrtLaunchKernelV2");
}
aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle, uint32_t, aclrtStream,
                                       aclrtLaunchKernelCfg*, void*, size_t, aclrtPlaceHolderInfo*,
                                       size_t) {
  return noKernels("aclrtLaunchKernelWithHostArgs");
}
aclError aclrtLaunchKernelWithArgsArray(void*, uint32_t, aclrtStream, aclrtLaunchKernelCfg*,
                                        void**) {
  return noKernels("aclrtLaunchKernelWithArgsArray");
}
aclError aclrtLaunchSIMTKernelWithArgsArray(void*, dim3, dim3, size_t, aclrtStream,
                                            aclrtLaunchKernelCfg*, void**) {
  return noKernels("aclrtLaunchSIMTKernelWithArgsArray");
}
aclError aclrtLaunchSIMTKernelWithHostArgs(void*, dim3, dim3, size_t, aclrtStream,
                                           aclrtLaunchKernelCfg*, void*, size_t,
                                           aclrtPlaceHolderInfo*, size_t) {
  return noKernels("aclrtLaunchSIMTKernelWithHostArgs");
}
