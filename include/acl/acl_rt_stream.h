/*
 * Cohort's ACL-compatible C API: streams, events, notifies, labels, value
 * write/wait, host functions and the built-in tasks beyond the basics of
 * acl/acl_rt.h (declared in CANN's acl_rt.h; included by acl/acl_rt.h, never on
 * its own).
 *
 * Waits that run as stream tasks (event waits with a timeout, notify and value
 * waits) end at their own timeout, else at the task wait timeout (COHORT_EXEC_TIMEOUT
 * unless aclrtSetOpExecuteTimeOut set one; for event waits aclrtSetOpWaitTimeout
 * first), failing the stream; aclrtStreamAbort ends them too. Functions that only make sense for
 * streams bound to a model runtime instance (labels' jumps, stream activation and
 * switching, task updates) return ACL_ERROR_RT_FEATURE_NOT_SUPPORT.
 */
#ifndef COHORT_ACL_ACL_RT_STREAM_H_
#define COHORT_ACL_ACL_RT_STREAM_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aclrtValueWait: when the 64-bit value at the address satisfies the condition. */
#define ACL_STREAM_WAIT_VALUE_GEQ 0x00000000U /* (int64_t)(*addr - value) >= 0 */
#define ACL_STREAM_WAIT_VALUE_EQ 0x00000001U  /* *addr == value */
#define ACL_STREAM_WAIT_VALUE_AND 0x00000002U /* (*addr & value) != 0 */
#define ACL_STREAM_WAIT_VALUE_NOR 0x00000003U /* ~(*addr | value) != 0 */

/* aclrtCreateNotify flags (both accepted; a notify works on host and device alike). */
#define ACL_NOTIFY_DEFAULT 0x00000000U
#define ACL_NOTIFY_DEVICE_USE_ONLY 0x00000001U

/* aclrtNotifyGetExportKey: DEFAULT admits only the processes named by
 * aclrtNotifySetImportPid; DISABLE_PID_VALIDATION admits every process of the node. */
#define ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x02UL
/* aclrtNotifyImportByKey (both accepted: emulated devices always reach each other). */
#define ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x02UL

#define ACL_IPC_EVENT_HANDLE_SIZE 64U

/* aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag. EXTERNAL ties a captured
 * model to the streams outside it (a capturing stream only): every launch records the
 * event for them, or waits for their latest record. */
#define ACL_EVENT_RECORD_DEFAULT 0x0U
#define ACL_EVENT_RECORD_EXTERNAL 0x01U
#define ACL_EVENT_WAIT_DEFAULT 0x0U
#define ACL_EVENT_WAIT_EXTERNAL 0x01U

/* aclrtQueryEventWaitStatus: whether the waits queued for the event have run. */
typedef enum aclrtEventWaitStatus ACL_ENUM_BASE {
  ACL_EVENT_WAIT_STATUS_COMPLETE = 0,
  ACL_EVENT_WAIT_STATUS_NOT_READY = 1,
  ACL_EVENT_WAIT_STATUS_RESERVED = 0xFFFF,
} aclrtEventWaitStatus;

/* aclrtStreamQuery. */
typedef enum aclrtStreamStatus ACL_ENUM_BASE {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF,
} aclrtStreamStatus;

/* aclrtSetStreamConfigOpt: what the value sets. */
typedef enum aclrtStreamConfigAttr ACL_ENUM_BASE {
  ACL_RT_STREAM_WORK_ADDR_PTR = 0, /* void*: a model's work memory (kept, unused) */
  ACL_RT_STREAM_WORK_SIZE = 1,     /* size_t: its size in bytes */
  ACL_RT_STREAM_FLAG = 2,          /* uint32_t: ACL_STREAM_* flags */
  ACL_RT_STREAM_PRIORITY = 3,      /* uint32_t: 0 (highest, default) .. 7 */
} aclrtStreamConfigAttr;

/* The settings aclrtCreateStreamV2 creates a stream with. */
typedef struct aclrtStreamConfigHandle {
  void* workptr;
  size_t workSize;
  size_t flag;
  uint32_t priority;
} aclrtStreamConfigHandle;

typedef void (*aclrtHostFunc)(void* args);

/* aclrtSetStreamAttribute / aclrtGetStreamAttribute. */
typedef enum aclrtStreamAttr ACL_ENUM_BASE {
  ACL_STREAM_ATTR_FAILURE_MODE = 1,         /* failureMode: as aclrtSetStreamFailureMode */
  ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2, /* overflowSwitch: 0 or 1 (recorded) */
  ACL_STREAM_ATTR_USER_CUSTOM_TAG = 3,      /* userCustomTag: any value (recorded) */
  ACL_STREAM_ATTR_CACHE_OP_INFO = 4,        /* cacheOpInfoSwitch: 0 or 1 (recorded) */
  ACL_STREAM_ATTR_PRIORITY = 5,             /* streamPriority: 0..7 (recorded) */
} aclrtStreamAttr;

typedef union aclrtStreamAttrValue {
  uint64_t failureMode;
  uint32_t overflowSwitch;
  uint32_t userCustomTag;
  uint32_t cacheOpInfoSwitch;
  uint32_t streamPriority;
  uint32_t reserve[4];
} aclrtStreamAttrValue;

/* aclrtReduceAsync: dst[i] = dst[i] (op) src[i]. EQUAL has no documented result:
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
typedef enum aclrtReduceKind ACL_ENUM_BASE {
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM = 10,
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 11,
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN = 12,
  ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 13,
} aclrtReduceKind;

/* aclrtSwitchStream's comparison and operand type. */
typedef enum aclrtCondition ACL_ENUM_BASE {
  ACL_RT_EQUAL = 0,
  ACL_RT_NOT_EQUAL = 1,
  ACL_RT_GREATER = 2,
  ACL_RT_GREATER_OR_EQUAL = 3,
  ACL_RT_LESS = 4,
  ACL_RT_LESS_OR_EQUAL = 5,
} aclrtCondition;

typedef enum aclrtCompareDataType ACL_ENUM_BASE {
  ACL_RT_SWITCH_INT32 = 0,
  ACL_RT_SWITCH_INT64 = 1,
} aclrtCompareDataType;

/* A parameter of a random number task: the value itself (isAddr 0: `size` bytes of
 * valueOrAddr) or the device address it is read from when the task runs (isAddr 1). */
typedef struct aclrtRandomParaInfo {
  uint8_t isAddr;
  uint8_t valueOrAddr[8];
  uint8_t size;
  uint8_t rsv[6];
} aclrtRandomParaInfo;

typedef struct aclrtDropoutBitmaskInfo {
  aclrtRandomParaInfo dropoutRation; /* the probability that a bit is 0 (dropped) */
} aclrtDropoutBitmaskInfo;

typedef struct aclrtUniformDisInfo {
  aclrtRandomParaInfo min;
  aclrtRandomParaInfo max;
} aclrtUniformDisInfo;

typedef struct aclrtNormalDisInfo {
  aclrtRandomParaInfo mean;
  aclrtRandomParaInfo stddev;
} aclrtNormalDisInfo;

typedef enum aclrtRandomNumFuncType ACL_ENUM_BASE {
  ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK = 0,
  ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS = 1,
  ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS = 2,
  ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS = 3,
} aclrtRandomNumFuncType;

typedef struct aclrtRandomNumFuncParaInfo {
  aclrtRandomNumFuncType funcType;
  union {
    aclrtDropoutBitmaskInfo dropoutBitmaskInfo;
    aclrtUniformDisInfo uniformDisInfo;
    aclrtNormalDisInfo normalDisInfo;
  } paramInfo;
} aclrtRandomNumFuncParaInfo;

/* aclrtRandomNumAsync's task. randomCounterAddr: 16 bytes of device memory holding
 * the 128-bit Philox counter the numbers start from; the task advances it. */
typedef struct aclrtRandomNumTaskInfo {
  aclDataType dataType;
  aclrtRandomNumFuncParaInfo randomNumFuncParaInfo;
  void* randomParaAddr;
  void* randomResultAddr;
  void* randomCounterAddr;
  aclrtRandomParaInfo randomSeed;
  aclrtRandomParaInfo randomNum;
  uint8_t rsv[8];
} aclrtRandomNumTaskInfo;

/* aclrtTaskUpdateAsync's update. */
typedef enum aclrtUpdateTaskAttrId ACL_ENUM_BASE {
  ACL_RT_UPDATE_RANDOM_TASK = 1,
  ACL_RT_UPDATE_AIC_AIV_TASK = 2,
} aclrtUpdateTaskAttrId;

typedef struct aclrtRandomTaskUpdateAttr {
  void* srcAddr;
  size_t size;
  uint32_t rsv[4];
} aclrtRandomTaskUpdateAttr;

typedef struct aclrtAicAivTaskUpdateAttr {
  void* binHandle;
  void* funcEntryAddr;
  void* blockDimAddr;
  uint32_t rsv[4];
} aclrtAicAivTaskUpdateAttr;

typedef union aclrtUpdateTaskAttrVal {
  aclrtRandomTaskUpdateAttr randomTaskAttr;
  aclrtAicAivTaskUpdateAttr aicAivTaskAttr;
} aclrtUpdateTaskAttrVal;

typedef struct aclrtTaskUpdateInfo {
  aclrtUpdateTaskAttrId id;
  aclrtUpdateTaskAttrVal val;
} aclrtTaskUpdateInfo;

/* aclrtRegStreamStateCallback: after a stream is created (the default stream when its
 * device is set), and before it is destroyed (the default stream when its device is
 * reset for the last time). */
typedef enum aclrtStreamState ACL_ENUM_BASE {
  ACL_RT_STREAM_STATE_CREATE_POST = 1,
  ACL_RT_STREAM_STATE_DESTROY_PRE = 2,
} aclrtStreamState;

typedef void (*aclrtStreamStateCallback)(aclrtStream stm, aclrtStreamState state, void* args);

/* Count notifies: a 32-bit count that records change and waits test. */
typedef enum aclrtCntNotifyRecordMode ACL_ENUM_BASE {
  ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE = 0, /* count = value */
  ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE = 1,       /* count += value */
  ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE = 2,    /* count |= value */
  ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE = 4,   /* count &= value */
} aclrtCntNotifyRecordMode;

typedef struct aclrtCntNotifyRecordInfo {
  aclrtCntNotifyRecordMode mode;
  uint32_t value;
} aclrtCntNotifyRecordInfo;

typedef enum aclrtCntNotifyWaitMode ACL_ENUM_BASE {
  ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE = 0,               /* until count < value */
  ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE = 1,              /* until count == value */
  ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE = 2,             /* until count > value */
  ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE = 3,    /* until count >= value */
  ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE = 4, /* until (count & value) == value */
} aclrtCntNotifyWaitMode;

typedef struct aclrtCntNotifyWaitInfo {
  aclrtCntNotifyWaitMode mode;
  uint32_t value;
  uint32_t timeout; /* seconds; 0: the task wait timeout */
  uint8_t isClear;  /* 1: the count is set to 0 when the wait ends */
  uint8_t rsv[3];
} aclrtCntNotifyWaitInfo;

/* What another process needs to open an IPC event: plain bytes, safe to write to a
 * file or send. */
typedef struct aclrtIpcEventHandle {
  char reserved[ACL_IPC_EVENT_HANDLE_SIZE];
} aclrtIpcEventHandle;

/* ---- Streams ---------------------------------------------------------------- */

/* A new configuration handle with every setting 0 (NULL when out of memory). */
ACL_FUNC_VISIBILITY aclrtStreamConfigHandle* aclrtCreateStreamConfigHandle(void);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle* handle);
/* valueSize must be the attribute's size (void*, size_t or uint32_t, see above). */
ACL_FUNC_VISIBILITY aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle* handle,
                                                     aclrtStreamConfigAttr attr,
                                                     const void* attrValue, size_t valueSize);
/* A stream with the handle's flags and priority (what aclrtStreamGetFlags/Priority
 * report); the work memory is kept for nothing: Cohort runs no offline models. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamV2(aclrtStream* stream,
                                                 const aclrtStreamConfigHandle* handle);
/* Drops the stream's queued tasks (they do not run; events they record complete with
 * the abort), ends a wait it is running, then destroys it. A running kernel is let
 * finish: a host callable cannot be interrupted. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamForce(aclrtStream stream);
/* Drops the stream's queued tasks as aclrtDestroyStreamForce does and keeps the
 * stream: synchronizations waiting meanwhile return an abort error; later work runs. */
ACL_FUNC_VISIBILITY aclError aclrtStreamAbort(aclrtStream stream);
/* Ends a wait the stream is running and holds what is queued (until aclrtStreamAbort
 * or destruction drops it); the stream fails with an abort error. Not the default
 * stream. */
ACL_FUNC_VISIBILITY aclError aclrtStreamStop(aclrtStream stream);
/* ACL_STREAM_STATUS_COMPLETE when every task queued so far has run; the stream's
 * error if a task failed. */
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status);
/* The stream's id on its device (NULL: the default stream). */
ACL_FUNC_VISIBILITY aclError aclrtStreamGetId(aclrtStream stream, int32_t* streamId);
/* The flags / priority the stream was created with (0 for aclrtCreateStream and the
 * default stream); the priority as last set by ACL_STREAM_ATTR_PRIORITY. */
ACL_FUNC_VISIBILITY aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t* flags);
ACL_FUNC_VISIBILITY aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t* priority);
/* How many more streams the current device takes: 1984 (an Ascend 910B's) less the
 * streams it has, the default one included. */
ACL_FUNC_VISIBILITY aclError aclrtGetStreamAvailableNum(uint32_t* streamCount);
/* Failure mode goes to the same place as aclrtSetStreamFailureMode (not for a default
 * stream); the others are recorded for aclrtGetStreamAttribute. */
ACL_FUNC_VISIBILITY aclError aclrtSetStreamAttribute(aclrtStream stream,
                                                     aclrtStreamAttr stmAttrType,
                                                     aclrtStreamAttrValue* value);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamAttribute(aclrtStream stream,
                                                     aclrtStreamAttr stmAttrType,
                                                     aclrtStreamAttrValue* value);
/* The overflow-detection switch (0 off, the default; 1 on), as
 * ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK. */
ACL_FUNC_VISIBILITY aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t* flag);
/* Stream resource limits (aclrtSetStreamResLimit ...) are in acl/acl_rt_system.h. */
/* Registers (callback non-NULL) or removes (NULL) a callback under a unique name; it
 * runs on the thread that creates or destroys a stream, and must not create, destroy
 * or set devices itself. */
ACL_FUNC_VISIBILITY aclError aclrtRegStreamStateCallback(const char* regName,
                                                         aclrtStreamStateCallback callback,
                                                         void* args);
/* Only for streams bound to a model runtime instance: ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSwitchStream(void* leftValue, aclrtCondition cond,
                                               void* rightValue, aclrtCompareDataType dataType,
                                               aclrtStream trueStream, aclrtStream falseStream,
                                               aclrtStream stream);
/* Cohort's ACL_STREAM_PERSISTENT streams run their tasks at once and keep none:
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtPersistentTaskClean(aclrtStream stream);

/* ---- Events ----------------------------------------------------------------- */

/* Flags ACL_EVENT_TIME_LINE, ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, or
 * ACL_EVENT_IPC alone: an event other processes can open (aclrtIpcGetEventHandle). */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventExWithFlag(aclrtEvent* event, uint32_t flag);
/* ACL_EVENT_RECORD_DEFAULT: aclrtRecordEvent. */
ACL_FUNC_VISIBILITY aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream,
                                                      uint32_t flag);
/* timeout in seconds (0: the event wait timeout): the stream fails if the event's record
 * has not completed by then. */
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event,
                                                             int32_t timeout);
/* ACL_EVENT_WAIT_DEFAULT: aclrtStreamWaitEventWithTimeout. */
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event,
                                                          uint32_t timeout, uint32_t flag);
/* When the event's latest record ran, in microseconds since boot. */
ACL_FUNC_VISIBILITY aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t* timestamp);
ACL_FUNC_VISIBILITY aclError aclrtGetEventId(aclrtEvent event, uint32_t* eventId);
/* 65536 (an Ascend 910B device's) less the events that exist in the process. */
ACL_FUNC_VISIBILITY aclError aclrtGetEventAvailNum(uint32_t* eventCount);
/* COMPLETE once every wait queued for the event (aclrtStreamWaitEvent...) has run. */
ACL_FUNC_VISIBILITY aclError aclrtQueryEventWaitStatus(aclrtEvent event,
                                                       aclrtEventWaitStatus* status);
/* The handle of an ACL_EVENT_IPC event, for aclrtIpcOpenEventHandle in a process of the
 * same node (valid while this process keeps the event). */
ACL_FUNC_VISIBILITY aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle* handle);
/* An event that shares the handle's records: recording, waiting and synchronizing work
 * in either process. Destroy it with aclrtDestroyEvent. */
ACL_FUNC_VISIBILITY aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent* event);

/* ---- Notifies: a flag one stream raises and another waits for and lowers ---- */

ACL_FUNC_VISIBILITY aclError aclrtCreateNotify(aclrtNotify* notify, uint64_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyNotify(aclrtNotify notify);
/* Raises the notify when the stream gets there. */
ACL_FUNC_VISIBILITY aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream);
/* The stream waits until the notify is raised, then lowers it. timeout in seconds (0:
 * the task wait timeout). */
ACL_FUNC_VISIBILITY aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream,
                                                     uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t* notifyId);
/* Lowers the notifies now. */
ACL_FUNC_VISIBILITY aclError aclrtNotifyBatchReset(aclrtNotify* notifies, size_t num);
/* Makes the notify shareable with the processes of this node and writes its key (at
 * most 64 characters and a NUL; len >= 65). */
ACL_FUNC_VISIBILITY aclError aclrtNotifyGetExportKey(aclrtNotify notify, char* key, size_t len,
                                                     uint64_t flags);
/* Adds processes (at most 64 in all) allowed to import an exported notify. */
ACL_FUNC_VISIBILITY aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t* pid, size_t num);
/* Across servers: ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtNotifySetImportPidInterServer(aclrtNotify notify,
                                                                aclrtServerPid* serverPids,
                                                                size_t num);
/* A notify sharing the exported one's state: records and waits in either process
 * see each other. */
ACL_FUNC_VISIBILITY aclError aclrtNotifyImportByKey(aclrtNotify* notify, const char* key,
                                                    uint64_t flags);

/* ---- Count notifies (within the process) ------------------------------------- */

/* flag must be 0. */
ACL_FUNC_VISIBILITY aclError aclrtCntNotifyCreate(aclrtCntNotify* cntNotify, uint64_t flag);
ACL_FUNC_VISIBILITY aclError aclrtCntNotifyDestroy(aclrtCntNotify cntNotify);
/* Changes the count as info->mode says when the stream gets there. */
ACL_FUNC_VISIBILITY aclError aclrtCntNotifyRecord(aclrtCntNotify cntNotify, aclrtStream stream,
                                                  aclrtCntNotifyRecordInfo* info);
/* The stream waits until the count satisfies info->mode (and clears it if isClear). */
ACL_FUNC_VISIBILITY aclError aclrtCntNotifyWaitWithTimeout(aclrtCntNotify cntNotify,
                                                           aclrtStream stream,
                                                           aclrtCntNotifyWaitInfo* info);
/* Sets the count to 0 when the stream gets there. */
ACL_FUNC_VISIBILITY aclError aclrtCntNotifyReset(aclrtCntNotify cntNotify, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtCntNotifyGetId(aclrtCntNotify cntNotify, uint32_t* notifyId);

/* ---- Labels: created and listed; jumping needs model-bound streams ---------- */

/* At most 65535 labels at a time. */
ACL_FUNC_VISIBILITY aclError aclrtCreateLabel(aclrtLabel* label);
ACL_FUNC_VISIBILITY aclError aclrtDestroyLabel(aclrtLabel label);
/* ACL_ERROR_RT_FEATURE_NOT_SUPPORT: labels mark places in model-bound streams. */
ACL_FUNC_VISIBILITY aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream);
/* num in (0, 65535], every entry a live label. */
ACL_FUNC_VISIBILITY aclError aclrtCreateLabelList(aclrtLabel* labels, size_t num,
                                                  aclrtLabelList* labelList);
ACL_FUNC_VISIBILITY aclError aclrtDestroyLabelList(aclrtLabelList labelList);
/* ACL_ERROR_RT_FEATURE_NOT_SUPPORT: Cohort's streams do not branch. */
ACL_FUNC_VISIBILITY aclError aclrtSwitchLabelByIndex(void* ptr, uint32_t maxValue,
                                                     aclrtLabelList labelList, aclrtStream stream);

/* ---- Values in device memory ------------------------------------------------- */

/* Writes the 64-bit value at devAddr (device memory, 8-byte aligned) when the stream
 * gets there. flag must be 0. */
ACL_FUNC_VISIBILITY aclError aclrtValueWrite(void* devAddr, uint64_t value, uint32_t flag,
                                             aclrtStream stream);
/* The stream waits until the 64-bit value at devAddr satisfies the ACL_STREAM_WAIT_VALUE_*
 * condition (written by another stream, the host or another process). */
ACL_FUNC_VISIBILITY aclError aclrtValueWait(void* devAddr, uint64_t value, uint32_t flag,
                                            aclrtStream stream);

/* ---- Host functions ---------------------------------------------------------- */

/* Queues fn(args); later tasks of the stream wait until it has run. It runs in the
 * thread subscribed by aclrtSubscribeHostFunc (inside aclrtProcessHostFunc), or in the
 * runtime's own thread when none is. */
ACL_FUNC_VISIBILITY aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void* args);
/* The thread that runs the stream's host functions (and callbacks: one thread per
 * stream, whichever call subscribed it). exeStream must not be NULL. */
ACL_FUNC_VISIBILITY aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId,
                                                    aclrtStream exeStream);
/* Called in a loop by a subscribed thread: waits up to timeout ms (-1: forever) and runs
 * the host functions that are ready; ACL_ERROR_WAIT_CALLBACK_TIMEOUT if none came. */
ACL_FUNC_VISIBILITY aclError aclrtProcessHostFunc(int32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId,
                                                      aclrtStream exeStream);

/* ---- Built-in tasks ---------------------------------------------------------- */

/* dst = dst (kind) src over count bytes of the stream's device: ACL_INT8, ACL_INT16,
 * ACL_INT32, ACL_UINT32, ACL_FLOAT16, ACL_BF16 or ACL_FLOAT; integers wrap, floats
 * follow IEEE 754 (fp16 and bf16 through fp32, rounded to nearest even), the same
 * kernels as the collectives': max is (dst < src ? src : dst), min (src < dst ? src :
 * dst), so a NaN in dst stays and one in src is not taken. reserve: NULL. */
ACL_FUNC_VISIBILITY aclError aclrtReduceAsync(void* dst, const void* src, uint64_t count,
                                              aclrtReduceKind kind, aclDataType type,
                                              aclrtStream stream, void* reserve);
/* Philox4x32-10 numbers from the seed and the 16-byte counter: uniform in [min, max)
 * (ACL_INT32/INT64/UINT32/UINT64/FLOAT/FLOAT16/BF16), normal and truncated normal
 * (within two standard deviations; the float types), or a dropout bitmask (ceil(num / 8)
 * bytes, bit i of byte i / 8 is 1 with probability 1 - ratio). reserve: NULL. */
ACL_FUNC_VISIBILITY aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo* taskInfo,
                                                 const aclrtStream stream, void* reserve);
/* Only for streams bound to a model runtime instance: ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtTaskUpdateAsync(aclrtStream taskStream, uint32_t taskId,
                                                  aclrtTaskUpdateInfo* info,
                                                  aclrtStream execStream);
/* A profiling marker with length (1..18) bytes of userdata, zero-padded to 18: an instant
 * on the stream's track of the trace (COHORT_TRACE or an aclprofStart session) when the
 * stream gets there. */
ACL_FUNC_VISIBILITY aclError aclrtProfTrace(void* userdata, int32_t length, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_RT_STREAM_H_ */
