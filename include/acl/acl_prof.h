/*
 * Cohort's ACL-compatible C API: profiling (CANN's acl_prof.h).
 *
 * A profiling session writes the timeline COHORT_TRACE writes, Chrome's trace
 * format (Perfetto, chrome://tracing): DIR/cohort-trace-<pid>.json, one file per
 * process, joined by `cohort-trace merge DIR`. It holds the streams' tasks, the
 * collectives, and the msproftx marks and ranges below.
 *
 *   aclprofInit(dir, strlen(dir));
 *   aclprofConfig* c = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL,
 *                                          ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX);
 *   aclprofStart(c);  ...work...  aclprofStop(c);   <- the file is written here
 *   aclprofDestroyConfig(c);  aclprofFinalize();
 *
 * These functions work before aclInit, as CANN's do. A process that COHORT_TRACE
 * already traces has its profiling configured: aclprofInit returns
 * ACL_ERROR_PROF_ALREADY_RUN. Model subscription (aclprofModelSubscribe and the
 * aclprofGetOp* readers of its data) needs models, which Cohort does not run.
 */
#ifndef COHORT_ACL_ACL_PROF_H_
#define COHORT_ACL_ACL_PROF_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifndef MSVP_PROF_API
#if defined(__GNUC__)
#define MSVP_PROF_API __attribute__((visibility("default")))
#else
#define MSVP_PROF_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Kinds of data for aclprofCreateConfig's dataTypeConfig, or-ed. What each puts
 * in Cohort's timeline: TASK_TIME (and _L0, _L2, _L3) and AICPU the streams'
 * tasks; HCCL_TRACE the collectives (their enqueue, algorithm rounds and mesh
 * phases); MSPROFTX the marks and ranges; ACL_API and RUNTIME_API the waits of
 * synchronising calls. The others name hardware counters or graph-engine data
 * that emulated devices do not have: accepted, and they add nothing. */
#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL
#define ACL_PROF_GE_API_L0 0x0200ULL
#define ACL_PROF_TASK_TIME_L0 0x0800ULL
#define ACL_PROF_TASK_MEMORY 0x1000ULL
#define ACL_PROF_GE_API_L1 0x01000000ULL
#define ACL_PROF_TASK_TIME_L2 0x2000ULL
#define ACL_PROF_OP_ATTR 0x4000ULL
#define ACL_PROF_TASK_TIME_L3 0x8000ULL
#define ACL_PROF_API_STATS 0x400000000ULL
#define ACL_PROF_AICORE_SHAPE 0x800000000ULL

/* Buffer sizes for operator names and types of subscription data (older API;
 * aclprofGetOpNameLen / aclprofGetOpTypeLen tell the lengths). */
#define ACL_PROF_MAX_OP_NAME_LEN 257
#define ACL_PROF_MAX_OP_TYPE_LEN 65

/* The number of dimensions aclprofTensor holds; part of its layout. */
#ifndef ACL_PROF_TENSOR_DATA_SHAPE_LEN
#define ACL_PROF_TENSOR_DATA_SHAPE_LEN 8
#endif

/* AI Core counter groups (aclprofCreateConfig); emulated devices have no AI Core
 * counters, so any valid value records nothing more. */
typedef enum aclprofAicoreMetrics ACL_ENUM_BASE {
  ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
  ACL_AICORE_PIPE_UTILIZATION = 1,
  ACL_AICORE_MEMORY_BANDWIDTH = 2,
  ACL_AICORE_L0B_AND_WIDTH = 3,
  ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
  ACL_AICORE_MEMORY_UB = 5,
  ACL_AICORE_L2_CACHE = 6,
  ACL_AICORE_PIPE_EXECUTE_UTILIZATION = 7,
  ACL_AICORE_MEMORY_ACCESS = 8,
  ACL_AICORE_NONE = 0xFF
} aclprofAicoreMetrics;

/* Which end of an iteration aclprofGetStepTimestamp marks. */
typedef enum aclprofStepTag ACL_ENUM_BASE {
  ACL_STEP_START = 0,
  ACL_STEP_END = 1
} aclprofStepTag;

/* What a record of subscription data describes (aclprofGetOpFlag). */
typedef enum aclprofSubscribeOpFlag ACL_ENUM_BASE {
  ACL_SUBSCRIBE_OP = 0,
  ACL_SUBSCRIBE_SUBGRAPH = 1,
  ACL_SUBSCRIBE_OP_THREAD = 2,
  ACL_SUBSCRIBE_NONE = 0xFF
} aclprofSubscribeOpFlag;

/* Attributes aclprofGetOpAttriValue reads. */
typedef enum aclprofSubscribeOpAttri ACL_ENUM_BASE {
  ACL_SUBSCRIBE_ATTRI_THREADID = 0,
  ACL_SUBSCRIBE_ATTRI_NONE
} aclprofSubscribeOpAttri;

/* Settings of aclprofSetConfig (the value is a string). */
typedef enum aclprofConfigType ACL_ENUM_BASE {
  ACL_PROF_ARGS_MIN = 0,
  ACL_PROF_STORAGE_LIMIT = 1,           /* "N" or "NMB", N in [200, 4294967295] */
  ACL_PROF_SYS_HARDWARE_MEM_FREQ = 3,   /* sampling rates, Hz: no such samples */
  ACL_PROF_LLC_MODE = 4,                /* "read" or "write" */
  ACL_PROF_SYS_IO_FREQ = 5,
  ACL_PROF_SYS_INTERCONNECTION_FREQ = 6,
  ACL_PROF_DVPP_FREQ = 7,
  ACL_PROF_HOST_SYS = 8,                /* "cpu", "mem" or "cpu,mem" */
  ACL_PROF_HOST_SYS_USAGE = 9,
  ACL_PROF_HOST_SYS_USAGE_FREQ = 10,
  ACL_PROF_LOW_POWER_FREQ = 11,
  ACL_PROF_SYS_MEM_SERVICEFLOW = 12,
  ACL_PROF_SYS_CPU_FREQ = 13,
  ACL_PROF_OPTYPE = 14,                 /* not supported */
  ACL_PROF_NTS_METRICS = 15,            /* "PipeUtilization" */
  ACL_PROF_PATH = 16,                   /* the result folder, instead of aclprofInit's */
  ACL_PROF_ARGS_MAX = 17
} aclprofConfigType;

/* The kind of message in aclprofEventAttributes. */
typedef enum aclprofMessageType ACL_ENUM_BASE {
  ACL_PROF_MESSAGE_TYPE_TENSOR_INFO = 0
} aclprofMessageType;

typedef struct aclprofConfig aclprofConfig;           /* what to profile, on which devices */
typedef struct aclprofStopConfig aclprofStopConfig;   /* declared by CANN, used by nothing */
typedef struct aclprofAicoreEvents aclprofAicoreEvents; /* always NULL */
typedef struct aclprofSubscribeConfig aclprofSubscribeConfig;
typedef struct aclprofStepInfo aclprofStepInfo;       /* one iteration's start and end */

/* Operator and tensor descriptions for aclprofRangePushEx. A program that defined
 * these itself defines ACL_PROF_TENSOR_INFO_DEFINED first to keep its own. The
 * layout is fixed; new fields may only be appended, raising
 * ACL_PROF_EVENT_ATTR_VERSION. */
#ifndef ACL_PROF_TENSOR_INFO_DEFINED
#define ACL_PROF_TENSOR_INFO_DEFINED

#define ACL_PROF_EVENT_ATTR_VERSION 1

typedef struct aclprofTensor {
  uint32_t type;     /* 0 input, 1 output */
  uint32_t format;   /* an aclFormat */
  uint32_t dataType; /* an aclDataType */
  uint32_t shapeDim; /* dimensions used in shape, at most ACL_PROF_TENSOR_DATA_SHAPE_LEN */
  uint32_t shape[ACL_PROF_TENSOR_DATA_SHAPE_LEN];
} aclprofTensor;

typedef struct aclprofTensorInfo {
  uint64_t opNameId; /* aclprofStr2Id of the operator's name */
  uint64_t opTypeId; /* aclprofStr2Id of its type */
  uint32_t resv;
  uint32_t tensorNum; /* entries of tensors */
  uint32_t kernelType;
  uint32_t blockNums;
  void* stream;
  aclprofTensor* tensors;
} aclprofTensorInfo;

typedef struct aclprofEventAttributes {
  uint16_t version;     /* ACL_PROF_EVENT_ATTR_VERSION the caller was built with */
  uint16_t size;        /* sizeof(aclprofEventAttributes) the caller was built with */
  uint32_t messageType; /* an aclprofMessageType */
  union Message {
    aclprofTensorInfo* tensorInfo;
  } message;
} aclprofEventAttributes;

#endif /* ACL_PROF_TENSOR_INFO_DEFINED */

/* ---- Sessions ------------------------------------------------------------- */

/* Sets the result folder: the first `length` bytes of profilerResultPath (up to a
 * NUL; 1..4096 bytes), relative to the working directory; created if missing.
 * ACL_ERROR_REPEAT_INITIALIZE before aclprofFinalize; ACL_ERROR_PROF_ALREADY_RUN
 * when COHORT_TRACE traces the process. */
MSVP_PROF_API aclError aclprofInit(const char* profilerResultPath, size_t length);
/* Ends what aclprofInit began; a session still running is stopped and written.
 * ACL_ERROR_PROF_NOT_RUN without aclprofInit (and so on a second call). */
MSVP_PROF_API aclError aclprofFinalize(void);
/* Starts recording the config's data. Several configs may run at once if they
 * name different devices (a config without devices counts as one of its own);
 * ACL_ERROR_PROF_ALREADY_RUN when one of its devices is profiled already;
 * ACL_ERROR_PROF_NOT_RUN without aclprofInit. */
MSVP_PROF_API aclError aclprofStart(const aclprofConfig* profilerConfig);
/* What to profile: deviceNums ids of visible devices (distinct; deviceIdList may
 * be NULL when deviceNums is 0), an aclprofAicoreMetrics value, aicoreEvents NULL,
 * and ACL_PROF_* bits. NULL (with the reason in aclGetRecentErrMsg) when an
 * argument is invalid. */
MSVP_PROF_API aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums,
                                                 aclprofAicoreMetrics aicoreMetrics,
                                                 const aclprofAicoreEvents* aicoreEvents,
                                                 uint64_t dataTypeConfig);
/* Frees a config (a running session it started goes on until aclprofStop with a
 * config of the same content). ACL_ERROR_INVALID_PARAM for NULL or a config that
 * is not live. */
MSVP_PROF_API aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig);
/* Stops what aclprofStart began with a config of the same devices and data kinds,
 * and writes the file (when no other config is running, recording stops too).
 * ACL_ERROR_INVALID_PROFILING_CONFIG when no such start is running;
 * ACL_ERROR_PROFILING_FAILURE when the file cannot be written. */
MSVP_PROF_API aclError aclprofStop(const aclprofConfig* profilerConfig);
/* Sets one setting for the next aclprofStart (configLength 1..256 bytes, the value
 * up to a NUL); not while a session runs (ACL_ERROR_PROF_ALREADY_RUN). Values are
 * checked and kept in the file's session record; sampling rates are accepted but
 * emulated devices have nothing to sample (a warning says so). ACL_PROF_PATH
 * replaces aclprofInit's folder. ACL_PROF_OPTYPE is
 * ACL_ERROR_PROF_MODULES_UNSUPPORTED. */
MSVP_PROF_API aclError aclprofSetConfig(aclprofConfigType configType, const char* config,
                                        size_t configLength);

/* ---- Model subscription: needs models, which Cohort does not run ------------ */

/* ACL_ERROR_API_NOT_SUPPORT (ACL_ERROR_PROF_API_CONFLICT between aclprofInit and
 * aclprofFinalize). */
MSVP_PROF_API aclError aclprofModelSubscribe(uint32_t modelId,
                                             const aclprofSubscribeConfig* profSubscribeConfig);
/* ACL_ERROR_API_NOT_SUPPORT (ACL_ERROR_PROF_API_CONFLICT between aclprofInit and
 * aclprofFinalize). */
MSVP_PROF_API aclError aclprofModelUnSubscribe(uint32_t modelId);
/* NULL: not supported. */
MSVP_PROF_API aclprofSubscribeConfig* aclprofCreateSubscribeConfig(
    int8_t timeInfoSwitch, aclprofAicoreMetrics aicoreMetrics, void* fd);
/* ACL_ERROR_API_NOT_SUPPORT: no subscription config can exist. */
MSVP_PROF_API aclError aclprofDestroySubscribeConfig(
    const aclprofSubscribeConfig* profSubscribeConfig);
/* ACL_ERROR_API_NOT_SUPPORT. */
MSVP_PROF_API aclError aclprofGetOpDescSize(size_t* opDescSize);
/* The readers of subscription data: there is never any, so opInfo is not such
 * data (ACL_ERROR_INVALID_PARAM; 0, ACL_SUBSCRIBE_NONE or NULL for those that
 * return a value). ACL_ERROR_PROF_API_CONFLICT between aclprofInit and
 * aclprofFinalize. */
MSVP_PROF_API aclError aclprofGetOpNum(const void* opInfo, size_t opInfoLen, uint32_t* opNumber);
MSVP_PROF_API aclError aclprofGetOpTypeLen(const void* opInfo, size_t opInfoLen, uint32_t index,
                                           size_t* opTypeLen);
MSVP_PROF_API aclError aclprofGetOpType(const void* opInfo, size_t opInfoLen, uint32_t index,
                                        char* opType, size_t opTypeLen);
MSVP_PROF_API aclError aclprofGetOpNameLen(const void* opInfo, size_t opInfoLen, uint32_t index,
                                           size_t* opNameLen);
MSVP_PROF_API aclError aclprofGetOpName(const void* opInfo, size_t opInfoLen, uint32_t index,
                                        char* opName, size_t opNameLen);
MSVP_PROF_API uint64_t aclprofGetOpStart(const void* opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API uint64_t aclprofGetOpEnd(const void* opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API uint64_t aclprofGetOpDuration(const void* opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API size_t aclprofGetModelId(const void* opInfo, size_t opInfoLen, uint32_t index);
MSVP_PROF_API aclprofSubscribeOpFlag aclprofGetOpFlag(const void* opInfo, size_t opInfoLen,
                                                      uint32_t index);
MSVP_PROF_API const char* aclprofGetOpAttriValue(const void* opInfo, size_t opInfoLen,
                                                 uint32_t index, aclprofSubscribeOpAttri attri);

/* ---- Iterations ----------------------------------------------------------- */

/* Marks where the stream reaches the start or end of the iteration, each once per
 * step info: a task that records the moment on the stream's track; at the end,
 * the iteration is a span "step N" (N counts step infos). A NULL stream is the
 * current device's default stream. ACL_ERROR_INVALID_PARAM for a step info that is
 * not live, a bad tag, a tag given before, or an end without a start. */
MSVP_PROF_API aclError aclprofGetStepTimestamp(aclprofStepInfo* stepInfo, aclprofStepTag tag,
                                               aclrtStream stream);
/* A new step info (NULL only when out of memory). */
MSVP_PROF_API aclprofStepInfo* aclprofCreateStepInfo(void);
/* Frees a step info (NULL or one that is not live: nothing, with a message). */
MSVP_PROF_API void aclprofDestroyStepInfo(aclprofStepInfo* stepinfo);

/* ---- msproftx marks and ranges -------------------------------------------- */
/* Recorded on the calling thread's track when the running session asked for
 * ACL_PROF_MSPROFTX. Between aclprofStart and aclprofStop: ACL_ERROR_PROF_NOT_RUN
 * otherwise (a Pop of a Push made during the session still works). A stamp is a
 * message; ACL_ERROR_INVALID_PARAM for NULL or a stamp that is not live. */

/* A new stamp with an empty message; NULL when no session runs. */
MSVP_PROF_API void* aclprofCreateStamp(void);
/* Frees a stamp (ranges begun with it go on). */
MSVP_PROF_API void aclprofDestroyStamp(void* stamp);
/* Begins a span named by the stamp's message on this thread; aclprofPop ends the
 * innermost one. */
MSVP_PROF_API aclError aclprofPush(void* stamp);
/* Ends this thread's innermost aclprofPush span (ACL_ERROR_INVALID_PARAM if none). */
MSVP_PROF_API aclError aclprofPop(void);
/* Begins a span that any thread may end with aclprofRangeStop(*rangeId); drawn
 * as an asynchronous span (a track of its own). */
MSVP_PROF_API aclError aclprofRangeStart(void* stamp, uint32_t* rangeId);
/* Ends a range (ACL_ERROR_INVALID_PARAM for an id that is not running). */
MSVP_PROF_API aclError aclprofRangeStop(uint32_t rangeId);
/* Sets the stamp's message: the first msgLen bytes of msg (up to a NUL; not 0). */
MSVP_PROF_API aclError aclprofSetStampTraceMessage(void* stamp, const char* msg, uint32_t msgLen);
/* An instant named by the stamp's message. */
MSVP_PROF_API aclError aclprofMark(void* stamp);
/* An instant `msg` (1..127 bytes, up to a NUL) on this thread, and a task that
 * records the same instant on the stream's track when the stream reaches it, with
 * a shared "mark_id" to pair them. A NULL stream is the default stream. */
MSVP_PROF_API aclError aclprofMarkEx(const char* msg, size_t msgLen, aclrtStream stream);
/* A 64-bit hash of the string (the same string, the same id in every process);
 * spans of aclprofRangePushEx show the strings of ids made here. UINT64_MAX for
 * NULL. Works at any time. */
MSVP_PROF_API uint64_t aclprofStr2Id(const char* message);
/* Begins a span describing an operator (ACL_PROF_MESSAGE_TYPE_TENSOR_INFO with its
 * tensors) on this thread; aclprofRangePop ends the innermost one. */
MSVP_PROF_API aclError aclprofRangePushEx(aclprofEventAttributes* attr);
/* Ends this thread's innermost aclprofRangePushEx span (ACL_ERROR_INVALID_PARAM if
 * none). */
MSVP_PROF_API aclError aclprofRangePop(void);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_PROF_H_ */
