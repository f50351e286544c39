/*
 * Cohort's ACL-compatible C API: initialisation, versions, runtime configuration
 * (system parameters, resource limits, timeouts), compute groups, float overflow
 * status, exceptions and device faults (declared in CANN's acl_rt.h; included by
 * acl/acl_rt.h, never on its own).
 */
#ifndef COHORT_ACL_ACL_RT_SYSTEM_H_
#define COHORT_ACL_ACL_RT_SYSTEM_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types -------------------------------------------------------------------- */

/* aclrtGetGroupInfoDetail: the attributes of a compute group (each an int32_t). */
typedef enum aclrtGroupAttr ACL_ENUM_BASE {
  ACL_GROUP_AICORE_INT = 0,
  ACL_GROUP_AIV_INT = 1,
  ACL_GROUP_AIC_INT = 2,
  ACL_GROUP_SDMANUM_INT = 3,
  ACL_GROUP_ASQNUM_INT = 4,
  ACL_GROUP_GROUPID_INT = 5,
} aclrtGroupAttr;

/* The compute groups of the current device (aclrtCreateGroupInfo). Opaque. */
typedef struct tagRtGroupInfo aclrtGroupInfo;

/* What an exception callback is given about a failed task (read it with the
 * aclrtGet*FromExceptionInfo functions; valid during the callback only). Opaque. */
typedef struct rtExceptionInfo aclrtExceptionInfo;
typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo* exceptionInfo);
typedef void (*aclrtOpExceptionCallback)(aclrtExceptionInfo* exceptionInfo, void* userData);

/* Memory UCE (uncorrectable ECC error) records: emulated memory has none. */
#define MAX_MEM_UCE_INFO_ARRAY_SIZE 128
#define UCE_INFO_RESERVED_SIZE 14
typedef struct aclrtMemUceInfo {
  void* addr;
  size_t len;
  size_t reserved[UCE_INFO_RESERVED_SIZE];
} aclrtMemUceInfo;

/* aclrtGetErrorVerbose: the kind of the latest fault of a device. */
typedef enum aclrtErrorType ACL_ENUM_BASE {
  ACL_RT_NO_ERROR = 0,
  ACL_RT_ERROR_MEMORY = 1,
  ACL_RT_ERROR_L2 = 2,
  ACL_RT_ERROR_AICORE = 3,
  ACL_RT_ERROR_LINK = 4,
  ACL_RT_ERROR_L3_PORT = 5,
  ACL_RT_ERROR_OTHERS = 0xFFFF,
} aclrtErrorType;

typedef enum aclrtAicoreErrorType ACL_ENUM_BASE {
  ACL_RT_AICORE_ERROR_UNKNOWN = 0,
  ACL_RT_AICORE_ERROR_SW = 1,
  ACL_RT_AICORE_ERROR_HW_LOCAL = 2,
} aclrtAicoreErrorType;

#define ACL_RT_MEM_UCE_INFO_MAX_NUM 20
typedef struct aclrtMemUceInfoArray {
  size_t arraySize;
  aclrtMemUceInfo memUceInfoArray[ACL_RT_MEM_UCE_INFO_MAX_NUM];
} aclrtMemUceInfoArray;

typedef union aclrtErrorInfoDetail {
  aclrtMemUceInfoArray uceInfo;
  aclrtAicoreErrorType aicoreErrType;
} aclrtErrorInfoDetail;

typedef struct aclrtErrorInfo {
  uint8_t tryRepair; /* 1: aclrtRepairError can recover the device */
  uint8_t hasDetail; /* 1: `detail` is filled in */
  uint8_t reserved[2];
  aclrtErrorType errorType;
  aclrtErrorInfoDetail detail;
} aclrtErrorInfo;

/* aclsysGetCANNVersion: the packages, and a version split into its parts. */
#define ACL_PKG_VERSION_MAX_SIZE 128
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64
typedef enum aclCANNPackageName ACL_ENUM_BASE {
  ACL_PKG_NAME_CANN = 0,
  ACL_PKG_NAME_RUNTIME = 1,
  ACL_PKG_NAME_COMPILER = 2,
  ACL_PKG_NAME_HCCL = 3,
  ACL_PKG_NAME_TOOLKIT = 4,
  ACL_PKG_NAME_OPP = 5,
  ACL_PKG_NAME_OPP_KERNEL = 6,
  ACL_PKG_NAME_DRIVER = 7,
} aclCANNPackageName;
typedef struct aclCANNPackageVersion {
  char version[ACL_PKG_VERSION_MAX_SIZE];
  char majorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char minorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char releaseVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char patchVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
  char reserved[ACL_PKG_VERSION_MAX_SIZE];
} aclCANNPackageVersion;

/* aclInitCallbackRegister / aclFinalizeCallbackRegister: who registers (any value
 * below), and the callbacks. An init callback gets the text of aclInit's
 * configuration file ("" without one). */
typedef enum aclRegisterCallbackType ACL_ENUM_BASE {
  ACL_REG_TYPE_ACL_MODEL = 0,
  ACL_REG_TYPE_ACL_OP_EXECUTOR = 1,
  ACL_REG_TYPE_ACL_OP_CBLAS = 2,
  ACL_REG_TYPE_ACL_OP_COMPILER = 3,
  ACL_REG_TYPE_ACL_TDT_CHANNEL = 4,
  ACL_REG_TYPE_ACL_TDT_QUEUE = 5,
  ACL_REG_TYPE_ACL_DVPP = 6,
  ACL_REG_TYPE_ACL_RETR = 7,
  ACL_REG_TYPE_OTHER = 0xFFFF,
} aclRegisterCallbackType;
typedef aclError (*aclInitCallbackFunc)(const char* configStr, size_t len, void* userData);
typedef aclError (*aclFinalizeCallbackFunc)(void* userData);

/* Kernel binaries, kernel functions and their argument lists (acl/acl_rt_kernel.h). */
typedef void* aclrtBinary;
typedef void* aclrtBinHandle;
typedef void* aclrtFuncHandle;
typedef void* aclrtArgsHandle;
typedef void* aclrtParamHandle;

/* ---- Initialisation ------------------------------------------------------------- */

/* Initialises the runtime. configPath is NULL or a JSON file: {} or an object with
 * the optional keys "err_msg_mode" ("0": messages per thread, the default; "1":
 * per process) and "defaultDevice": {"default_device": "N"} (the device a thread
 * uses until it sets one). Each call counts (see aclFinalizeReference); a call while
 * initialised returns ACL_ERROR_REPEAT_INITIALIZE. Runs the init callbacks. */
ACL_FUNC_VISIBILITY aclError aclInit(const char* configPath);
/* Runs the finalize callbacks, then releases every device, context and event still
 * held through this API, whatever the aclInit count. A second call returns
 * ACL_ERROR_REPEAT_FINALIZE. aclInit may be called again afterwards. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
/* Drops one aclInit count; the last one finalizes as aclFinalize does. refCount
 * (NULL or) receives the count left. */
ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t* refCount);
/* The messages of the calling thread's failed calls (the process's, with
 * err_msg_mode "1") since the last call, newest first, one per line; NULL when
 * there are none. The text stays valid until the thread calls it again. Works
 * before aclInit. */
ACL_FUNC_VISIBILITY const char* aclGetRecentErrMsg(void);
/* Registers cbFunc (with userData, replacing an earlier registration of the same
 * type and function) to run at every aclInit, after initialisation; registered while
 * initialised, it runs at once and its result is returned. Works before aclInit. */
ACL_FUNC_VISIBILITY aclError aclInitCallbackRegister(aclRegisterCallbackType type,
                                                     aclInitCallbackFunc cbFunc, void* userData);
/* Removes a registration (none: nothing to do). Works before aclInit. */
ACL_FUNC_VISIBILITY aclError aclInitCallbackUnRegister(aclRegisterCallbackType type,
                                                       aclInitCallbackFunc cbFunc);
/* Registers cbFunc to run at every finalisation, before resources are released.
 * Works before aclInit. */
ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type,
                                                         aclFinalizeCallbackFunc cbFunc,
                                                         void* userData);
ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type,
                                                           aclFinalizeCallbackFunc cbFunc);

/* ---- Versions (all work before aclInit) ----------------------------------------- */

/* The AscendCL API version these headers implement: ACL_MAJOR_VERSION.MINOR.PATCH. */
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion,
                                             int32_t* patchVersion);
/* The version of a package by name: "runtime", "cann" and "hccl" give the CANN
 * version Cohort implements; "cohort" gives Cohort's own. Any other package is not
 * installed: ACL_ERROR_INVALID_FILE. versionStr holds ACL_PKG_VERSION_MAX_SIZE bytes. */
ACL_FUNC_VISIBILITY aclError aclsysGetVersionStr(char* pkgName, char* versionStr);
/* The same version as a number: major * 10^7 + minor * 10^5 + patch * 10^3, minus
 * 300 / 200 / 100 for an alpha / beta / rc release, plus its pre-release number. */
ACL_FUNC_VISIBILITY aclError aclsysGetVersionNum(char* pkgName, int32_t* versionNum);
/* Deprecated in CANN. The same for ACL_PKG_NAME_CANN, _RUNTIME and _HCCL; other
 * packages are not installed (ACL_ERROR_INVALID_FILE). */
ACL_DEPRECATED_MESSAGE("use aclsysGetVersionStr and aclsysGetVersionNum")
ACL_FUNC_VISIBILITY aclError aclsysGetCANNVersion(aclCANNPackageName name,
                                                  aclCANNPackageVersion* version);

/* ---- Runtime configuration -------------------------------------------------------- */

/* Process-wide system parameters (see aclrtCtxSetSysParamOpt); unset ones read 0. */
ACL_FUNC_VISIBILITY aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t* value);
/* Device resource limits: how many cube / vector cores an operator may use, from 1 to
 * the device's count (20 / 40), the default. Stream limits (taken by the threads that
 * use them, aclrtUseStreamResInCurrentThread) come first, then the device's. Cohort
 * runs no operators, so every limit is trivially honoured. */
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type,
                                                    uint32_t value);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type,
                                                    uint32_t* value);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceResLimit(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type,
                                                    uint32_t value);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type,
                                                    uint32_t* value);
ACL_FUNC_VISIBILITY aclError aclrtResetStreamResLimit(aclrtStream stream);
/* The calling thread takes the limits of `stream` (the last call wins) ... */
ACL_FUNC_VISIBILITY aclError aclrtUseStreamResInCurrentThread(aclrtStream stream);
/* ... until it stops (ACL_ERROR_INVALID_PARAM if it does not use that stream's). */
ACL_FUNC_VISIBILITY aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream);
/* The limit that applies to the calling thread on its current device. */
ACL_FUNC_VISIBILITY aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t* value);
/* Cohort's tasks are host code that runs to completion: what a timeout can bound is
 * what a task waits for. The op execute timeout bounds the event waits of stream
 * tasks (aclrtStreamWaitEvent) in place of COHORT_EXEC_TIMEOUT (0: the maximum, i.e.
 * never); the op wait timeout, once set, bounds them instead (0: never). Both are
 * process-wide and apply to waits that start afterwards; other waits (collectives,
 * callbacks) keep COHORT_EXEC_TIMEOUT. */
ACL_FUNC_VISIBILITY aclError aclrtSetOpWaitTimeout(uint32_t timeout);    /* seconds */
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOut(uint32_t timeout); /* seconds */
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeout);
/* timeout in microseconds, rounded up to whole milliseconds (the interval below);
 * actualTimeout receives what applies (UINT64_MAX: never). */
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t* actualTimeout);
/* The op execute timeout that applies, in ms (UINT32_MAX: never). */
ACL_FUNC_VISIBILITY aclError aclrtGetOpExecuteTimeout(uint32_t* const timeoutMs);
/* 1000 us: timeouts take effect in whole milliseconds. */
ACL_FUNC_VISIBILITY aclError aclrtGetOpTimeOutInterval(uint64_t* interval);
/* The position (0, 1, 2, ... per stream) of the last task the calling thread queued
 * on a stream it created; ACL_ERROR_INVALID_PARAM if it queued none. Exception
 * callbacks report the same number for a failed task. */
ACL_FUNC_VISIBILITY aclError aclrtGetThreadLastTaskId(uint32_t* taskId);

/* ---- Compute groups: one per device, all of its cores -------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtSetGroup(int32_t groupId);      /* 0, the only group */
ACL_FUNC_VISIBILITY aclError aclrtGetGroupCount(uint32_t* count); /* 1 */
/* Room for the current device's groups (NULL without a current device). */
ACL_FUNC_VISIBILITY aclrtGroupInfo* aclrtCreateGroupInfo(void);
ACL_FUNC_VISIBILITY aclError aclrtDestroyGroupInfo(aclrtGroupInfo* groupInfo);
ACL_FUNC_VISIBILITY aclError aclrtGetAllGroupInfo(aclrtGroupInfo* groupInfo);
/* One int32_t attribute of a group: valueLen >= 4; paramRetSize receives 4. */
ACL_FUNC_VISIBILITY aclError aclrtGetGroupInfoDetail(const aclrtGroupInfo* groupInfo,
                                                     int32_t groupIndex, aclrtGroupAttr attr,
                                                     void* attrValue, size_t valueLen,
                                                     size_t* paramRetSize);

/* ---- Float overflow status ------------------------------------------------------- */
/* Cohort's arithmetic does not record whether a float overflowed, so there is no
 * status to read or clear: all of these are ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */

ACL_FUNC_VISIBILITY aclError aclrtGetOverflowStatus(void* outputAddr, size_t outputSize,
                                                    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtResetOverflowStatus(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetFloatOverflowStatus(void* outputAddr, uint64_t outputSize,
                                                         aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtResetFloatOverflowStatus(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtNpuGetFloatOverFlowStatus(void* outputAddr, uint64_t outputSize,
                                                            uint32_t checkMode, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtNpuClearFloatOverFlowStatus(uint32_t checkMode,
                                                              aclrtStream stream);

/* ---- Exceptions and device faults ------------------------------------------------- */

/* Deprecated in CANN. Sets the one process-wide exception callback (NULL clears it),
 * kept apart from the registered ones below. When a stream task
 * fails, it is called on the stream's worker thread with the task's position in its
 * stream, the stream's id, the id of the thread that queued the task, the device and
 * the error number; it must not wait for streams. */
ACL_DEPRECATED_MESSAGE("use aclrtExceptionInfoCallbackRegister / Unregister")
ACL_FUNC_VISIBILITY aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback);
/* More callbacks, besides that one: each distinct function once (NULL:
 * ACL_ERROR_INVALID_PARAM). Unregistering one never registered does nothing. */
ACL_FUNC_VISIBILITY aclError
aclrtExceptionInfoCallbackRegister(aclrtExceptionInfoCallback callback);
ACL_FUNC_VISIBILITY aclError
aclrtExceptionInfoCallbackUnregister(aclrtExceptionInfoCallback callback);
/* The fields of an exception (0xFFFFFFFF for NULL info). Work before aclInit. */
ACL_FUNC_VISIBILITY uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo* info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo* info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo* info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo* info);
ACL_FUNC_VISIBILITY uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo* info);
/* The kernel's arguments and function: ACL_ERROR_RT_FEATURE_NOT_SUPPORT (no kernel is
 * ever launched on Cohort, see aclrtLaunchKernel). */
ACL_FUNC_VISIBILITY aclError aclrtGetArgsFromExceptionInfo(const aclrtExceptionInfo* info,
                                                           void** devArgsPtr, uint32_t* devArgsLen);
ACL_FUNC_VISIBILITY aclError aclrtGetFuncHandleFromExceptionInfo(const aclrtExceptionInfo* info,
                                                                 aclrtFuncHandle* func);
/* The device's latest fault: the kind of the last task that failed on it since it
 * was set up or repaired (ACL_RT_ERROR_MEMORY for bad pointers and out-of-memory,
 * ACL_RT_ERROR_LINK for failed links and peers, ACL_RT_ERROR_AICORE for a kernel that
 * trapped, ACL_RT_ERROR_OTHERS otherwise;
 * ACL_RT_NO_ERROR if none). tryRepair and hasDetail are 0. */
ACL_FUNC_VISIBILITY aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo* errorInfo);
/* Forgets the device's fault (an emulated device has no hardware to repair; streams
 * keep their own errors). */
ACL_FUNC_VISIBILITY aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo* errorInfo);
/* Memory UCE errors: emulated memory has none, so *retSize is 0 ... */
ACL_FUNC_VISIBILITY aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo* memUceInfoArray,
                                                size_t arraySize, size_t* retSize);
/* ... and there is nothing to repair (any entry: ACL_ERROR_INVALID_PARAM). */
ACL_FUNC_VISIBILITY aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo* memUceInfoArray,
                                               size_t arraySize);
/* Stops the device's work: every stream of the device drops the tasks it has not
 * started and ends a running wait; other running tasks (host code) are let finish.
 * Threads synchronizing those streams meanwhile get ACL_ERROR_RT_DEVICE_TASK_ABORT;
 * afterwards the streams have no error and run new work. timeout (ms, 0: forever, at
 * most 36 minutes): ACL_ERROR_RT_TASK_TIMEOUT if the abort took longer (a running task
 * may take up to COHORT_EXEC_TIMEOUT). The abort callbacks run before and after. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout);
/* Registers (callback non-NULL) or removes (NULL) an abort callback under a unique,
 * non-empty name. */
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceTaskAbortCallback(const char* regName,
                                                             aclrtDeviceTaskAbortCallback callback,
                                                             void* args);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_RT_SYSTEM_H_ */
