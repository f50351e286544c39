/*
 * Cohort's ACL-compatible C API: the types of acl/acl_rt.h's device, context,
 * configuration and error families (declared in CANN's acl_rt.h; included by
 * acl/acl_rt.h, never on its own).
 */
#ifndef COHORT_ACL_ACL_RT_TYPES_H_
#define COHORT_ACL_ACL_RT_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aclrtSetTsDevice: the task scheduler to use. Cohort has one scheduler (each
 * stream's worker thread), so both values select it. */
typedef enum aclrtTsId ACL_ENUM_BASE {
  ACL_TS_ID_AICORE = 0,
  ACL_TS_ID_AIVECTOR = 1,
  ACL_TS_ID_RESERVED = 2,
} aclrtTsId;

/* aclrtGetDeviceUtilizationRate: percentages, -1 where nothing can be measured. */
typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;
typedef struct aclrtUtilizationInfo {
  int32_t cubeUtilization;
  int32_t vectorUtilization;
  int32_t aicpuUtilization;
  int32_t memoryUtilization;
  aclrtUtilizationExtendInfo* utilizationExtend; /* reserved: NULL */
} aclrtUtilizationInfo;

typedef enum aclrtDeviceStatus ACL_ENUM_BASE {
  ACL_RT_DEVICE_STATUS_NORMAL = 0,
  ACL_RT_DEVICE_STATUS_ABNORMAL = 1,
  ACL_RT_DEVICE_STATUS_END = 0xFFFF,
} aclrtDeviceStatus;

/* aclrtGetDeviceInfo attributes. The values are those of the SoC Cohort's devices
 * stand for (Ascend910B4); the SIMT ones are 0, as on that SoC. */
typedef enum aclrtDevAttr ACL_ENUM_BASE {
  ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
  ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
  ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
  ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,
  ACL_DEV_ATTR_WARP_SIZE = 202,
  ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE = 203,
  ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE ACL_DEPRECATED_MESSAGE(
      "use ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE") = 204,
  ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE = 204,
  ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
  ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
  ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
  ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
  ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
  ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,
  ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301, /* the device's memory (COHORT_DEVICE_MEMORY) */
  ACL_DEV_ATTR_L2_CACHE_SIZE = 302,
  ACL_DEV_ATTR_SMP_ID = 401,
  ACL_DEV_ATTR_PHY_CHIP_ID = 402,
  ACL_DEV_ATTR_SUPER_POD_DEVIDE_ID = 403, /* old spelling of SUPER_POD_DEVICE_ID */
  ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403,
  ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404,
  ACL_DEV_ATTR_SUPER_POD_ID = 405,
  ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406,
  ACL_DEV_ATTR_MAINBOARD_ID = 407,
  ACL_DEV_ATTR_HD_CONNECT_TYPE = 408,
  ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409,
  ACL_DEV_ATTR_IS_VIRTUAL = 501,
  ACL_DEV_ATTR_NPU_ARCH = 601,
} aclrtDevAttr;

/* Values of ACL_DEV_ATTR_DEVICE_FORM_FACTOR and ACL_DEV_ATTR_HD_CONNECT_TYPE. */
#define ACL_DEVICE_FORM_FACTOR_POD 0
#define ACL_DEVICE_FORM_FACTOR_A_K 1
#define ACL_DEVICE_FORM_FACTOR_A_X 2
#define ACL_DEVICE_FORM_FACTOR_PCIE_CARD 3
#define ACL_HOST_DEVICE_CONNECT_TYPE_PCIE 0
#define ACL_HOST_DEVICE_CONNECT_TYPE_HCCS 1
#define ACL_HOST_DEVICE_CONNECT_TYPE_UB 2

/* aclrtGetDeviceCapability: features, answered with the two values below. */
typedef enum aclrtDevFeatureType ACL_ENUM_BASE {
  ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV = 1,
  ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV = 21,
} aclrtDevFeatureType;
#define ACL_DEV_FEATURE_SUPPORT 0x00000001
#define ACL_DEV_FEATURE_NOT_SUPPORT 0x00000000

/* Device resource limits (aclrtSetDeviceResLimit and the stream-level ones). */
typedef enum aclrtDevResLimitType ACL_ENUM_BASE {
  ACL_RT_DEV_RES_CUBE_CORE = 0,
  ACL_RT_DEV_RES_VECTOR_CORE = 1,
} aclrtDevResLimitType;

/* aclrtDeviceSetLimit: kernel stack and printf buffer sizes. */
typedef enum aclrtDeviceLimit ACL_ENUM_BASE {
  ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE = 0,
  ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE = 1,
  ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE = 2,
  ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE = 3,
  ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE = 4,
} aclrtDeviceLimit;

/* aclrtGetDevicesTopo: how two devices are linked. */
#define ACL_RT_DEVS_TOPOLOGY_HCCS 0x01ULL
#define ACL_RT_DEVS_TOPOLOGY_PIX 0x02ULL
#define ACL_RT_DEVS_TOPOLOGY_PIB 0x04ULL
#define ACL_RT_DEVS_TOPOLOGY_PHB 0x08ULL
#define ACL_RT_DEVS_TOPOLOGY_SYS 0x10ULL
#define ACL_RT_DEVS_TOPOLOGY_SIO 0x20ULL
#define ACL_RT_DEVS_TOPOLOGY_HCCS_SW 0x40ULL

typedef enum aclrtDeviceTaskAbortStage ACL_ENUM_BASE {
  ACL_RT_DEVICE_TASK_ABORT_PRE = 0,
  ACL_RT_DEVICE_TASK_ABORT_POST = 1,
} aclrtDeviceTaskAbortStage;
/* Called before and after aclrtDeviceTaskAbort; timeout (ms) is how long it may take. */
typedef int32_t (*aclrtDeviceTaskAbortCallback)(int32_t deviceId, aclrtDeviceTaskAbortStage stage,
                                                uint32_t timeout, void* args);

/* aclrtRegDeviceStateCallback: called around aclrtSetDevice / aclrtResetDevice. */
typedef enum aclrtDeviceState ACL_ENUM_BASE {
  ACL_RT_DEVICE_STATE_SET_PRE = 0,
  ACL_RT_DEVICE_STATE_SET_POST = 1,
  ACL_RT_DEVICE_STATE_RESET_PRE = 2,
  ACL_RT_DEVICE_STATE_RESET_POST = 3,
} aclrtDeviceState;
typedef void (*aclrtDeviceStateCallback)(int32_t deviceId, aclrtDeviceState state, void* args);

typedef struct aclrtUuid {
  char bytes[16];
} aclrtUuid;

/* aclrtDeviceGet{P2P,Host}AtomicCapabilities: operations, and a bit mask each. */
typedef enum aclrtAtomicOperationCapability ACL_ENUM_BASE {
  ACL_RT_ATOMIC_CAPABILITY_SIGNED = 1 << 0,
  ACL_RT_ATOMIC_CAPABILITY_UNSIGNED = 1 << 1,
  ACL_RT_ATOMIC_CAPABILITY_REDUCATION = 1 << 2, /* old spelling of REDUCTION */
  ACL_RT_ATOMIC_CAPABILITY_REDUCTION = 1 << 2,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR8 = 1 << 3,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR16 = 1 << 4,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR32 = 1 << 5,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR64 = 1 << 6,
  ACL_RT_ATOMIC_CAPABILITY_SCALAR128 = 1 << 7,
  ACL_RT_ATOMIC_CAPABILITY_VECTOR32X4 = 1 << 8,
} aclrtAtomicOperationCapability;

typedef enum aclrtAtomicOperation ACL_ENUM_BASE {
  ACL_RT_ATOMIC_OPERATION_INTEGER_ADD = 0,
  ACL_RT_ATOMIC_OPERATION_INTEGER_MIN = 1,
  ACL_RT_ATOMIC_OPERATION_INTEGER_MAX = 2,
  ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT = 3,
  ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT = 4,
  ACL_RT_ATOMIC_OPERATION_AND = 5,
  ACL_RT_ATOMIC_OPERATION_OR = 6,
  ACL_RT_ATOMIC_OPERATION_XOR = 7,
  ACL_RT_ATOMIC_OPERATION_EXCHANGE = 8,
  ACL_RT_ATOMIC_OPERATION_CAS = 9,
  ACL_RT_ATOMIC_OPERATION_FLOAT_ADD = 10,
  ACL_RT_ATOMIC_OPERATION_FLOAT_MIN = 11,
  ACL_RT_ATOMIC_OPERATION_FLOAT_MAX = 12,
  ACL_RT_ATOMIC_OPERATION_DMA_ADD = 30,
  ACL_RT_ATOMIC_OPERATION_DMA_MIN = 31,
  ACL_RT_ATOMIC_OPERATION_DMA_MAX = 32,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD = 40,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN = 41,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX = 42,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS = 43,
  ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH = 44,
} aclrtAtomicOperation;

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_RT_TYPES_H_ */
