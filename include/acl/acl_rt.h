/*
 * Cohort's ACL-compatible C API: the runtime (aclrt*) subset.
 *
 * Devices are Cohort's emulated devices (COHORT_DEVICE_COUNT per node, selected
 * by ASCEND_RT_VISIBLE_DEVICES / COHORT_VISIBLE_DEVICES). Every function needs
 * aclInit first (ACL_ERROR_UNINITIALIZE otherwise), except those whose comment says
 * they work before it, as CANN's do, and returns ACL_SUCCESS or an
 * error number of acl_base.h. A NULL aclrtStream is the default stream of the
 * calling thread's current device.
 */
#ifndef COHORT_ACL_ACL_RT_H_
#define COHORT_ACL_ACL_RT_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"
/* The device, context, configuration and error families' types. */
#include "acl/acl_rt_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The AscendCL API version these headers follow (aclrtGetVersion). */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 17
#define ACL_PATCH_VERSION 0

/* Flags of aclrtCreateEventWithFlag. */
#define ACL_EVENT_SYNC 0x00000001U
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002U
#define ACL_EVENT_TIME_LINE 0x00000008U
#define ACL_EVENT_DEVICE_USE_ONLY 0x00000010U
#define ACL_EVENT_EXTERNAL 0x00000020U
#define ACL_EVENT_IPC 0x00000040U

/* Flags of aclrtCreateStreamWithConfig. */
#define ACL_STREAM_FAST_LAUNCH 0x00000001U
#define ACL_STREAM_FAST_SYNC 0x00000002U
#define ACL_STREAM_PERSISTENT 0x00000004U
#define ACL_STREAM_HUGE 0x00000008U
#define ACL_STREAM_CPU_SCHEDULE 0x00000010U
#define ACL_STREAM_DEVICE_USE_ONLY 0x00000020U

typedef enum aclrtRunMode ACL_ENUM_BASE {
  ACL_DEVICE = 0,
  ACL_HOST = 1,
} aclrtRunMode;

/* aclrtQueryEvent (deprecated): complete is 0. */
typedef enum aclrtEventStatus ACL_ENUM_BASE {
  ACL_EVENT_STATUS_COMPLETE = 0,
  ACL_EVENT_STATUS_NOT_READY = 1,
  ACL_EVENT_STATUS_RESERVED = 2,
} aclrtEventStatus;

/* aclrtQueryEventStatus: complete is 1. */
typedef enum aclrtEventRecordedStatus ACL_ENUM_BASE {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

typedef enum aclrtCallbackBlockType ACL_ENUM_BASE {
  ACL_CALLBACK_NO_BLOCK = 0, /* the stream goes on while the callback waits to run */
  ACL_CALLBACK_BLOCK = 1,    /* later tasks of the stream wait until it has run */
} aclrtCallbackBlockType;

typedef enum aclrtMemcpyKind ACL_ENUM_BASE {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  ACL_MEMCPY_DEFAULT = 4, /* direction inferred from the addresses */
  ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
  ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
  ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7,
} aclrtMemcpyKind;

/* Every policy is accepted; emulated device memory has one kind of page. */
typedef enum aclrtMemMallocPolicy ACL_ENUM_BASE {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
  ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
  ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
  ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
  ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
  ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000,
} aclrtMemMallocPolicy;

/* aclrtGetMemInfo: every attribute reports the current device's memory. */
typedef enum aclrtMemAttr ACL_ENUM_BASE {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM = 1,
  ACL_DDR_MEM_HUGE = 2,
  ACL_DDR_MEM_NORMAL = 3,
  ACL_HBM_MEM_HUGE = 4,
  ACL_HBM_MEM_NORMAL = 5,
  ACL_DDR_MEM_P2P_HUGE = 6,
  ACL_DDR_MEM_P2P_NORMAL = 7,
  ACL_HBM_MEM_P2P_HUGE = 8,
  ACL_HBM_MEM_P2P_NORMAL = 9,
  ACL_HBM_MEM_HUGE1G = 10,
  ACL_HBM_MEM_P2P_HUGE1G = 11,
  ACL_MEM_NORMAL = 12,
  ACL_MEM_HUGE = 13,
  ACL_MEM_HUGE1G = 14,
  ACL_MEM_P2P_NORMAL = 15,
  ACL_MEM_P2P_HUGE = 16,
  ACL_MEM_P2P_HUGE1G = 17,
} aclrtMemAttr;

typedef enum aclrtLastErrLevel ACL_ENUM_BASE {
  ACL_RT_THREAD_LEVEL = 0,
} aclrtLastErrLevel;

typedef void (*aclrtCallback)(void* userData);

/* aclrtSetStreamFailureMode: after a failed task the stream runs its later tasks
 * (CONTINUE) or skips them (STOP). Either way synchronizing the stream returns the
 * first error. Unlike CANN, whose default is CONTINUE, Cohort's streams start in STOP:
 * a program that needs later tasks to run after a failure sets CONTINUE. */
#define ACL_CONTINUE_ON_FAILURE 0x00000000U
#define ACL_STOP_ON_FAILURE 0x00000001U

/* How floating-point arithmetic of the current device treats overflow: saturate to
 * the largest finite value, or give inf/NaN. Cohort's reductions are IEEE 754
 * (INFNAN, the default); asking for SATURATION is ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
typedef enum aclrtFloatOverflowMode ACL_ENUM_BASE {
  ACL_RT_OVERFLOW_MODE_SATURATION = 0,
  ACL_RT_OVERFLOW_MODE_INFNAN = 1,
  ACL_RT_OVERFLOW_MODE_UNDEF = 2,
} aclrtFloatOverflowMode;

/* ---- Devices ---------------------------------------------------------------- */

/* Makes the device current for the calling thread (its default context) and
 * takes a reference on it; balanced by aclrtResetDevice. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
/* Drops one reference; the last one waits for the device's streams, destroys them
 * and frees all of its memory. */
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
/* ACL_ERROR_RT_CONTEXT_NULL when the thread has no current device. */
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t* deviceId);
/* Works before aclInit. */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t* count);
/* Waits for every stream of the current device. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);
/* timeout in ms (-1: forever); ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it passes. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout);
/* The current device's floating-point overflow mode for the collectives' reductions
 * and the runtime's reduce tasks. */
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode* mode);
/* Releases the device whatever its reference count (aclrtSetDevice calls, contexts):
 * waits for its streams, destroys them and its contexts, frees its memory; the next
 * aclrtSetDevice brings up a fresh device. ACL_ERROR_RT_INVALID_DEVICEID if the
 * device is not set (never set, or already reset). */
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId);
/* ACL_HOST: the program runs on the host and the emulated devices are attached to
 * it, as with a PCIe card (ACL_DEVICE would mean the program runs on the device's
 * own CPU). */
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode* runMode);
/* Accepts either scheduler: Cohort has one (each stream's worker thread). */
ACL_FUNC_VISIBILITY aclError aclrtSetTsDevice(aclrtTsId tsId);
/* Cohort measures no core utilisation: every field is -1 ("cannot be measured",
 * as CANN reports memory utilisation). utilizationExtend must be NULL. */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceUtilizationRate(int32_t deviceId,
                                                           aclrtUtilizationInfo* utilizationInfo);
/* ACL_RT_DEVICE_STATUS_NORMAL: an emulated device stays usable after failed tasks. */
ACL_FUNC_VISIBILITY aclError aclrtQueryDeviceStatus(int32_t deviceId,
                                                    aclrtDeviceStatus* deviceStatus);
/* One attribute of a device (see aclrtDevAttr); the super-pod, host-connection and
 * form-factor attributes are ACL_ERROR_RT_FEATURE_NOT_SUPPORT, as on the SoC
 * emulated. deviceId is a visible device (what aclrtSetDevice takes). */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr,
                                                int64_t* value);
/* Stream priorities: 7 is the lowest, 0 the highest (they do not change scheduling). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetStreamPriorityRange(int32_t* leastPriority,
                                                               int32_t* greatestPriority);
/* ACL_DEV_FEATURE_NOT_SUPPORT for both features: Cohort updates no AI Core tasks and
 * has no system memory queues. */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCapability(int32_t deviceId,
                                                      aclrtDevFeatureType devFeatureType,
                                                      int32_t* value);
/* A device's UUID: stable for the node and the device's physical id. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid* uuid);
/* Kernel stack and printf sizes: ACL_ERROR_RT_FEATURE_NOT_SUPPORT (no kernel runs on
 * an emulated device). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceSetLimit(aclrtDeviceLimit limit, size_t value);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetLimit(aclrtDeviceLimit limit, size_t* value);
/* "0000:BB:DD.0", the emulated PCI address of the device's physical id; len >= 13. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char* pciBusId, int32_t len);
/* The visible device with that PCI address (hexadecimal, either case). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetByPCIBusId(const char* pciBusId, int32_t* deviceId);
/* No device code runs on Cohort, so no device-issued atomic exists: every mask is 0. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetHostAtomicCapabilities(
    uint32_t* capabilities, const aclrtAtomicOperation* operations, const uint32_t count,
    int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetP2PAtomicCapabilities(
    uint32_t* capabilities, const aclrtAtomicOperation* operations, const uint32_t count,
    int32_t srcDeviceId, int32_t dstDeviceId);
/* This process's id (no virtualisation layer to see through). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t* pid);
/* ACL_RT_DEVS_TOPOLOGY_HCCS between two devices of the node (Cohort's intra-node
 * links); the two ids must differ. */
ACL_FUNC_VISIBILITY aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId,
                                                 uint64_t* value);
/* rsv must be NULL. Emulated device memory is the host's, coherent: nothing is
 * cached, so this only orders the calling thread's memory accesses. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceL2CacheFlush(void* rsv);
/* Registers (callback non-NULL) or removes (NULL) a callback under a unique,
 * non-empty name; it is called before and after every aclrtSetDevice,
 * aclrtResetDevice and aclrtResetDeviceForce (POST only when the call succeeded). */
ACL_FUNC_VISIBILITY aclError aclrtRegDeviceStateCallback(const char* regName,
                                                         aclrtDeviceStateCallback callback,
                                                         void* args);
/* Device ids. A user id is what aclrtSetDevice takes (an index into
 * ASCEND_RT_VISIBLE_DEVICES / COHORT_VISIBLE_DEVICES); a logical id is the id on the
 * node, as listed in that variable; the physical id equals the logical one (Cohort
 * runs in no container). Ids that are not visible give ACL_ERROR_RT_INVALID_DEVICEID. */
ACL_FUNC_VISIBILITY aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid,
                                                           int32_t* const logicDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId,
                                                           int32_t* const userDevid);
ACL_FUNC_VISIBILITY aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId,
                                                          int32_t* const logicDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId,
                                                          int32_t* const phyDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId,
                                                         int32_t* const userDevId);
ACL_FUNC_VISIBILITY aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId,
                                                         int32_t* const phyDevId);

/* ---- Contexts: a device binding for a thread -------------------------------- */

/* Creates a context on the device (taking a reference on it) and makes it current. */
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId);
/* Only contexts made by aclrtCreateContext; a device's default context is released
 * by aclrtResetDevice. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext* context);
/* The default stream of the current context's device (a handle every stream call
 * takes; it cannot be destroyed). */
ACL_FUNC_VISIBILITY aclError aclrtCtxGetCurrentDefaultStream(aclrtStream* stream);
/* A system parameter of the current context (aclSysParamOpt: DETERMINISTIC takes
 * 0..3, the others 0 or 1). Getting one never set on the context is
 * ACL_ERROR_INVALID_PARAM. Stored and reported: Cohort runs no operators, which are
 * what these options govern. */
ACL_FUNC_VISIBILITY aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t* value);
/* active: 1 while the device is set (its default context exists), else 0. flags is
 * reserved (NULL, or receives 0). */
ACL_FUNC_VISIBILITY aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t* flags,
                                                     int32_t* active);
/* The overflow flag of saturation mode: ACL_ERROR_RT_FEATURE_NOT_SUPPORT (Cohort's
 * arithmetic is IEEE 754, never saturating). */
ACL_FUNC_VISIBILITY aclError aclrtCtxGetFloatOverflowAddr(void** overflowAddr);

/* ---- Streams ---------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream* stream);
/* priority and the ACL_STREAM_* flags are accepted and do not change behaviour. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority,
                                                         uint32_t flag);
/* Waits for the stream's work, then destroys it. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
/* Waits for the work queued so far; returns the stream's error if a task failed. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
/* timeout in ms: -1 forever, 0 poll; ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when it passes. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
/* Later work of `stream` waits for the event's latest record (asynchronous). */
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
/* ACL_CONTINUE_ON_FAILURE or ACL_STOP_ON_FAILURE, for the tasks queued from now on. */
ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode);

/* ---- Events ----------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent* event);
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
/* Marks the current end of the stream; re-recording moves the mark. */
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
/* Once the stream reaches this point, the event reads as never recorded again. */
ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
/* A never-recorded event is complete. */
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
                                                   aclrtEventRecordedStatus* status);
ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus* status);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
/* timeout in ms (-1: forever); ACL_ERROR_RT_EVENT_SYNC_TIMEOUT when it passes. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);
/* Milliseconds between two completed records. */
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent,
                                                   aclrtEvent endEvent);

/* ---- Memory ----------------------------------------------------------------- */

/* size > 0 bytes of the current device's memory, 64-byte aligned. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void* devPtr);
/* Page-locked host memory: copies from and to it are truly asynchronous. */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void** hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void* hostPtr);
/* Synchronous copy of count bytes; destMax is the capacity of dst. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                                         aclrtMemcpyKind kind);
/* Asynchronous on the stream when the host side is aclrtMallocHost memory;
 * synchronous (returns after the copy) with ordinary host memory. Host to host is
 * not supported (ACL_ERROR_RT_FEATURE_NOT_SUPPORT). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value,
                                         size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value,
                                              size_t count, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total);

/* ---- Host callbacks --------------------------------------------------------- */

/* Binds a host thread (its pthread_t) to a stream: callbacks launched on the stream
 * run in that thread, inside aclrtProcessReport. One thread per stream. */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream);
/* Queues fn(userData) behind the work already on the (subscribed) stream. */
ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void* userData,
                                                 aclrtCallbackBlockType blockType,
                                                 aclrtStream stream);
/* Called in a loop by a subscribed thread: waits up to timeout ms (-1: forever) for
 * callbacks and runs those that are ready; ACL_ERROR_WAIT_CALLBACK_TIMEOUT if none
 * came. */
ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout);
/* Callbacks of the stream still waiting to run are dropped: a blocking one fails
 * the stream. */
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream);

/* ---- Errors ----------------------------------------------------------------- */

/* The calling thread's latest error number; GetLastError also resets it. */
ACL_FUNC_VISIBILITY aclError aclrtGetLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY aclError aclrtPeekAtLastError(aclrtLastErrLevel level);

#ifdef __cplusplus
}
#endif

/* Initialisation, configuration, errors, kernels, memory and streams beyond the
 * basics above (CANN declares them in acl_rt.h too). */
#include "acl/acl_rt_system.h"
#include "acl/acl_rt_kernel.h"
#include "acl/acl_rt_memory.h"
#include "acl/acl_rt_stream.h"
/* External allocators (CANN's acl_rt.h includes acl_rt_allocator.h) and the
 * stream-ordered memory pools, which CANN's documentation uses with acl_rt.h alone. */
#include "acl/acl_rt_allocator.h"
#include "acl/acl_rt_memory_soma.h"

#endif /* COHORT_ACL_ACL_RT_H_ */
