/*
 * Cohort's ACL-compatible C API: external allocators (CANN's acl_rt_allocator.h,
 * included by acl/acl_rt.h). A program describes its own allocator (an object and
 * callbacks) and registers it on a stream, so that work the runtime does for that
 * stream may take memory from it.
 *
 * In Cohort nothing allocates memory on a program's behalf (no operator or model
 * execution needs workspace), so a registration is recorded, kept per stream and
 * returned by aclrtAllocatorGetByStream, and no callback is ever called: CANN's
 * contract only says the runtime may use the allocator.
 */
#ifndef COHORT_ACL_ACL_RT_ALLOCATOR_H_
#define COHORT_ACL_ACL_RT_ALLOCATOR_H_

#include <stddef.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The callbacks: take a block of `size` bytes, give a block back, take a block at
 * or near a suggested address, and the device address of a block. */
typedef void* (*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size);
typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block);
typedef void* (*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size,
                                               aclrtAllocatorAddr addr);
typedef void* (*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

/* A new, empty description; NULL without host memory. Callable before aclInit. */
ACL_FUNC_VISIBILITY aclrtAllocatorDesc aclrtAllocatorCreateDesc(void);
/* Destroys a description. Registrations made from it stay: they hold a copy. */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc);
/* Set the allocator object and the callbacks of a description (none may be NULL). */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc,
                                                        aclrtAllocator allocator);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                              aclrtAllocatorAllocFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                             aclrtAllocatorFreeFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocAdviseFuncToDesc(
    aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    aclrtAllocatorDesc allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func);

/* Registers what the description holds now (object, alloc, free and
 * get-address callbacks required; alloc-advise optional) on `stream` (not NULL, a
 * live stream); a second registration on the stream replaces the first. */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorRegister(aclrtStream stream,
                                                    aclrtAllocatorDesc allocatorDesc);
/* The description registered on `stream` and what it held then; every output but
 * allocatorDesc may be NULL. ACL_ERROR_INVALID_PARAM when none is registered. */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorGetByStream(
    aclrtStream stream, aclrtAllocatorDesc* allocatorDesc, aclrtAllocator* allocator,
    aclrtAllocatorAllocFunc* allocFunc, aclrtAllocatorFreeFunc* freeFunc,
    aclrtAllocatorAllocAdviseFunc* allocAdviseFunc,
    aclrtAllocatorGetAddrFromBlockFunc* getAddrFromBlockFunc);
/* Forgets the stream's registration; success when there is none. */
ACL_FUNC_VISIBILITY aclError aclrtAllocatorUnregister(aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ACL_ACL_RT_ALLOCATOR_H_ */
