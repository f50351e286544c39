/*
 * Cohort's ACL-compatible C API: memory beyond aclrtMalloc and aclrtMemcpy
 * (declared in CANN's acl_rt.h; included by acl/acl_rt.h, never on its own).
 */
#ifndef COHORT_ACL_ACL_RT_MEMORY_H_
#define COHORT_ACL_ACL_RT_MEMORY_H_

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "acl/acl_base.h"
#include "acl/acl_rt_vmm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Memory beyond the basics: allocation variants, pointer queries --------- */
/* Emulated devices compute on host RAM: device memory, pinned host memory, registered
 * host memory and managed memory are all the same kind of memory to the CPU. What
 * that makes true is said at each function. */

/* Attributes of aclrtMallocWithCfg / aclrtMallocHostWithCfg / aclrtMallocForTaskScheduler. */
typedef enum aclrtMallocAttrType ACL_ENUM_BASE {
  ACL_RT_MEM_ATTR_RSV = 0,
  ACL_RT_MEM_ATTR_MODULE_ID = 1, /* who allocates (33: the application); recorded only */
  ACL_RT_MEM_ATTR_DEVICE_ID = 2, /* must be the current device */
  ACL_RT_MEM_ATTR_VA_FLAG = 3,   /* host memory: 0 or 1 (registered address == host address,
                                    which always holds here) */
} aclrtMallocAttrType;

typedef union aclrtMallocAttrValue {
  uint16_t moduleId;
  uint32_t deviceId;
  uint32_t vaFlag;
  uint8_t rsv[8];
} aclrtMallocAttrValue;

typedef struct aclrtMallocAttribute {
  aclrtMallocAttrType attr;
  aclrtMallocAttrValue value;
} aclrtMallocAttribute;

typedef struct aclrtMallocConfig {
  aclrtMallocAttribute* attrs;
  size_t numAttrs;
} aclrtMallocConfig;

/* Page types and memory types of CANN's attribute table (MemAttrMapping). */
enum aclrtMemPgType ACL_ENUM_BASE {
  NORMAL_PAGE_TYPE = 0,
  HUGE_PAGE_TYPE = 1,
  HUGE1G_PAGE_TYPE = 2,
};

enum aclrtMemType ACL_ENUM_BASE {
  HBM_TYPE = 0,
  DDR_TYPE = 1,
  P2P_HBM_TYPE = 2,
  P2P_DDR_TYPE = 3,
};

struct MemAttrMapping {
  uint32_t pgType;  /* an aclrtMemPgType */
  uint32_t memType; /* an aclrtMemType */
  bool isHostAlloc;
  aclrtMemAttr memAttr;
};

/* aclrtPointerGetAttributes: where memory is and its page size. */
typedef struct aclrtPtrAttributes {
  aclrtMemLocation location;
  uint32_t pageSize;
  uint32_t rsv[4];
} aclrtPtrAttributes;

/* aclrtGetMemUsageInfo: one entry per component. */
typedef struct aclrtMemUsageInfo {
  char name[32];
  uint64_t curMemSize;
  uint64_t memPeakSize;
  size_t reserved[8];
} aclrtMemUsageInfo;

/* Memory types of aclrtCheckMemType (bits). */
#define ACL_RT_MEM_TYPE_DEV (0X2U)
#define ACL_RT_MEM_TYPE_DVPP (0X8U)
#define ACL_RT_MEM_TYPE_RSVD (0X10U)

/* Like aclrtMalloc: device memory of the current device; the size is the bound that
 * copies check (it is not padded to 32 bytes). */
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void** devPtr, size_t size,
                                                aclrtMemMallocPolicy policy);
/* Like aclrtMalloc (CPU caches are coherent: no flush or invalidate is ever needed).
 * policy: HUGE_FIRST, HUGE_ONLY, NORMAL_ONLY or HUGE1G_ONLY (ACL_ERROR_INVALID_PARAM
 * otherwise). */
ACL_FUNC_VISIBILITY aclError aclrtMallocCached(void** devPtr, size_t size,
                                               aclrtMemMallocPolicy policy);
/* aclrtMalloc with a configuration (cfg may be NULL): MODULE_ID is recorded only,
 * DEVICE_ID must be the current device, VA_FLAG is for host memory. */
ACL_FUNC_VISIBILITY aclError aclrtMallocWithCfg(void** devPtr, size_t size,
                                                aclrtMemMallocPolicy policy,
                                                aclrtMallocConfig* cfg);
/* aclrtMallocHost with a configuration (cfg may be NULL; VA_FLAG 0 or 1). */
ACL_FUNC_VISIBILITY aclError aclrtMallocHostWithCfg(void** ptr, uint64_t size,
                                                    aclrtMallocConfig* cfg);
/* Device memory for the task scheduler: ordinary device memory here (aclrtFree). */
ACL_FUNC_VISIBILITY aclError aclrtMallocForTaskScheduler(void** devPtr, size_t size,
                                                         aclrtMemMallocPolicy policy,
                                                         aclrtMallocConfig* cfg);
/* Waits for every stream of the memory's device, then frees it like aclrtFree. */
ACL_FUNC_VISIBILITY aclError aclrtFreeWithDevSync(void* devPtr);
/* Waits for every stream of the current device (if any), then aclrtFreeHost. */
ACL_FUNC_VISIBILITY aclError aclrtFreeHostWithDevSync(void* hostPtr);
/* checkResult is 1 when every address of addrList is memory of a type in memType: DEV
 * (device memory of this process), RSVD (addresses reserved by aclrtReserveMemAddress
 * that are mapped); there is no DVPP memory here. reserve must be 0. */
ACL_FUNC_VISIBILITY aclError aclrtCheckMemType(void** addrList, uint32_t size, uint32_t memType,
                                               uint32_t* checkResult, uint32_t reserve);
/* location: DEVICE (id: the device; imported memory: the current device), HOST (pinned
 * or registered host memory), MANAGED, or UNREGISTERED (plain host memory); pageSize:
 * the system page size, which backs every kind of memory here. */
ACL_FUNC_VISIBILITY aclError aclrtPointerGetAttributes(const void* ptr,
                                                       aclrtPtrAttributes* attributes);
/* One component, "all users": every allocation of the device (the runtime does not
 * tell the program's memory from the collectives'), current and peak bytes. */
ACL_FUNC_VISIBILITY aclError aclrtGetMemUsageInfo(int32_t deviceId,
                                                  aclrtMemUsageInfo* memUsageInfo,
                                                  size_t inputNum, size_t* outputNum);
/* Cache maintenance of CPU-accessed memory: CPU caches are coherent, so flushing and
 * invalidating have nothing to do; the arguments are checked (size > 0). */
ACL_FUNC_VISIBILITY aclError aclrtMemFlush(void* devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtMemInvalidate(void* devPtr, size_t size);

/* ---- Managed (unified) memory ------------------------------------------------ */
/* Host and device memory are the same RAM here, so managed memory is host memory and
 * device memory of every device at once, at one address: nothing ever migrates, no
 * access faults, and a prefetch has nothing to move. Advice and prefetch locations
 * are recorded per 2 MiB granule and reported by aclrtMemManagedGetAttr(s). */

#define ACL_RT_MEM_ATTACH_GLOBAL 0x01U

typedef enum aclrtMemManagedAdviseType ACL_ENUM_BASE {
  ACL_MEM_ADVISE_SET_READ_MOSTLY = 0,
  ACL_MEM_ADVISE_UNSET_READ_MOSTLY = 1,
  ACL_MEM_ADVISE_SET_PREFERRED_LOCATION = 2,
  ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 3,
  ACL_MEM_ADVISE_SET_ACCESSED_BY = 4,
  ACL_MEM_ADVISE_UNSET_ACCESSED_BY = 5,
} aclrtMemManagedAdviseType;

typedef enum aclrtMemManagedLocationType ACL_ENUM_BASE {
  ACL_MEM_LOCATIONTYPE_INVALID = 0,
  ACL_MEM_LOCATIONTYPE_DEVICE = 1,
  ACL_MEM_LOCATIONTYPE_HOST = 2,
  ACL_MEM_LOCATIONTYPE_HOST_NUMA = 3,
  ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT = 4,
} aclrtMemManagedLocationType;

typedef struct aclrtMemManagedLocation {
  aclrtMemManagedLocationType type;
  int32_t id; /* a device, or a NUMA node */
} aclrtMemManagedLocation;

typedef enum aclrtMemManagedRangeAttribute ACL_ENUM_BASE {
  ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
  ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2,
  ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3,
  ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE = 4,
  ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID = 5,
  ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 6,
  ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7,
  ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID = 8,
} aclrtMemManagedRangeAttribute;

/* size > 0 bytes, rounded up to 2 MiB; flag ACL_RT_MEM_ATTACH_GLOBAL. Freed by aclrtFree;
 * usable by the host and as device memory of any device by every call. */
ACL_FUNC_VISIBILITY aclError aclrtMemAllocManaged(void** ptr, uint64_t size, uint32_t flag);
/* Records advice for [ptr, ptr + size) (size a multiple of 2 MiB, inside one managed
 * allocation). */
ACL_FUNC_VISIBILITY aclError aclrtMemManagedAdvise(const void* const ptr, uint64_t size,
                                                   aclrtMemManagedAdviseType advise,
                                                   aclrtMemManagedLocation location);
/* The recorded value for the range, as CANN encodes it (-1 host, -2 not the same over
 * the range, INVALID type ...). dataSize: 4, or a multiple of 4 for ACCESSED_BY. */
ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute,
                                                    const void* ptr, size_t size, void* data,
                                                    size_t dataSize);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute* attributes,
                                                     size_t numAttributes, const void* ptr,
                                                     size_t size, void** data,
                                                     size_t* dataSizes);
/* A stream task that completes in order (there is nothing to move); records the
 * location as the range's last prefetch location. flags must be 0. */
ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchAsync(const void* ptr, size_t size,
                                                          aclrtMemManagedLocation location,
                                                          uint32_t flags, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchBatchAsync(
    const void** ptrs, size_t* sizes, size_t count, aclrtMemManagedLocation* prefetchLocs,
    size_t* prefetchLocIdxs, size_t numPrefetchLocs, uint64_t flags, aclrtStream stream);

/* ---- Copies beyond aclrtMemcpy ----------------------------------------------- */

/* The attributes of a range of copies of aclrtMemcpyBatch*: where each side is. */
typedef struct aclrtMemcpyBatchAttr {
  aclrtMemLocation dstLoc;
  aclrtMemLocation srcLoc;
  uint8_t rsv[16];
} aclrtMemcpyBatchAttr;

/* height rows of width bytes, rows dpitch / spitch bytes apart (width <= both).
 * kind: ACL_MEMCPY_HOST_TO_DEVICE or ACL_MEMCPY_DEVICE_TO_HOST (ACL_ERROR_INVALID_PARAM
 * otherwise). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2d(void* dst, size_t dpitch, const void* src,
                                           size_t spitch, size_t width, size_t height,
                                           aclrtMemcpyKind kind);
/* The same on a stream, DEVICE_TO_DEVICE too; width <= 5000000, height <= 5242880.
 * With pageable host memory it returns after the copy, as aclrtMemcpyAsync does. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2dAsync(void* dst, size_t dpitch, const void* src,
                                                size_t spitch, size_t width, size_t height,
                                                aclrtMemcpyKind kind, aclrtStream stream);
/* numBatches copies, all host to device or all device to host; attrs[k] describes the
 * copies from attrsIndexes[k] (attrsIndexes[0] = 0, increasing) and must match the
 * pointers. Everything is checked before anything is copied; *failIndex is the copy
 * whose attributes or direction are wrong, SIZE_MAX otherwise. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatch(void** dsts, size_t* destMaxs, void** srcs,
                                              size_t* sizes, size_t numBatches,
                                              aclrtMemcpyBatchAttr* attrs, size_t* attrsIndexes,
                                              size_t numAttrs, size_t* failIndex);
/* On a stream; returns after the copies when a host side is pageable memory. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsync(void** dsts, size_t* destMaxs, void** srcs,
                                                   size_t* sizes, size_t numBatches,
                                                   aclrtMemcpyBatchAttr* attrs,
                                                   size_t* attrsIndexes, size_t numAttrs,
                                                   size_t* failIndex, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchV2(void** dsts, size_t* destMaxs, void** srcs,
                                                size_t* sizes, size_t numBatches,
                                                aclrtMemcpyBatchAttr* attrs,
                                                size_t* attrsIndexes, size_t numAttrs);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsyncV2(void** dsts, size_t* destMaxs, void** srcs,
                                                     size_t* sizes, size_t numBatches,
                                                     aclrtMemcpyBatchAttr* attrs,
                                                     size_t* attrsIndexes, size_t numAttrs,
                                                     aclrtStream stream);
/* Copies count bytes from *src + srcDataOffset to *dst + dstDataOffset, reading the two
 * addresses when the task runs. kind: ACL_MEMCPY_INNER_DEVICE_TO_DEVICE. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithOffset(void** dst, size_t destMax,
                                                        size_t dstDataOffset, const void** src,
                                                        size_t count, size_t srcDataOffset,
                                                        aclrtMemcpyKind kind,
                                                        aclrtStream stream);
/* Deprecated by CANN: aclrtMemcpyAsync. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithCondition(void* dst, size_t destMax,
                                                           const void* src, size_t count,
                                                           aclrtMemcpyKind kind,
                                                           aclrtStream stream);
/* Copy descriptors in device memory (kind: ACL_MEMCPY_INNER_DEVICE_TO_DEVICE): the size
 * to allocate, filling one, and a copy that reads it when the task runs. */
ACL_FUNC_VISIBILITY aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t* descSize);
ACL_FUNC_VISIBILITY aclError aclrtSetMemcpyDesc(void* desc, aclrtMemcpyKind kind, void* srcAddr,
                                                void* dstAddr, size_t count, void* config);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithDesc(void* desc, aclrtMemcpyKind kind,
                                                      aclrtStream stream);
/* Sets N 32-bit elements (memSize >= 4 * N) of device or pinned host memory. */
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32(void* ptr, size_t memSize, uint32_t value, size_t N);
/* Device memory: a task on the stream; host memory: set at once, as CANN does. */
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32Async(void* ptr, size_t memSize, uint32_t value,
                                                 size_t N, aclrtStream stream);
/* Device symbols live in kernel binaries, which cannot be loaded here:
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyToSymbol(const void* symbol, const void* src,
                                                 size_t count, size_t offset,
                                                 aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyFromSymbol(void* dst, size_t dstMax, const void* symbol,
                                                   size_t count, size_t offset,
                                                   aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyToSymbolAsync(const void* symbol, const void* src,
                                                      size_t count, size_t offset,
                                                      aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyFromSymbolAsync(void* dst, size_t dstMax,
                                                        const void* symbol, size_t count,
                                                        size_t offset, aclrtMemcpyKind kind,
                                                        aclrtStream stream);

/* ---- Cache maintenance (CMO) ------------------------------------------------- */
/* The emulated devices are CPU threads whose caches the hardware keeps coherent with
 * every other thread: prefetching, writing back, invalidating or flushing a range
 * changes nothing any reader can see. Each operation is still a task of its stream
 * (ordered with the others, completing at once) after its arguments are checked. */

typedef enum aclrtCmoType ACL_ENUM_BASE {
  ACL_RT_CMO_TYPE_PREFETCH = 0,
  ACL_RT_CMO_TYPE_WRITEBACK = 1,
  ACL_RT_CMO_TYPE_INVALID = 2,
  ACL_RT_CMO_TYPE_FLUSH = 3,
} aclrtCmoType;

typedef struct aclrtBarrierCmoInfo {
  aclrtCmoType cmoType;
  uint32_t barrierId;
} aclrtBarrierCmoInfo;

#define ACL_RT_CMO_MAX_BARRIER_NUM 6U

typedef struct aclrtBarrierTaskInfo {
  size_t barrierNum;
  aclrtBarrierCmoInfo cmoInfo[ACL_RT_CMO_MAX_BARRIER_NUM];
} aclrtBarrierTaskInfo;

/* src: device memory of the stream's device. cmoType: PREFETCH (the others are
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT, as in CANN). */
ACL_FUNC_VISIBILITY aclError aclrtCmoAsync(void* src, size_t size, aclrtCmoType cmoType,
                                           aclrtStream stream);
/* Any cmoType; barrierId > 0 only with INVALID, for aclrtCmoWaitBarrier. Any stream (CANN
 * wants one bound to a model). */
ACL_FUNC_VISIBILITY aclError aclrtCmoAsyncWithBarrier(void* src, size_t size,
                                                      aclrtCmoType cmoType, uint32_t barrierId,
                                                      aclrtStream stream);
/* Later work of the stream waits for the latest INVALID task with each barrierId
 * (cmoType INVALID, 1 to 6 entries; flag 0). */
ACL_FUNC_VISIBILITY aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo* taskInfo,
                                                 aclrtStream stream, uint32_t flag);
/* Descriptors in device memory: their size, filling one, and a task that reads it when
 * it runs (cmoType PREFETCH; reserve NULL). */
ACL_FUNC_VISIBILITY aclError aclrtCmoGetDescSize(size_t* size);
ACL_FUNC_VISIBILITY aclError aclrtCmoSetDesc(void* cmoDesc, void* src, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtCmoAsyncWithDesc(void* cmoDesc, aclrtCmoType cmoType,
                                                   aclrtStream stream, const void* reserve);

/* ---- Host memory registration ------------------------------------------------ */
/* Registered host memory is device memory at the same address (devPtr == ptr): copies
 * accept it as host or as device memory, and so do kernels, memsets and collectives. */

typedef enum aclrtHostRegisterType ACL_ENUM_BASE {
  ACL_HOST_REGISTER_MAPPED = 0,
  ACL_HOST_REGISTER_IOMEMORY = 0x04, /* not supported (as in CANN) */
  ACL_HOST_REGISTER_READONLY = 0x08, /* not supported (as in CANN) */
} aclrtHostRegisterType;

/* Flags of aclrtHostRegisterV2. */
#define ACL_HOST_REG_MAPPED 0x2UL          /* device memory too (aclrtHostGetDevicePointer) */
#define ACL_HOST_REG_IOMEMORY 0x4UL        /* not supported */
#define ACL_HOST_REG_READONLY 0x8UL        /* not supported */
#define ACL_HOST_REG_PINNED 0x10000000UL   /* page-lock pageable memory */

/* Hardware accelerators of aclrtHostMemMapCapabilities. */
typedef enum aclrtHacType ACL_ENUM_BASE {
  ACL_RT_HAC_TYPE_STARS = 0,
  ACL_RT_HAC_TYPE_AICPU = 1,
  ACL_RT_HAC_TYPE_AIC = 2,
  ACL_RT_HAC_TYPE_AIV = 3,
  ACL_RT_HAC_TYPE_PCIEDMA = 4,
  ACL_RT_HAC_TYPE_RDMA = 5,
  ACL_RT_HAC_TYPE_SDMA = 6,
  ACL_RT_HAC_TYPE_DVPP = 7,
  ACL_RT_HAC_TYPE_UDMA = 8,
  ACL_RT_HAC_TYPE_CCU = 9,
} aclrtHacType;

typedef enum aclrtHostMemMapCapability ACL_ENUM_BASE {
  ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0,
  ACL_RT_HOST_MEM_MAP_SUPPORTED = 1,
} aclrtHostMemMapCapability;

/* Registers [ptr, ptr + size) (4 KiB-aligned, pageable or aclrtMallocHost memory) for
 * the current device; *devPtr = ptr. type: ACL_HOST_REGISTER_MAPPED. */
ACL_FUNC_VISIBILITY aclError aclrtHostRegister(void* ptr, uint64_t size,
                                               aclrtHostRegisterType type, void** devPtr);
/* flag: ACL_HOST_REG_MAPPED and/or ACL_HOST_REG_PINNED (PINNED only for pageable
 * memory). Without MAPPED the range is page-locked host memory only. */
ACL_FUNC_VISIBILITY aclError aclrtHostRegisterV2(void* ptr, uint64_t size, uint32_t flag);
/* Ends the registration that starts at ptr. */
ACL_FUNC_VISIBILITY aclError aclrtHostUnregister(void* ptr);
/* The device address of registered (MAPPED) host memory: pHost itself. flag 0. */
ACL_FUNC_VISIBILITY aclError aclrtHostGetDevicePointer(void* pHost, void** pDevice,
                                                       uint32_t flag);
/* SUPPORTED for every accelerator: each one here is host code reading host RAM. */
ACL_FUNC_VISIBILITY aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType,
                                                         aclrtHostMemMapCapability* capabilities);

/* ---- Peer access between devices --------------------------------------------- */
/* Every emulated device of the process reaches every other (one RAM). Enabling is
 * recorded per ordered pair (current device -> peer) until disabled. A copy between
 * two devices works whether or not it is enabled: CANN asks programs to enable it
 * first but documents no failure for a copy without it. */

typedef enum aclrtMemLinkType ACL_ENUM_BASE {
  ACL_RT_MEM_ACCESS_LINK_SIO = 0,
  ACL_RT_MEM_ACCESS_LINK_HCCS = 1,
  ACL_RT_MEM_ACCESS_UB_ONE_PORT_PATH = 2,
  ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH = 3,
} aclrtMemLinkType;

/* Links of aclrtMemMapSelectedLink. */
#define ACL_RT_MEM_LINK_IDX_0 0U /* SIO */
#define ACL_RT_MEM_LINK_IDX_1 1U /* HCCS */

/* *canAccessPeer = 1 for two different visible devices. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId,
                                                      int32_t peerDeviceId);
/* The current device may access peerDeviceId's memory (flags 0; enabling twice is
 * fine). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
ACL_FUNC_VISIBILITY aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId);
/* *status = 1 when deviceId -> peerDeviceId is enabled, 0 otherwise. */
ACL_FUNC_VISIBILITY aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId,
                                                         int32_t* status);
/* Checks that dstDevId may use [devPtr, devPtr + size) of another device (peer access
 * dstDevId -> owner enabled); the pages are reachable already. flags 0. */
ACL_FUNC_VISIBILITY aclError aclrtMemP2PMap(void* devPtr, size_t size, int32_t dstDevId,
                                            uint64_t flags);
/* Checks the physical allocation and the link (SIO, HCCS, UB): every link reaches the
 * same RAM, so the advice changes nothing. ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED for
 * another value. */
ACL_FUNC_VISIBILITY aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle,
                                                aclrtMemLinkType adviceLink);
/* Maps at virPtrDst (the start of a reservation) the physical memory mapped at
 * [virPtrSrc, virPtrSrc + size) (whole mappings from virPtrSrc), each piece at the same
 * offset: both ranges are then the same memory. Each piece is a mapping of its own for
 * aclrtUnmapMem. Every link (linkIdx 0 or 1) reaches the same RAM. */
ACL_FUNC_VISIBILITY aclError aclrtMemMapSelectedLink(void* virPtrDst, size_t size,
                                                     void* virPtrSrc, uint32_t linkIdx);

/* ---- Device memory shared between processes by key --------------------------- */
/* A key names device memory of one process for the other processes of the node: the
 * importer maps the same memory, so writes on either side are seen on the other. */

#define ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT 0x0UL                /* importers must be listed */
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL /* any process may import */

#define ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x1UL /* enable current -> owner */

/* Links of aclrtIpcMemSetAttr (ACL_RT_IPC_MEM_ATTR_ACCESS_LINK). */
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO 0
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS 1
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_ONE_PORT_PATH 2
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH 3

typedef enum aclrtIpcMemAttrType ACL_ENUM_BASE {
  ACL_RT_IPC_MEM_ATTR_ACCESS_LINK = 0,
} aclrtIpcMemAttrType;

/* A whitelist for another server (aclrtIpcMemImportPidInterServer). */
typedef struct aclrtServerPid {
  uint32_t sdid;
  int32_t* pid;
  size_t num;
} aclrtServerPid;

/* Shares [devPtr, devPtr + size) (inside one aclrtMalloc allocation) and writes its key,
 * a NUL-terminated string, to key (len >= 65). flags: the EXPORT_FLAG values. */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void* devPtr, size_t size, char* key,
                                                     size_t len, uint64_t flags);
/* Maps the memory of a key of another process (or this one) of the node. Unless the
 * exporter disabled the check, this process must be on the key's whitelist:
 * ACL_ERROR_RT_NO_PERMISSION otherwise. Importing a key twice gives the same address. */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void** devPtr, const char* key,
                                                    uint64_t flags);
/* Importer: unmaps the memory (once per import). Exporter: stops sharing it (later
 * imports fail; mappings made already stay valid). */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char* key);
/* Adds num process ids to the whitelist of a key this process exported. */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetImportPid(const char* key, int32_t* pid, size_t num);
/* ACL_RT_IPC_MEM_ATTR_ACCESS_LINK with a link of ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_*: every
 * link reaches the same RAM, so it is recorded only. */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetAttr(const char* key, aclrtIpcMemAttrType type,
                                                uint64_t attr);
/* Whitelists for other servers of a super node: ACL_ERROR_RT_FEATURE_NOT_SUPPORT (memory
 * is shared within a node only). */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportPidInterServer(const char* key,
                                                             aclrtServerPid* serverPids,
                                                             size_t num);

/* ---- Shared buffers (mbuf) --------------------------------------------------- */
/* CANN documents these as reserved and not supported in this version (they serve its
 * data queues): each returns ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtAllocBuf(aclrtMbuf* buf, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeBuf(aclrtMbuf buf);
ACL_FUNC_VISIBILITY aclError aclrtGetBufData(const aclrtMbuf buf, void** dataPtr, size_t* size);
ACL_FUNC_VISIBILITY aclError aclrtGetBufDataLen(aclrtMbuf buf, size_t* len);
ACL_FUNC_VISIBILITY aclError aclrtSetBufDataLen(aclrtMbuf buf, size_t len);
ACL_FUNC_VISIBILITY aclError aclrtGetBufUserData(const aclrtMbuf buf, void* dataPtr, size_t size,
                                                 size_t offset);
ACL_FUNC_VISIBILITY aclError aclrtSetBufUserData(aclrtMbuf buf, const void* dataPtr, size_t size,
                                                 size_t offset);
ACL_FUNC_VISIBILITY aclError aclrtAppendBufChain(aclrtMbuf headBuf, aclrtMbuf buf);
ACL_FUNC_VISIBILITY aclError aclrtGetBufChainNum(aclrtMbuf headBuf, uint32_t* num);
ACL_FUNC_VISIBILITY aclError aclrtGetBufFromChain(aclrtMbuf headBuf, uint32_t index,
                                                  aclrtMbuf* buf);
ACL_FUNC_VISIBILITY aclError aclrtCopyBufRef(const aclrtMbuf buf, aclrtMbuf* newBuf);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_RT_MEMORY_H_ */
