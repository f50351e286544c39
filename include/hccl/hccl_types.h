/*
 * Cohort's HCCL-compatible C API: result codes, handles, data types, reduction
 * operations, the root info and the communicator configuration, with HCCL's
 * names and numeric values (programs written for HCCL compile unchanged).
 *
 * Usable from C and C++. In C++ the constants are `const uint32_t` objects as in
 * HCCL's header; in C they are macros with the same names and values.
 */
#ifndef COHORT_HCCL_HCCL_TYPES_H_
#define COHORT_HCCL_HCCL_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ the enums have int as their underlying type, as they have in C: any int
 * a caller passes is a value the library can check (and refuse), never undefined
 * behaviour. */
#ifdef __cplusplus
#define HCCL_ENUM_BASE : int
#else
#define HCCL_ENUM_BASE
#endif

/* What every HCCL function returns. HcclGetErrorString gives the text of each. */
typedef enum HCCL_ENUM_BASE {
  HCCL_SUCCESS = 0,              /* no error */
  HCCL_E_PARA = 1,               /* parameter error */
  HCCL_E_PTR = 2,                /* empty pointer */
  HCCL_E_MEMORY = 3,             /* memory error */
  HCCL_E_INTERNAL = 4,           /* internal error */
  HCCL_E_NOT_SUPPORT = 5,        /* not support feature */
  HCCL_E_NOT_FOUND = 6,          /* not found specific resource */
  HCCL_E_UNAVAIL = 7,            /* resource unavailable */
  HCCL_E_SYSCALL = 8,            /* call system interface error */
  HCCL_E_TIMEOUT = 9,            /* timeout */
  HCCL_E_OPEN_FILE_FAILURE = 10, /* open file fail */
  HCCL_E_TCP_CONNECT = 11,       /* tcp connect fail */
  HCCL_E_ROCE_CONNECT = 12,      /* roce connect fail */
  HCCL_E_TCP_TRANSFER = 13,      /* tcp transfer fail */
  HCCL_E_ROCE_TRANSFER = 14,     /* roce transfer fail */
  HCCL_E_RUNTIME = 15,           /* call runtime api fail */
  HCCL_E_DRV = 16,               /* call driver api fail */
  HCCL_E_PROFILING = 17,         /* call profiling api fail */
  HCCL_E_CCE = 18,               /* call cce api fail */
  HCCL_E_NETWORK = 19,           /* call network api fail */
  HCCL_E_AGAIN = 20,             /* try again */
  HCCL_E_REMOTE = 21,            /* error cqe (a peer failed) */
  HCCL_E_SUSPENDING = 22,        /* error communicator suspending */
  HCCL_E_OPRETRY_FAIL = 23,      /* retry constraint */
  HCCL_E_OOM = 24,               /* out of memory */
  HCCL_E_IN_STATUS = 1041,       /* the error information is in the status */
  HCCL_E_RESERVED                /* reserved */
} HcclResult;

/* A communicator (made by an HcclCommInit* call, released by HcclCommDestroy). */
typedef void* HcclComm;
typedef void* HcclConn;
typedef void* HcclCommSymWindow;

typedef enum HCCL_ENUM_BASE {
  HCCL_REDUCE_SUM = 0,
  HCCL_REDUCE_PROD = 1,
  HCCL_REDUCE_MAX = 2,
  HCCL_REDUCE_MIN = 3,
  HCCL_REDUCE_RESERVED = 255
} HcclReduceOp;

/* Element types. Cohort computes on INT8 ... BFP16; INT128, HIF8 and the FP8
 * types are accepted by the compiler and refused with HCCL_E_NOT_SUPPORT. */
typedef enum HCCL_ENUM_BASE {
  HCCL_DATA_TYPE_INT8 = 0,
  HCCL_DATA_TYPE_INT16 = 1,
  HCCL_DATA_TYPE_INT32 = 2,
  HCCL_DATA_TYPE_FP16 = 3,
  HCCL_DATA_TYPE_FP32 = 4,
  HCCL_DATA_TYPE_INT64 = 5,
  HCCL_DATA_TYPE_UINT64 = 6,
  HCCL_DATA_TYPE_UINT8 = 7,
  HCCL_DATA_TYPE_UINT16 = 8,
  HCCL_DATA_TYPE_UINT32 = 9,
  HCCL_DATA_TYPE_FP64 = 10,
  HCCL_DATA_TYPE_BFP16 = 11,
  HCCL_DATA_TYPE_INT128 = 12,
  HCCL_DATA_TYPE_HIF8 = 14,
  HCCL_DATA_TYPE_FP8E4M3 = 15,
  HCCL_DATA_TYPE_FP8E5M2 = 16,
  HCCL_DATA_TYPE_FP8E8M0 = 17,
  HCCL_DATA_TYPE_RESERVED = 255
} HcclDataType;

typedef enum HCCL_ENUM_BASE {
  HCCL_DETERMINISTIC = 0, /* 0: off, 1: deterministic, 2: strict (order-preserving) */
  HCCL_CONFIG_RESERVED
} HcclConfig;

union HcclConfigValue {
  int32_t value;
};
#ifndef __cplusplus
typedef union HcclConfigValue HcclConfigValue;
#endif

#ifdef __cplusplus
const uint32_t HCCL_ROOT_INFO_BYTES = 4108;
const uint32_t COMM_NAME_MAX_LENGTH = 128;
const uint32_t BUFFER_NAME_MAX_LENGTH = 128;
const uint32_t UDI_MAX_LENGTH = 128;
const uint32_t HCCL_COMM_ALGO_MAX_LENGTH = 1600;
const uint32_t HCCL_COMM_RETRY_ENABLE_MAX_LENGTH = 50;
const uint32_t HCCL_COMM_RETRY_PARAMS_MAX_LENGTH = 128;
const uint32_t HCCL_COMM_CONFIG_INFO_BYTES = 24;
const uint32_t HCCL_COMM_CONFIG_MAGIC_WORD = 0xf0f0f0f0;
const uint32_t HCCL_COMM_CONFIG_VERSION = 11;
const uint32_t HCCL_COMM_DEFAULT_BUFFSIZE = 200;
const uint32_t HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET = 0xffffffff;
const uint32_t HCCL_COMM_DEFAULT_DETERMINISTIC = 0;
const uint32_t HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET = 0xffffffff;
const uint32_t HCCL_COMM_DEFAULT_OP_EXPANSION_MODE = 0;
const uint32_t HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET = 0xffffffff;
const uint32_t HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET = 0xffffffff;
const int32_t HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET = (int32_t)0xffffffff;
const uint32_t HCCL_COMM_QOS_CONFIG_NOT_SET = 0xffffffff;
const uint32_t HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET = 0xffffffff;
const uint64_t HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE = 16ULL; /* GB of addresses per rank */
#else
#define HCCL_ROOT_INFO_BYTES ((uint32_t)4108)
#define COMM_NAME_MAX_LENGTH ((uint32_t)128)
#define BUFFER_NAME_MAX_LENGTH ((uint32_t)128)
#define UDI_MAX_LENGTH ((uint32_t)128)
#define HCCL_COMM_ALGO_MAX_LENGTH ((uint32_t)1600)
#define HCCL_COMM_RETRY_ENABLE_MAX_LENGTH ((uint32_t)50)
#define HCCL_COMM_RETRY_PARAMS_MAX_LENGTH ((uint32_t)128)
#define HCCL_COMM_CONFIG_INFO_BYTES ((uint32_t)24)
#define HCCL_COMM_CONFIG_MAGIC_WORD ((uint32_t)0xf0f0f0f0)
#define HCCL_COMM_CONFIG_VERSION ((uint32_t)11)
#define HCCL_COMM_DEFAULT_BUFFSIZE ((uint32_t)200)
#define HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET ((uint32_t)0xffffffff)
#define HCCL_COMM_DEFAULT_DETERMINISTIC ((uint32_t)0)
#define HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET ((uint32_t)0xffffffff)
#define HCCL_COMM_DEFAULT_OP_EXPANSION_MODE ((uint32_t)0)
#define HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET ((uint32_t)0xffffffff)
#define HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET ((uint32_t)0xffffffff)
#define HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET ((int32_t)0xffffffff)
#define HCCL_COMM_QOS_CONFIG_NOT_SET ((uint32_t)0xffffffff)
#define HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET ((uint32_t)0xffffffff)
#define HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE ((uint64_t)16)
#endif

/* Made by HcclGetRootInfo on one rank and passed to every rank out of band
 * (MPI_Bcast, a file, ...). Opaque: where the root's store listens, the job's
 * token and the protocol version. */
typedef struct HcclRootInfoDef {
  char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

/* Per-communicator settings; initialise with HcclCommConfigInit (hccl_comm.h),
 * then set the fields wanted. A field left at its NOT_SET value falls back to
 * the environment variable (HCCL_BUFFSIZE, HCCL_DETERMINISTIC, HCCL_ALGO, ...).
 * The first HCCL_COMM_CONFIG_INFO_BYTES bytes are a header (size, magic word,
 * version): the library reads only the fields inside the size the program was
 * compiled with. */
typedef struct HcclCommConfigDef {
  char reserved[HCCL_COMM_CONFIG_INFO_BYTES];
  uint32_t hcclBufferSize;    /* MB, >= 1 */
  uint32_t hcclDeterministic; /* 0, 1 or 2 */
  char hcclCommName[COMM_NAME_MAX_LENGTH];
  char hcclUdi[UDI_MAX_LENGTH];
  uint32_t hcclOpExpansionMode;
  uint32_t hcclRdmaTrafficClass; /* [0, 255], a multiple of 4 */
  uint32_t hcclRdmaServiceLevel; /* [0, 7] */
  uint32_t hcclWorldRankID;
  uint64_t hcclJobID;
  uint8_t aclGraphZeroCopyEnable;
  int32_t hcclExecTimeOut; /* seconds */
  char hcclAlgo[HCCL_COMM_ALGO_MAX_LENGTH];
  char hcclRetryEnable[HCCL_COMM_RETRY_ENABLE_MAX_LENGTH];
  char hcclRetryParams[HCCL_COMM_RETRY_PARAMS_MAX_LENGTH];
  char hcclBufferName[BUFFER_NAME_MAX_LENGTH];
  uint32_t hcclQos; /* [0, 7] */
  uint64_t hcclSymWinMaxMemSizePerRank; /* GB of addresses per rank for symmetric windows */
  uint32_t hcclChannelSqDepth;          /* accepted; Cohort has no device submission queue */
} HcclCommConfig;

/* When the callbacks of HcclCommRegCommStateCallback run: around HcclCommDestroy and
 * HcclCommResume. */
typedef enum HCCL_ENUM_BASE {
  HCCL_COMM_STATE_PHASE_INVALID = -1,
  HCCL_COMM_STATE_PHASE_DESTROY_PRE = 0,
  HCCL_COMM_STATE_PHASE_DESTROY_POST = 1,
  HCCL_COMM_STATE_PHASE_RESUME_PRE = 2,
  HCCL_COMM_STATE_PHASE_RESUME_POST = 3
} HcclCommStatePhase;

typedef enum HCCL_ENUM_BASE {
  HCCL_COMM_CONFIG_BUFFER_SIZE = 0,
  HCCL_COMM_CONFIG_DETERMINISTIC = 1,
  HCCL_COMM_CONFIG_COMM_NAME = 2,
  HCCL_COMM_CONFIG_OP_EXPANSION_MODE = 3,
  HCCL_COMM_CONFIG_SUPPORT_INIT_BY_ENV = 4,
  HCCL_COMM_CONFIG_WORLD_RANKID = 5,
  HCCL_COMM_CONFIG_JOBID = 6,
  HCCL_COMM_CONFIG_ACLGRAPH_ZEROCOPY_ENABLE = 7,
  HCCL_COMM_CONFIG_EXEC_TIMEOUT = 8,
  HCCL_COMM_CONFIG_ALGO = 9,
  HCCL_COMM_CONFIG_RETRY = 10,
  HCCL_COMM_CONFIG_BUFFER_NAME = 11,
  HCCL_COMM_CONFIG_RESERVED
} HcclCommConfigCapability;

typedef enum HCCL_ENUM_BASE {
  HCCL_SEND = 0,
  HCCL_RECV = 1,
  HCCL_SEND_RECV_RESERVED
} HcclSendRecvType;

/* One transfer of HcclBatchSendRecv. */
typedef struct HcclSendRecvItemDef {
  HcclSendRecvType sendRecvType;
  void* buf;
  uint64_t count;
  HcclDataType dataType;
  uint32_t remoteRank;
} HcclSendRecvItem;

typedef enum HCCL_ENUM_BASE {
  HCCL_CMD_INVALID = 0,
  HCCL_CMD_BROADCAST = 1,
  HCCL_CMD_ALLREDUCE,
  HCCL_CMD_REDUCE,
  HCCL_CMD_SEND,
  HCCL_CMD_RECEIVE,
  HCCL_CMD_ALLGATHER,
  HCCL_CMD_REDUCE_SCATTER,
  HCCL_CMD_ALLTOALLV,
  HCCL_CMD_ALLTOALLVC,
  HCCL_CMD_ALLTOALL,
  HCCL_CMD_GATHER,
  HCCL_CMD_SCATTER,
  HCCL_CMD_BATCH_SEND_RECV,
  HCCL_CMD_BATCH_PUT,
  HCCL_CMD_BATCH_GET,
  HCCL_CMD_ALLGATHER_V,
  HCCL_CMD_REDUCE_SCATTER_V,
  HCCL_CMD_BATCH_WRITE,
  HCCL_CMD_HALF_ALLTOALLV = 20,
  HCCL_CMD_ALL,
  HCCL_CMD_FINALIZE = 100,
  HCCL_CMD_INTER_GROUP_SYNC,
  HCCL_CMD_INIT,
  HCCL_CMD_BARRIER,
  HCCL_CMD_MAX
} HcclCMDType;

typedef enum HCCL_ENUM_BASE {
  HCCL_COMM_STATUS_READY = 0,
  HCCL_COMM_STATUS_SUSPENDING = 1,
  HCCL_COMM_STATUS_INVALID = 254,
  HCCL_COMM_STATUS_RESERVED = 255
} HcclCommStatus;

#ifdef __cplusplus
}
#endif

#endif /* COHORT_HCCL_HCCL_TYPES_H_ */
