/*
 * Cohort's ACL-compatible C API: virtual memory, reserved addresses backed by
 * physical allocations (declared in CANN's acl_rt.h; included by acl/acl_rt_memory.h,
 * never on its own).
 */
#ifndef COHORT_ACL_ACL_RT_VMM_H_
#define COHORT_ACL_ACL_RT_VMM_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Virtual memory: reserved addresses backed by physical allocations ------ */
/* A physical allocation is pages of a device's memory; mapping it at reserved
 * addresses makes them device memory of that device for every call (copies,
 * collectives), contiguous across adjacent mappings. Every device and the host share
 * one address space here, so a mapping's access (aclrtMemSetAccess) is the same for
 * all of them. Allocations can be shared with the other processes of the node: both
 * sides then map the same pages. */

typedef void* aclrtDrvMemHandle; /* a physical allocation (aclrtMallocPhysical) */

/* Flags of aclrtMemExportToShareableHandle(V2). */
#define ACL_RT_VMM_EXPORT_FLAG_DEFAULT 0x0UL                /* importers must be listed */
#define ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL /* any process may import */

typedef enum aclrtMemHandleType ACL_ENUM_BASE {
  ACL_MEM_HANDLE_TYPE_NONE = 0,
  ACL_MEM_HANDLE_TYPE_POSIX = 2,
} aclrtMemHandleType;

typedef enum aclrtMemSharedHandleType ACL_ENUM_BASE {
  ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 0x1, /* within the node: a uint64_t */
  ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 0x2,  /* across servers: not supported */
} aclrtMemSharedHandleType;

typedef struct aclrtMemFabricHandle {
  uint8_t data[128];
} aclrtMemFabricHandle;

typedef enum aclrtMemAllocationType ACL_ENUM_BASE {
  ACL_MEM_ALLOCATION_TYPE_PINNED = 0,
} aclrtMemAllocationType;

typedef enum aclrtMemLocationType ACL_ENUM_BASE {
  ACL_MEM_LOCATION_TYPE_HOST = 0,
  ACL_MEM_LOCATION_TYPE_DEVICE = 1,
  ACL_MEM_LOCATION_TYPE_UNREGISTERED = 2,
  ACL_MEM_LOCATION_TYPE_MANAGED = 3,
  ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4,
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
  uint32_t id; /* the device, for ACL_MEM_LOCATION_TYPE_DEVICE */
  aclrtMemLocationType type;
} aclrtMemLocation;

typedef struct aclrtPhysicalMemProp {
  aclrtMemHandleType handleType;
  aclrtMemAllocationType allocationType;
  aclrtMemAttr memAttr;
  aclrtMemLocation location;
  uint64_t reserve;
} aclrtPhysicalMemProp;

typedef enum aclrtMemGranularityOptions ACL_ENUM_BASE {
  ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
  ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
  ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF,
} aclrtMemGranularityOptions;

/* What a mapping allows: the protection of its pages. */
typedef enum aclrtMemAccessFlags ACL_ENUM_BASE {
  ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,
  ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,
  ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3,
} aclrtMemAccessFlags;

typedef struct aclrtMemAccessDesc {
  aclrtMemAccessFlags flags;
  aclrtMemLocation location; /* DEVICE (id: a device) or HOST */
  uint8_t rsv[12];
} aclrtMemAccessDesc;

/* Sizes and offsets of physical allocations and mappings are multiples of this
 * (2 MiB, both options). */
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp* prop,
                                                              aclrtMemGranularityOptions option,
                                                              size_t* granularity);
/* Reserves `size` bytes of addresses (a multiple of the granularity; alignment 0 or
 * a power of two; flags 0 or 1) with nothing behind them: aclrtMapMem puts physical
 * allocations there. A non-NULL expectPtr is where they must start (aligned to the
 * granularity, to 1 GiB when size is more): ACL_ERROR_INVALID_PARAM if that range is
 * taken. */
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void** virPtr, size_t size, size_t alignment,
                                                    void* expectPtr, uint64_t flags);
/* The same, at the address expectPtr only (NULL: ACL_ERROR_RT_FEATURE_NOT_SUPPORT, as in
 * CANN), for sizes that are whole GiB. The addresses are never uncached device memory
 * here, which is the difference CANN makes. */
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddressNoUCMemory(void** virPtr, size_t size,
                                                              size_t alignment, void* expectPtr,
                                                              uint64_t flags);
/* Releases a reservation whose mappings are all unmapped. */
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void* virPtr);
/* `size` bytes (a multiple of the granularity) of device prop->location.id's memory,
 * counted against its capacity like aclrtMalloc. */
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size,
                                                 const aclrtPhysicalMemProp* prop, uint64_t flags);
/* Drops the handle (the allocation's, an import's, or one aclrtMemRetainAllocationHandle
 * gave). The memory goes once no handle and no mapping is left: freeing a mapped
 * allocation frees it at its last aclrtUnmapMem. Exported memory stays allocated until
 * every importer freed it too. */
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
/* Maps `size` bytes of the allocation from `offset` (multiples of the granularity) at
 * virPtr, inside a reservation, readable and writable. */
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void* virPtr, size_t size, size_t offset,
                                         aclrtDrvMemHandle handle, uint64_t flags);
/* The same with no access until aclrtMemSetAccess: copies and sets that touch the
 * range fail (ACL_ERROR_RT_PARAM_INVALID) instead of faulting. */
ACL_FUNC_VISIBILITY aclError aclrtMemMapNoAccess(void* virPtr, size_t size, size_t offset,
                                                 aclrtDrvMemHandle handle, uint64_t flags);
/* Unmaps the mapping that starts at virPtr (its addresses stay reserved). */
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void* virPtr);
/* Sets the access of [virPtr, virPtr + size), whole mappings from virPtr: the widest
 * flags of the count descriptors (each location a device or the host). */
ACL_FUNC_VISIBILITY aclError aclrtMemSetAccess(void* virPtr, size_t size,
                                               aclrtMemAccessDesc* desc, size_t count);
/* The access of the mapping holding virPtr, for a device or the host (*flag: an
 * aclrtMemAccessFlags value). */
ACL_FUNC_VISIBILITY aclError aclrtMemGetAccess(void* virPtr, aclrtMemLocation* location,
                                               uint64_t* flag);
/* The allocation mapped at virPtr (anywhere in a mapping), as a handle of its own that
 * aclrtFreePhysical drops (the same handle value each time). */
ACL_FUNC_VISIBILITY aclError aclrtMemRetainAllocationHandle(void* virPtr,
                                                            aclrtDrvMemHandle* handle);
/* What the allocation was made with (device: the creator's, or the one an import was
 * made for). */
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationPropertiesFromHandle(
    aclrtDrvMemHandle handle, aclrtPhysicalMemProp* prop);
/* The block holding ptr: a mapping (aclrtMapMem), or an allocation of device, pinned
 * host, managed or imported memory. */
ACL_FUNC_VISIBILITY aclError aclrtMemGetAddressRange(void* ptr, void** pbase, size_t* psize);

/* Sharing with the other processes of the node. The exporter gets a shareable handle for
 * an allocation it made (once per allocation; handleType ACL_MEM_HANDLE_TYPE_NONE), lists
 * the processes that may import it (aclrtDeviceGetBareTgid gives their ids) unless the
 * flags disable the check, and passes the number on; an importer (another process: not
 * the exporter, ACL_ERROR_RT_FEATURE_NOT_SUPPORT) gets a handle of its own whose mappings
 * are the same memory, once until it frees it. An unlisted importer gets
 * ACL_ERROR_RT_NO_PERMISSION. The handle stops importing once the exporter freed the
 * allocation. V2 with ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT passes the same number through a
 * uint64_t*; FABRIC (across servers) is ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
                                                             aclrtMemHandleType handleType,
                                                             uint64_t flags,
                                                             uint64_t* shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle,
                                                               uint64_t flags,
                                                               aclrtMemSharedHandleType shareType,
                                                               void* shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle,
                                                             int32_t* pid, size_t pidNum);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandleV2(
    void* shareableHandle, aclrtMemSharedHandleType shareType, int32_t* pid, size_t pidNum);
/* deviceId: the device of this process the handle is for. */
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
                                                               int32_t deviceId,
                                                               aclrtDrvMemHandle* handle);
/* For the current device (flags 0). */
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandleV2(
    void* shareableHandle, aclrtMemSharedHandleType shareType, uint64_t flags,
    aclrtDrvMemHandle* handle);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_RT_VMM_H_ */
