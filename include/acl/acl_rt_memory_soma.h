/*
 * Cohort's ACL-compatible C API: stream-ordered memory pools (CANN's
 * acl_rt_memory_soma.h; acl/acl_rt.h includes it too).
 *
 * A pool hands out device memory of one device in stream order:
 * aclrtMemPoolMallocAsync's memory may be used by the work queued after it on the
 * stream; aclrtMemPoolFreeAsync gives it back to the pool once the stream has run
 * the work queued before it. Memory given back stays reserved by the pool for reuse
 * (whole blocks, the smallest block that fits) until the release threshold or
 * aclrtMemPoolTrimTo returns it to the device. Sizes are rounded up to 2 MiB
 * blocks, as in CANN, and the counters count rounded sizes.
 *
 * Reuse: a stream always reuses what it freed itself, even before its worker got
 * there (stream order makes that safe). A block whose free has run is idle and any
 * stream of the device may take it, whatever the reuse attributes say: nothing can
 * use it any more. With ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES, a
 * stream also takes a block whose free is still queued on another stream, and
 * waits for that free first. ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES and
 * ..._ALLOW_OPPORTUNISTIC are recorded and read back (off by default, as in CANN):
 * the blocks they would let a stream take early are those it takes anyway once
 * their free has run.
 */
#ifndef COHORT_ACL_ACL_RT_MEMORY_SOMA_H_
#define COHORT_ACL_ACL_RT_MEMORY_SOMA_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void* aclrtMemPool;

typedef enum aclrtMemPoolAttr ACL_ENUM_BASE {
  ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1,   /* uint32_t, 0 or 1 */
  ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2,         /* uint32_t, 0 or 1 */
  ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3, /* uint32_t, 0 or 1 */
  /* uint64_t, default 0, at most maxSize: idle bytes the pool keeps when a free runs;
   * more are returned to the device then. */
  ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4,
  ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5, /* uint64_t, read only: bytes held */
  ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6,    /* uint64_t, see below */
  /* uint64_t, read only: bytes handed out whose free has not run yet */
  ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7,
  /* uint64_t. Setting a high-water mark (only to 0) restarts it from the current value. */
  ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8,
} aclrtMemPoolAttr;

typedef struct aclrtMemPoolProps {
  aclrtMemAllocationType allocType; /* ACL_MEM_ALLOCATION_TYPE_PINNED */
  aclrtMemHandleType handleType;    /* ACL_MEM_HANDLE_TYPE_NONE or _POSIX */
  aclrtMemLocation location;        /* ACL_MEM_LOCATION_TYPE_DEVICE and a device id */
  size_t maxSize;                   /* bytes, rounded up to 2 MiB; 0: the device's memory */
  unsigned char reserved[32];       /* all 0 */
} aclrtMemPoolProps;

/* A pool of device poolProps->location.id's memory, holding nothing yet. Its size
 * may not exceed the device's memory (ACL_ERROR_RT_PARAM_INVALID). */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolCreate(aclrtMemPool* memPool,
                                                const aclrtMemPoolProps* poolProps);
/* Destroys the handle and returns the idle memory to the device; memory still in
 * use returns when aclrtMemPoolFreeAsync's free has run (or the device is reset). */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolDestroy(const aclrtMemPool memPool);
/* Sets an attribute; value points to the attribute's type (see aclrtMemPoolAttr). */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr,
                                                 void* value);
/* Reads an attribute into *value (its type, see aclrtMemPoolAttr). */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr,
                                                 void* value);
/* *ptr = `size` bytes of the pool for the work queued from now on on `stream` (not
 * NULL; a stream of the pool's device, which must be the calling thread's current
 * device). size 0 gives NULL. ACL_ERROR_RT_MEMORY_ALLOCATION when the pool's size
 * or the device's memory is exhausted. */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolMallocAsync(void** ptr, size_t size, aclrtMemPool memPool,
                                                     aclrtStream stream);
/* Gives ptr back to its pool once `stream` (NULL: the default stream) has run the
 * work queued before. As CANN does, memory from aclrtMalloc is freed at that point
 * instead. */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolFreeAsync(void* ptr, aclrtStream stream);
/* Returns idle blocks to the device while the pool keeps at least minBytesToKeep
 * reserved; memory in use, or whose free has not run yet, stays. */
ACL_FUNC_VISIBILITY aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_RT_MEMORY_SOMA_H_ */
