/*
 * Cohort's ACL-compatible C API: base types and error numbers.
 *
 * Written from the documented AscendCL runtime API (names, types and numeric
 * values), so that programs written for Ascend compile and run unchanged on
 * Cohort's emulated devices. Every function returns an aclError: 0 on success,
 * one of the numbers below otherwise; aclGetRecentErrMsg() (acl.h) tells what
 * went wrong and where.
 */
#ifndef COHORT_ACL_ACL_BASE_H_
#define COHORT_ACL_ACL_BASE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ACL_FUNC_VISIBILITY
#endif

/* In C++ the enums below have int as their underlying type, as they have in C:
 * any int a caller passes is a valid value to check (and reject), never
 * undefined behaviour. */
#ifdef __cplusplus
#define ACL_ENUM_BASE : int
#else
#define ACL_ENUM_BASE
#endif

/* ---- Handles and the error type ------------------------------------------- */

typedef void* aclrtStream;  /* a stream of one device (NULL: the default stream) */
typedef void* aclrtEvent;   /* a mark in a stream */
typedef void* aclrtContext; /* a device binding for the calling thread */
typedef void* aclrtNotify;
typedef int aclError;

/* ---- AscendCL error numbers ----------------------------------------------- */

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0;

/* 1000xx: parameters and usage. */
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001; /* a call before aclInit */
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_WRITE_FILE = 100004;
static const int ACL_ERROR_INVALID_FILE_SIZE = 100005;
static const int ACL_ERROR_PARSE_FILE = 100006;
static const int ACL_ERROR_FILE_MISSING_ATTR = 100007;
static const int ACL_ERROR_FILE_ATTR_INVALID = 100008;
static const int ACL_ERROR_REPEAT_SUBSCRIBE = 100033;
static const int ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034;
static const int ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035;
static const int ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_DUMP_NOT_RUN = 100045;
static const int ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046;
static const int ACL_ERROR_PROF_API_CONFLICT = 148047;
static const int ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048;
static const int ACL_ERROR_INVALID_OPP_PATH = 148049;
static const int ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050;
static const int ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051;
static const int ACL_ERROR_UNSUPPORTED_JPEG = 148052;
static const int ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053;

/* 2000xx, 300000, 5000xx: resources and failures. */
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
static const int ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007;
static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;

/* ---- Runtime error numbers ------------------------------------------------ */

#define ACL_RT_SUCCESS 0

/* 107xxx: runtime parameters. */
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002 /* no aclrtSetDevice / aclrtSetCurrentContext */
#define ACL_ERROR_RT_STREAM_CONTEXT 107003
#define ACL_ERROR_RT_MODEL_CONTEXT 107004
#define ACL_ERROR_RT_STREAM_MODEL 107005
#define ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID 107006
#define ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL 107007
#define ACL_ERROR_RT_ADDR_UNALIGNED 107008
#define ACL_ERROR_RT_FILE_OPEN 107009
#define ACL_ERROR_RT_FILE_WRITE 107010
#define ACL_ERROR_RT_STREAM_SUBSCRIBE 107011
#define ACL_ERROR_RT_THREAD_SUBSCRIBE 107012
#define ACL_ERROR_RT_GROUP_NOT_SET 107013
#define ACL_ERROR_RT_GROUP_NOT_CREATE 107014
#define ACL_ERROR_RT_STREAM_NO_CB_REG 107015
#define ACL_ERROR_RT_INVALID_MEMORY_TYPE 107016
#define ACL_ERROR_RT_INVALID_HANDLE 107017
#define ACL_ERROR_RT_INVALID_MALLOC_TYPE 107018
#define ACL_ERROR_RT_WAIT_TIMEOUT 107019
#define ACL_ERROR_RT_TASK_TIMEOUT 107020
#define ACL_ERROR_RT_DEVICE_TASK_ABORT 107022
#define ACL_ERROR_RT_STREAM_ABORT 107023

/* 207xxx: runtime resources. */
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001 /* out of device memory */
#define ACL_ERROR_RT_MEMORY_FREE 207002
#define ACL_ERROR_RT_AICORE_OVER_FLOW 207003
#define ACL_ERROR_RT_NO_DEVICE 207004
#define ACL_ERROR_RT_RESOURCE_ALLOC_FAIL 207005
#define ACL_ERROR_RT_NO_PERMISSION 207006
#define ACL_ERROR_RT_NO_EVENT_RESOURCE 207007
#define ACL_ERROR_RT_NO_STREAM_RESOURCE 207008
#define ACL_ERROR_RT_NO_NOTIFY_RESOURCE 207009
#define ACL_ERROR_RT_NO_MODEL_RESOURCE 207010
#define ACL_ERROR_RT_NO_CDQ_RESOURCE 207011
#define ACL_ERROR_RT_OVER_LIMIT 207012
#define ACL_ERROR_RT_QUEUE_EMPTY 207013
#define ACL_ERROR_RT_QUEUE_FULL 207014
#define ACL_ERROR_RT_REPEATED_INIT 207015
#define ACL_ERROR_RT_AIVEC_OVER_FLOW 207016
#define ACL_ERROR_RT_OVER_FLOW 207017
#define ACL_ERROR_RT_DEVICE_OOM 207018
#define ACL_ERROR_RT_TIMEOUT 207020
#define ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED 207021

/* 507xxx: execution. */
#define ACL_ERROR_RT_INTERNAL_ERROR 507000
#define ACL_ERROR_RT_TS_ERROR 507001
#define ACL_ERROR_RT_STREAM_TASK_FULL 507002
#define ACL_ERROR_RT_STREAM_TASK_EMPTY 507003
#define ACL_ERROR_RT_STREAM_NOT_COMPLETE 507004
#define ACL_ERROR_RT_END_OF_SEQUENCE 507005
#define ACL_ERROR_RT_EVENT_NOT_COMPLETE 507006
#define ACL_ERROR_RT_CONTEXT_RELEASE_ERROR 507007
#define ACL_ERROR_RT_SOC_VERSION 507008
#define ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT 507009
#define ACL_ERROR_RT_LOST_HEARTBEAT 507010
#define ACL_ERROR_RT_MODEL_EXECUTE 507011
#define ACL_ERROR_RT_REPORT_TIMEOUT 507012
#define ACL_ERROR_RT_SYS_DMA 507013
#define ACL_ERROR_RT_AICORE_TIMEOUT 507014
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
#define ACL_ERROR_RT_AICORE_TRAP_EXCEPTION 507016
#define ACL_ERROR_RT_AICPU_TIMEOUT 507017
#define ACL_ERROR_RT_AICPU_EXCEPTION 507018
#define ACL_ERROR_RT_IPC_ERROR 507022
#define ACL_ERROR_RT_DEV_SETUP_ERROR 507033
#define ACL_ERROR_RT_VECTOR_CORE_TIMEOUT 507034
#define ACL_ERROR_RT_VECTOR_CORE_EXCEPTION 507035
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT 507047
#define ACL_ERROR_RT_FFTS_PLUS_TIMEOUT 507048
#define ACL_ERROR_RT_FFTS_PLUS_EXCEPTION 507049
#define ACL_ERROR_RT_SEND_MSG 507051
#define ACL_ERROR_RT_COPY_DATA 507052
#define ACL_ERROR_RT_DEVICE_MEM_ERROR 507053
#define ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR 507054
#define ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR 507055
#define ACL_ERROR_RT_LINK_ERROR 507056
#define ACL_ERROR_RT_SUSPECT_REMOTE_ERROR 507057
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR 507899
#define ACL_ERROR_RT_AICPU_INTERNAL_ERROR 507900
#define ACL_ERROR_RT_SOCKET_CLOSE 507901
#define ACL_ERROR_RT_COMM_OP_RETRY_FAIL 507904
#define ACL_ERROR_RT_CCU_TIMEOUT 507915
#define ACL_ERROR_RT_CCU_EXCEPTION 507916

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_BASE_H_ */
