/*
 * Cohort's HCCL-compatible C API: communicator management.
 *
 * A communicator is made on every rank by one of the HcclCommInit* calls, on the
 * device the calling thread set with aclrtSetDevice, and released with
 * HcclCommDestroy. A handle used after HcclCommDestroy is refused (HCCL_E_PARA),
 * never dereferenced. Calls on one communicator must come from one thread at a
 * time; HcclCommDestroy while another thread is inside a call on the same
 * communicator returns HCCL_E_AGAIN.
 *
 * Errors: null pointers give HCCL_E_PTR, invalid values HCCL_E_PARA with an
 * "EI0003 ... Failed to verify parameters of operator ..." message in the log
 * (and in Cohort's lastError()); HcclGetErrorString names every result.
 */
#ifndef COHORT_HCCL_HCCL_COMM_H_
#define COHORT_HCCL_HCCL_COMM_H_

#include <stdbool.h>

#include "acl/acl.h"
#include "hccl/hccl_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HCCL_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define HCCL_FUNC_VISIBILITY
#endif

#ifdef __cplusplus
#define HCCL_INLINE inline
#else
#define HCCL_INLINE static inline
#endif

/* Joins the communicator described by a rank table (HCCL's JSON "1.0"/"1.2" or a
 * Cohort YAML cluster file; path at most 4095 bytes) as rank `rank`, which must
 * be a rank_id of the table whose device_id is the physical id of the device the
 * calling thread set. Every rank of the table calls it; a process may make
 * several communicators from one table, every rank in the same order.
 *
 * Rendezvous: under cohortrun, in the job's store; otherwise the table's rank 0
 * serves a store at its host_ip (else its device_ip), on its host_port when the
 * table gives one, else on HCCL_IF_BASE_PORT (60000). The job token is
 * COHORT_JOB_TOKEN when set, else a hash of the table. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank,
                                                        HcclComm* comm);
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo,
                                                              uint32_t rank, HcclCommConfig* config,
                                                              HcclComm* comm);

/* A sub-communicator of the global communicator *comm: the ranks rankIds[0..rankNum)
 * (ascending; the index of a rank is its rank in the sub-communicator, which must
 * equal subCommRankId). Only the listed ranks take part, each with the same list;
 * a rank that joins none may call it with rankIds = NULL and subCommId =
 * 0xFFFFFFFF and gets *subComm = NULL. config may be NULL. */
HCCL_FUNC_VISIBILITY HcclResult HcclCreateSubCommConfig(HcclComm* comm, uint32_t rankNum,
                                                        uint32_t* rankIds, uint64_t subCommId,
                                                        uint32_t subCommRankId,
                                                        HcclCommConfig* config, HcclComm* subComm);

/* On one rank (the root): a fresh root info, whose store this process serves
 * until it exits (on HCCL_IF_IP / HCCL_SOCKET_IFNAME's interface). */
HCCL_FUNC_VISIBILITY HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo);
/* On every rank, with the same nRanks and root info: joins as `rank`. A root
 * info makes one communicator: using it again on the same rank is refused. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo,
                                                     uint32_t rank, HcclComm* comm);
/* With a config (made by HcclCommConfigInit): every field is checked against
 * HCCL's ranges (HCCL_E_PARA); hcclCommName names the communicator and hcclAlgo
 * (HCCL_ALGO's syntax) chooses its algorithms. The buffer size, determinism,
 * RDMA class/level, QoS and execution timeout come from the environment for
 * every communicator alike. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks,
                                                           const HcclRootInfo* rootInfo,
                                                           uint32_t rank,
                                                           const HcclCommConfig* config,
                                                           HcclComm* comm);

/* ndev communicators of this process, comms[i] being rank i on devices[i]
 * (distinct logical device ids). */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms);

/* Waits for the communicator's pending operations, then releases it. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommDestroy(HcclComm comm);

/* Aborts the communicator's operations in flight (they fail here and on every
 * peer, which name this rank as aborted) and releases it without waiting for
 * anyone, as ncclCommAbort does. Any thread may call it. HCCL_E_AGAIN if another
 * thread is inside a call on it: the communicator is aborted all the same, and
 * a later HcclCommDestroy or HcclCommAbort releases it. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommAbort(HcclComm comm);

/* The name (hcclCommName of its config, else one Cohort made); commName must hold
 * COMM_NAME_MAX_LENGTH bytes. */
HCCL_FUNC_VISIBILITY HcclResult HcclGetCommName(HcclComm comm, char* commName);
HCCL_FUNC_VISIBILITY HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize);
HCCL_FUNC_VISIBILITY HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank);

/* Every rank's stream waits until every rank issued the barrier. */
HCCL_FUNC_VISIBILITY HcclResult HcclBarrier(HcclComm comm, aclrtStream stream);

/* *asyncError = the first asynchronous failure of the communicator's operations
 * (HCCL_SUCCESS if none; HCCL_E_REMOTE when a peer failed). */
HCCL_FUNC_VISIBILITY HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError);

/* "no error", "parameter error", ...; "unknown error" for other values. */
HCCL_FUNC_VISIBILITY const char* HcclGetErrorString(HcclResult code);

/* Between HcclGroupStart and HcclGroupEnd, the calling thread's operations are
 * collected and launched together at HcclGroupEnd (sends and receives progress
 * jointly, so their order cannot deadlock). Groups nest. */
HCCL_FUNC_VISIBILITY HcclResult HcclGroupStart(void);
HCCL_FUNC_VISIBILITY HcclResult HcclGroupEnd(void);

/* Sets the header (size, magic word, version) and every field to "not set". */
HCCL_INLINE void HcclCommConfigInit(HcclCommConfig* config) {
  typedef struct {
    size_t size;
    uint32_t magicWord;
    uint32_t version;
    uint64_t reserved;
  } HcclCommConfigHeader;
  HcclCommConfigHeader* header;
  if (config == NULL) return;
  header = (HcclCommConfigHeader*)(void*)config;
  header->size = sizeof(HcclCommConfig);
  header->magicWord = HCCL_COMM_CONFIG_MAGIC_WORD;
  header->version = HCCL_COMM_CONFIG_VERSION;
  header->reserved = 0;
  config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
  config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
  config->hcclCommName[0] = '\0';
  config->hcclUdi[0] = '\0';
  config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
  config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
  config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
  config->hcclWorldRankID = 0;
  config->hcclJobID = 0;
  config->aclGraphZeroCopyEnable = 0;
  config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
  config->hcclAlgo[0] = '\0';
  config->hcclRetryEnable[0] = '\0';
  config->hcclRetryParams[0] = '\0';
  config->hcclBufferName[0] = '\0';
  config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
  config->hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
  config->hcclChannelSqDepth = HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET;
}

/* ---- Configuration ---------------------------------------------------------- */

/* HCCL_DETERMINISTIC: 0 (off), 1 (deterministic) or 2 (strict, order-preserving),
 * for the process; starts from HCCL_DETERMINISTIC. Cohort's reductions add in a
 * fixed order on every path, so every value holds. */
HCCL_FUNC_VISIBILITY HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue);
HCCL_FUNC_VISIBILITY HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue* configValue);
/* A number above every HcclCommConfigCapability value the library honours. */
HCCL_FUNC_VISIBILITY uint32_t HcclGetCommConfigCapability(void);

/* How a communicator's operations are expanded into tasks. Cohort's run on the host
 * (HCCL_OP_EXPANSION_MODE_HOST). */
typedef enum HCCL_ENUM_BASE {
  HCCL_OP_EXPANSION_MODE_INVALID = -1,
  HCCL_OP_EXPANSION_MODE_AI_CPU = 0,
  HCCL_OP_EXPANSION_MODE_AIV = 1,
  HCCL_OP_EXPANSION_MODE_HOST = 2,
  HCCL_OP_EXPANSION_MODE_HOST_TS = 3,
  HCCL_OP_EXPANSION_MODE_CCU_MS = 4,
  HCCL_OP_EXPANSION_MODE_CCU_SCHED = 5,
  HCCL_OP_EXPANSION_AIV_ONLY = 6
} HcclOpExpansionMode;
typedef HcclOpExpansionMode HcclConfigTypeOpExpansionMode;

typedef enum HCCL_ENUM_BASE {
  HCCL_CONFIG_TYPE_INVALID = -1,
  HCCL_CONFIG_TYPE_OP_EXPANSION_MODE = 0, /* info: an HcclConfigTypeOpExpansionMode */
  HCCL_CONFIG_TYPE_HCCL_ALGO = 1          /* info: HCCL_COMM_ALGO_MAX_LENGTH chars or more */
} HcclConfigType;

/* One setting of `comm`: infoLen is sizeof the type for the expansion mode, at least
 * HCCL_COMM_ALGO_MAX_LENGTH for the algorithm string (HCCL_ALGO syntax, "" when the
 * built-in choice applies). */
HCCL_FUNC_VISIBILITY HcclResult HcclConfigGetInfo(HcclComm comm, HcclConfigType cfgType,
                                                  uint32_t infoLen, void* info);

/* ---- State ------------------------------------------------------------------ */

/* Suspend: operations on the communicator fail with HCCL_E_SUSPENDING until Resume;
 * its status (by name) reads HCCL_COMM_STATUS_SUSPENDING meanwhile. Not concurrent
 * with operations on it. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommSuspend(HcclComm comm);
HCCL_FUNC_VISIBILITY HcclResult HcclCommResume(HcclComm comm);
/* The status of the live communicator named commId (HcclGetCommName). */
HCCL_FUNC_VISIBILITY HcclResult HcclCommGetStatus(const char* commId, HcclCommStatus* status);
/* The handle of the live communicator of this process named commName. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommGetHandleWithName(const char* commName, HcclComm* comm);
typedef HcclResult (*HcclCommStateCallback)(HcclComm comm, HcclCommStatePhase state, void* args);
/* cb(comm, phase, args) runs before and after every HcclCommDestroy and HcclCommResume
 * of the process; regName (at most 160 bytes) names the registration, and a second
 * one with the same name replaces it. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommRegCommStateCallback(const char* regName,
                                                             HcclCommStateCallback cb,
                                                             void* args);
/* Whether the calling thread is between HcclGroupStart and HcclGroupEnd. */
HCCL_FUNC_VISIBILITY HcclResult HcclGroupStatusGet(bool* isGroupEnabled);
/* Moves ranks' traffic to their backup NICs: HCCL_E_NOT_SUPPORT (Cohort's devices
 * have one link address each). */
HCCL_FUNC_VISIBILITY HcclResult HcclCommWorkingDevNicSet(HcclComm comm, uint32_t* ranks,
                                                         bool* useBackup, uint32_t nRanks);

/* ---- Memory: zero copy and symmetric windows -------------------------------- */

#define HCOMM_WEAK_SYMBOL __attribute__((weak))

/* Tells the process's communicators about addresses reserved with
 * aclrtReserveMemAddress (alignment and flags 0); ranges may not overlap. Memory
 * mapped there and activated may be passed to operations directly. Cohort's
 * operations accept any device memory; these calls check and record the ranges. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommSetMemoryRange(HcclComm comm, void* baseVirPtr,
                                                       size_t size, size_t alignment,
                                                       uint64_t flags);
/* Only a range without activated memory. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void* baseVirPtr);
/* [virPtr, virPtr + size) lies in a set range and is mapped (aclrtMapMem) to device
 * memory of the communicator's device; offset and flags 0. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommActivateCommMemory(HcclComm comm, void* virPtr,
                                                           size_t size, size_t offset,
                                                           aclrtDrvMemHandle handle,
                                                           uint64_t flags);
HCCL_FUNC_VISIBILITY HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void* virPtr);
/* A symmetric window: the same-sized buffer registered by every rank (flag 0). Get
 * finds the window holding [ptr, ptr + size) and ptr's offset in it. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommSymWinRegister(HcclComm comm, void* addr, uint64_t size,
                                                       HcclCommSymWindow* winHandle,
                                                       uint32_t flag);
HCCL_FUNC_VISIBILITY HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle);
HCCL_FUNC_VISIBILITY HcclResult HcclCommSymWinGet(HcclComm comm, void* ptr, size_t size,
                                                  HcclCommSymWindow* winHandle, size_t* offset);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_HCCL_HCCL_COMM_H_ */
