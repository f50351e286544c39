/*
 * Cohort's ACL-compatible C API: the runtime's base facilities (CANN's
 * acl_base_rt.h): the SoC name, data types and their sizes, fp16 conversions,
 * data buffers, CANN attributes, device capabilities, application logs, and the
 * graph engine's error numbers. Included by acl/acl_base.h.
 *
 * Every function of this header works before aclInit, as CANN's do: they describe
 * the installation or convert values, and touch no device.
 */
#ifndef COHORT_ACL_ACL_BASE_RT_H_
#define COHORT_ACL_ACL_BASE_RT_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a declaration the compiler warns about when a program uses it. */
#ifndef ACL_DEPRECATED
#if defined(__GNUC__) && (__GNUC__ >= 6)
#define ACL_DEPRECATED __attribute__((deprecated))
#define ACL_DEPRECATED_MESSAGE(message) __attribute__((deprecated(message)))
#else
#define ACL_DEPRECATED
#define ACL_DEPRECATED_MESSAGE(message)
#endif
#endif

/* ---- Handles ------------------------------------------------------------------ */

typedef void* aclmdlRITask;   /* a task of a captured model runtime instance */
typedef void* aclrtCntNotify; /* a counting notify */
typedef void* aclrtLabel;     /* a jump target in a stream */
typedef void* aclrtLabelList;
typedef void* aclrtMbuf;    /* a shared buffer of the data queues */
typedef void* aclrtTaskGrp; /* a group of tasks recorded on a stream */
/* The bits of an IEEE 754 binary16 value: only for passing data around, convert it
 * with aclFloat16ToFloat to compute with it. */
typedef uint16_t aclFloat16;
/* A described piece of memory: an address and a size (aclCreateDataBuffer). */
typedef struct aclDataBuffer aclDataBuffer;
/* An external allocator a program registers on a stream (acl_rt_allocator.h). */
typedef void* aclrtAllocatorDesc;
typedef void* aclrtAllocator;
typedef void* aclrtAllocatorBlock;
typedef void* aclrtAllocatorAddr;

/* ---- Graph-engine error numbers (CANN's ge_error_codes.h) ------------------------- */

#ifndef GE_FUNC_VISIBILITY
#if defined(__GNUC__)
#define GE_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define GE_FUNC_VISIBILITY
#endif
#endif

/* Cohort has no graph engine: no call returns these; they exist for programs that
 * compare against them. */
static const uint32_t ACL_ERROR_GE_PARAM_INVALID = 145000U;
static const uint32_t ACL_ERROR_GE_EXEC_NOT_INIT = 145001U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID = 145002U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_ID_INVALID = 145003U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID = 145006U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID = 145007U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID = 145008U;
static const uint32_t ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED = 145009U;
static const uint32_t ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID = 145011U;
static const uint32_t ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID = 145012U;
static const uint32_t ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID = 145013U;
static const uint32_t ACL_ERROR_GE_AIPP_BATCH_EMPTY = 145014U;
static const uint32_t ACL_ERROR_GE_AIPP_NOT_EXIST = 145015U;
static const uint32_t ACL_ERROR_GE_AIPP_MODE_INVALID = 145016U;
static const uint32_t ACL_ERROR_GE_OP_TASK_TYPE_INVALID = 145017U;
static const uint32_t ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID = 145018U;
static const uint32_t ACL_ERROR_GE_PLGMGR_PATH_INVALID = 145019U;
static const uint32_t ACL_ERROR_GE_FORMAT_INVALID = 145020U;
static const uint32_t ACL_ERROR_GE_SHAPE_INVALID = 145021U;
static const uint32_t ACL_ERROR_GE_DATATYPE_INVALID = 145022U;
static const uint32_t ACL_ERROR_GE_MEMORY_ALLOCATION = 245000U;
static const uint32_t ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001U;
static const uint32_t ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED = 245002U;
static const uint32_t ACL_ERROR_GE_SUBHEALTHY = 345102U;
static const uint32_t ACL_ERROR_GE_USER_RAISE_EXCEPTION = 345103U;
static const uint32_t ACL_ERROR_GE_DATA_NOT_ALIGNED = 345104U;
static const uint32_t ACL_ERROR_GE_INTERNAL_ERROR = 545000U;
static const uint32_t ACL_ERROR_GE_LOAD_MODEL = 545001U;
static const uint32_t ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED = 545002U;
static const uint32_t ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED = 545003U;
static const uint32_t ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED = 545004U;
static const uint32_t ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED = 545005U;
static const uint32_t ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA = 545006U;
static const uint32_t ACL_ERROR_GE_COMMAND_HANDLE = 545007U;
static const uint32_t ACL_ERROR_GE_GET_TENSOR_INFO = 545008U;
static const uint32_t ACL_ERROR_GE_UNLOAD_MODEL = 545009U;
static const uint32_t ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT = 545601U;
static const uint32_t ACL_ERROR_GE_REDEPLOYING = 545602U;

/* ---- Enumerations ------------------------------------------------------------- */

/* Element types. Numbered as CANN numbers them, which is not HcclDataType's order. */
typedef enum aclDataType ACL_ENUM_BASE {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0, /* fp32 */
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_STRING = 13,
  ACL_COMPLEX64 = 16,
  ACL_COMPLEX128 = 17,
  ACL_BF16 = 27,
  ACL_INT4 = 29,
  ACL_UINT1 = 30,
  ACL_COMPLEX32 = 33,
  ACL_HIFLOAT8 = 34,
  ACL_FLOAT8_E5M2 = 35,
  ACL_FLOAT8_E4M3FN = 36,
  ACL_FLOAT8_E8M0 = 37,
  ACL_FLOAT6_E3M2 = 38,
  ACL_FLOAT6_E2M3 = 39,
  ACL_FLOAT4_E2M1 = 40,
  ACL_FLOAT4_E1M2 = 41,
} aclDataType;

/* Tensor layouts. */
typedef enum aclFormat ACL_ENUM_BASE {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NC1HWC0 = 3,
  ACL_FORMAT_FRACTAL_Z = 4,
  ACL_FORMAT_NC1HWC0_C04 = 12,
  ACL_FORMAT_HWCN = 16,
  ACL_FORMAT_NDHWC = 27,
  ACL_FORMAT_FRACTAL_NZ = 29,
  ACL_FORMAT_NCDHW = 30,
  ACL_FORMAT_NDC1HWC0 = 32,
  ACL_FRACTAL_Z_3D = 33,
  ACL_FORMAT_NC = 35,
  ACL_FORMAT_NCL = 47,
  ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
  ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
  ACL_FORMAT_FRACTAL_NZ_C0_2 = 52,
  ACL_FORMAT_FRACTAL_NZ_C0_4 = 53,
  ACL_FORMAT_FRACTAL_NZ_C0_8 = 54,
} aclFormat;

/* aclAppLog's levels: Cohort's debug, info, warn and error. */
typedef enum aclLogLevel ACL_ENUM_BASE {
  ACL_DEBUG = 0,
  ACL_INFO = 1,
  ACL_WARNING = 2,
  ACL_ERROR = 3,
} aclLogLevel;

/* Where an operator's input or output lives. */
typedef enum aclMemType ACL_ENUM_BASE {
  ACL_MEMTYPE_DEVICE = 0,
  ACL_MEMTYPE_HOST = 1,
  ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT = 2, /* host memory whose values never recompile */
} aclMemType;

/* System parameters (aclrtSetSysParamOpt, aclrtCtxSetSysParamOpt). */
typedef enum aclSysParamOpt ACL_ENUM_BASE {
  ACL_OPT_DETERMINISTIC = 0, /* 0 off, 1 deterministic, 2 strongly consistent, 3 batch-consistent */
  ACL_OPT_ENABLE_DEBUG_KERNEL = 1,
  ACL_OPT_STRONG_CONSISTENCY ACL_DEPRECATED_MESSAGE(
      "ACL_OPT_STRONG_CONSISTENCY is deprecated: set ACL_OPT_DETERMINISTIC to 2") = 2,
  ACL_OPT_ENABLE_KERNEL_EARLY_START = 3,
} aclSysParamOpt;

/* Features of the installation (aclGetCannAttribute). */
typedef enum aclCannAttr ACL_ENUM_BASE {
  ACL_CANN_ATTR_UNDEFINED = -1,
  ACL_CANN_ATTR_INF_NAN = 0,     /* overflow gives inf/NaN (not saturation) */
  ACL_CANN_ATTR_BF16 = 1,        /* the bf16 data type */
  ACL_CANN_ATTR_JIT_COMPILE = 2, /* operators compiled at run time */
} aclCannAttr;

/* Hardware figures of a device (aclGetDeviceCapability). */
typedef enum aclDeviceInfo ACL_ENUM_BASE {
  ACL_DEVICE_INFO_UNDEFINED = -1,
  ACL_DEVICE_INFO_AI_CORE_NUM = 0,
  ACL_DEVICE_INFO_VECTOR_CORE_NUM = 1,
  ACL_DEVICE_INFO_L2_SIZE = 2, /* bytes */
} aclDeviceInfo;

/* ---- fp16 and data types ------------------------------------------------------ */

/* The value of an fp16 number, exactly (denormals included, -0 stays -0). As CANN's
 * does, it reads the all-ones exponent as an ordinary binade, not as inf/NaN:
 * +inf (0x7C00) is 65536.0, -inf (0xFC00) -65536.0, the NaN 0x7E00 98304.0. */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
/* The fp16 nearest to value, ties to even, denormal results included. As CANN's
 * does, it saturates: whatever would overflow, inf and NaN become +-65504
 * (0x7BFF, 0xFBFF), keeping the sign. */
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);
/* Bytes one element takes: 1 for the 8-bit types and for the sub-byte ones
 * (INT4, UINT1, FLOAT6_*, FLOAT4_*, stored one per byte), 2, 4, 8, or 16 for
 * COMPLEX128; 0 for ACL_STRING (no fixed size), ACL_DT_UNDEFINED and values that
 * are no aclDataType (with a warning in the log). */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

/* ---- Data buffers --------------------------------------------------------------- */

/* Describes `size` bytes at `data`; the memory stays the caller's. data may be NULL
 * only with size 0 (an empty buffer). NULL on a bad argument or without host
 * memory (aclGetRecentErrMsg tells which). */
ACL_FUNC_VISIBILITY aclDataBuffer* aclCreateDataBuffer(void* data, size_t size);
/* Destroys the description (never the memory it describes). */
ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer* dataBuffer);
/* Makes the buffer describe other memory; the old memory stays the caller's. */
ACL_FUNC_VISIBILITY aclError aclUpdateDataBuffer(aclDataBuffer* dataBuffer, void* data,
                                                 size_t size);
/* The address described; NULL for NULL or a destroyed buffer. */
ACL_FUNC_VISIBILITY void* aclGetDataBufferAddr(const aclDataBuffer* dataBuffer);
/* The size in 32 bits: UINT32_MAX (with a warning) when it does not fit. */
ACL_DEPRECATED_MESSAGE("aclGetDataBufferSize is deprecated, use aclGetDataBufferSizeV2 instead")
ACL_FUNC_VISIBILITY uint32_t aclGetDataBufferSize(const aclDataBuffer* dataBuffer);
/* The size described; 0 for NULL or a destroyed buffer. */
ACL_FUNC_VISIBILITY size_t aclGetDataBufferSizeV2(const aclDataBuffer* dataBuffer);

/* ---- Logs, SoC, attributes, capabilities ---------------------------------------- */

/* Writes a printf-formatted line into Cohort's log (subsystem "acl"; ACL_DEBUG..
 * ACL_ERROR are debug..error, other values error; COHORT_LOG_LEVEL and
 * ASCEND_GLOBAL_LOG_LEVEL filter them), naming func, file and line. The formatted
 * text is cut at 1024 bytes with a "...[truncated]" mark. Lines with a NULL func,
 * file or fmt are dropped. */
ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char* func, const char* file,
                                   uint32_t line, const char* fmt, ...);
#define ACL_APP_LOG(level, fmt, ...) \
  aclAppLog(level, __FUNCTION__, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

/* The name of the SoC the emulated devices stand for: COHORT_SOC_NAME, by default
 * "Ascend910B4" (what Cohort emulates: HCCS-style links within a node, RoCE
 * across). Never NULL; callable before aclInit. */
ACL_FUNC_VISIBILITY const char* aclrtGetSocName(void);

/* The features this installation supports: ACL_CANN_ATTR_INF_NAN (Cohort computes
 * in IEEE 754 arithmetic, so overflow gives inf/NaN) and ACL_CANN_ATTR_BF16 (bf16
 * data and reductions work); not ACL_CANN_ATTR_JIT_COMPILE, as Cohort has no
 * operator compiler. The list is static: the caller frees nothing. */
ACL_FUNC_VISIBILITY aclError aclGetCannAttributeList(const aclCannAttr** cannAttrList, size_t* num);
/* *value = 1 if the feature is supported, 0 if not; ACL_ERROR_INVALID_PARAM for a
 * value that is no aclCannAttr (ACL_CANN_ATTR_UNDEFINED included). */
ACL_FUNC_VISIBILITY aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t* value);
/* The emulated device's figures, those of an Ascend910B4 (as aclrtGetDeviceInfo
 * reports them, whatever COHORT_SOC_NAME says): 20 AI cores, 40 vector cores, 96 MiB
 * of L2; for every visible device (deviceId < aclrtGetDeviceCount,
 * ACL_ERROR_INVALID_PARAM beyond). */
ACL_FUNC_VISIBILITY aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo,
                                                    int64_t* value);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_BASE_RT_H_ */
