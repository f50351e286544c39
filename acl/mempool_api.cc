// Stream-ordered memory pools (aclrtMemPoolCreate ... aclrtMemPoolTrimTo): the entry
// points, allocation and the two phases of a free. See mem_pool_registry.h.
#include "acl/entry_names.h"
#include "acl/mem_pool_registry.h"

namespace cohort::acl::mempool {

namespace rt = cohort::runtime;

Outcome PoolRegistry::allocate(void** ptr, std::size_t size, aclrtMemPool handle,
                               rt::Stream* stream) {
  const char* fn = "aclrtMemPoolMallocAsync";
  int streamDevice = -1;
  COHORT_RETURN_IF_ERROR(rt::streamGetDevice(stream, &streamDevice));
  int current = -1;
  if (!rt::getDevice(&current).ok() || current != streamDevice) {
    return Outcome(ACL_ERROR_RT_STREAM_CONTEXT,
                   cohort::makeError(ErrorCode::kInvalidArgument,
                                     "{}: the stream belongs to device {}, not to the calling "
                                     "thread's current device",
                                     fn, streamDevice));
  }
  if (size > SIZE_MAX - (kBlockBytes - 1)) {
    return rtInvalid(
        cohort::makeError(ErrorCode::kInvalidArgument, "{}: size {} is too large", fn, size));
  }
  const std::size_t wanted = roundUp(size);
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Pool> pool;
  ACL_RETURN_IF_FAILED(findLocked(fn, handle, &pool));
  sweepZombiesLocked();
  refreshLocked(*pool);
  if (pool->device != streamDevice) {
    return rtInvalid(cohort::makeError(ErrorCode::kInvalidArgument,
                                       "{}: the pool holds device {}'s memory, the stream "
                                       "belongs to device {}",
                                       fn, pool->device, streamDevice));
  }
  if (reuseLocked(*pool, wanted, stream, ptr)) return Status::Ok();
  // A new block; idle ones go back to the device first if the pool or the device
  // is full.
  if (pool->reserved + wanted > pool->maxSize) {
    releaseIdleLocked(*pool, 0, pool->reserved + wanted - pool->maxSize);
  }
  if (pool->reserved + wanted > pool->maxSize) {
    return Outcome(ACL_ERROR_RT_MEMORY_ALLOCATION,
                   cohort::makeError(ErrorCode::kOutOfMemory,
                                     "{}: out of pool memory: {} more bytes do not fit the "
                                     "pool's {} ({} in use or waiting for their free)",
                                     fn, wanted, pool->maxSize, pool->used));
  }
  void* block = nullptr;
  Status status = rt::deviceMalloc(&block, wanted);
  if (status.code() == ErrorCode::kOutOfMemory && pool->reserved > pool->used) {
    releaseIdleLocked(*pool, 0, pool->reserved);
    status = rt::deviceMalloc(&block, wanted);
  }
  COHORT_RETURN_IF_ERROR(status);
  pool->blocks[block].size = wanted;
  owners_[block] = pool;
  pool->reserved += wanted;
  pool->used += wanted;
  noteHighs(*pool);
  *ptr = block;
  return Status::Ok();
}

bool PoolRegistry::reuseLocked(Pool& pool, std::size_t wanted, rt::Stream* stream, void** ptr) {
  BlockIt best = pool.blocks.end();
  bool bestWaits = false;
  for (BlockIt it = pool.blocks.begin(); it != pool.blocks.end(); ++it) {
    const Block& block = it->second;
    if (block.size < wanted || block.state == BlockState::kBusy) continue;
    const bool own = block.state == BlockState::kIdle || block.freeStream == stream;
    if (!own && (pool.allowInternalDependencies == 0 || block.freed == nullptr)) continue;
    const bool waits = !own;
    if (best == pool.blocks.end() || block.size < best->second.size ||
        (block.size == best->second.size && bestWaits && !waits)) {
      best = it;
      bestWaits = waits;
    }
  }
  if (best == pool.blocks.end()) return false;
  Block& block = best->second;
  if (bestWaits && !rt::streamWaitEvent(stream, block.freed).ok()) return false;
  if (block.state == BlockState::kIdle) pool.used += block.size;
  if (block.freed != nullptr) (void)rt::eventDestroy(block.freed);
  block.state = BlockState::kBusy;
  block.freed = nullptr;
  block.freeStream = nullptr;
  noteHighs(pool);
  *ptr = best->first;
  return true;
}

bool PoolRegistry::beginFree(const char* fn, void* ptr, rt::Stream* stream,
                             std::shared_ptr<Pool>* owner, std::uint64_t* ticket,
                             Outcome* outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  sweepZombiesLocked();
  auto owned = owners_.find(ptr);
  if (owned == owners_.end()) return false;
  std::shared_ptr<Pool> pool = owned->second;
  const std::uint64_t resets = pool->resets;
  refreshLocked(*pool);
  auto it = pool->blocks.find(ptr);
  if (it == pool->blocks.end() && pool->resets != resets) {
    *outcome = rtInvalid(cohort::makeError(ErrorCode::kInvalidPointer,
                                           "{}: ptr {} was pool memory of device {}, which has "
                                           "been reset since",
                                           fn, ptr, pool->device));
    return true;
  }
  // Not busy, or gone: an earlier free has run and the block went back to the device.
  if (it == pool->blocks.end() || it->second.state != BlockState::kBusy) {
    *outcome = Outcome(ACL_ERROR_RT_MEMORY_FREE,
                       cohort::makeError(ErrorCode::kDoubleFree,
                                         "{}: ptr {} was already given back to its pool", fn, ptr));
    return true;
  }
  Block& block = it->second;
  block.state = BlockState::kFreeQueued;
  block.freeStream = stream;
  block.freed = nullptr;
  block.ticket = ++nextTicket_;
  *owner = pool;
  *ticket = block.ticket;
  *outcome = Status::Ok();
  return true;
}

void PoolRegistry::finishFree(const std::shared_ptr<Pool>& pool, void* ptr, std::uint64_t ticket,
                              rt::Event* freed) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pool->blocks.find(ptr);
  const bool pending = it != pool->blocks.end() && it->second.ticket == ticket &&
                       it->second.state == BlockState::kFreeQueued;
  if (!pending) {  // reused on the same stream meanwhile, or gone with a device reset
    if (freed != nullptr) (void)rt::eventDestroy(freed);
    return;
  }
  if (freed == nullptr) {
    it->second.state = BlockState::kBusy;
    it->second.freeStream = nullptr;
    return;
  }
  it->second.freed = freed;
}

}  // namespace cohort::acl::mempool

namespace {

using cohort::acl::mempool::Pool;
using cohort::acl::mempool::PoolRegistry;
using cohort::acl::mempool::rtInvalid;

Outcome freeAsync(void* ptr, aclrtStream stream) {
  const char* fn = "aclrtMemPoolFreeAsync";
  if (ptr == nullptr) return nullArgument(fn, "ptr");
  if (stream == nullptr) ACL_RETURN_IF_FAILED(requireDevice(fn));
  auto* s = toStream(stream);
  std::shared_ptr<Pool> pool;
  std::uint64_t ticket = 0;
  Outcome outcome = Status::Ok();
  if (!PoolRegistry::get().beginFree(fn, ptr, s, &pool, &ticket, &outcome)) {
    // Not pool memory: as in CANN, memory from aclrtMalloc is freed at that point.
    rt::PointerAttributes attributes;
    COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(ptr, &attributes));
    const bool plainDevice = attributes.isDevice && !attributes.isMapped && !attributes.isManaged &&
                             attributes.device >= 0;
    if (!plainDevice || attributes.allocationBase != ptr) {
      return rtInvalid(cohort::makeError(ErrorCode::kInvalidPointer,
                                         "{}: ptr {} is neither memory of a pool nor the start "
                                         "of an aclrtMalloc allocation",
                                         fn, ptr));
    }
    return rt::launchKernel(s, [ptr](rt::Stream*) { return rt::deviceFree(ptr); });
  }
  if (!outcome.ok()) return outcome;
  rt::Event* freed = nullptr;
  Status status = rt::eventCreate(&freed);
  if (status.ok()) status = rt::eventRecord(freed, s);
  if (!status.ok() && freed != nullptr) {
    (void)rt::eventDestroy(freed);
    freed = nullptr;
  }
  PoolRegistry::get().finishFree(pool, ptr, ticket, freed);
  COHORT_RETURN_IF_ERROR(status);
  // Best effort: a stream that has failed skips it, and the pool notices later.
  (void)rt::launchKernel(s, [pool](rt::Stream*) {
    PoolRegistry::get().poll(pool);
    return Status::Ok();
  });
  return Status::Ok();
}

}  // namespace

aclError aclrtMemPoolCreate(aclrtMemPool* memPool, const aclrtMemPoolProps* poolProps) {
  const char* fn = "aclrtMemPoolCreate";
  return apiCall(fn, [&]() -> Outcome {
    if (memPool == nullptr) return nullArgument(fn, "memPool");
    if (poolProps == nullptr) return nullArgument(fn, "poolProps");
    if (poolProps->allocType != ACL_MEM_ALLOCATION_TYPE_PINNED) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: poolProps->allocType {} is not "
                               "ACL_MEM_ALLOCATION_TYPE_PINNED (0)",
                               fn, static_cast<int>(poolProps->allocType));
    }
    if (poolProps->handleType != ACL_MEM_HANDLE_TYPE_NONE &&
        poolProps->handleType != ACL_MEM_HANDLE_TYPE_POSIX) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: poolProps->handleType {} is not an aclrtMemHandleType", fn,
                               static_cast<int>(poolProps->handleType));
    }
    if (poolProps->location.type != ACL_MEM_LOCATION_TYPE_DEVICE) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: poolProps->location.type {} is not "
                               "ACL_MEM_LOCATION_TYPE_DEVICE (1)",
                               fn, static_cast<int>(poolProps->location.type));
    }
    for (unsigned char byte : poolProps->reserved) {
      if (byte != 0) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: poolProps->reserved must be all zero", fn);
      }
    }
    return PoolRegistry::get().create(*poolProps, memPool);
  });
}

aclError aclrtMemPoolDestroy(const aclrtMemPool memPool) {
  return apiCall("aclrtMemPoolDestroy",
                 [&]() -> Outcome { return PoolRegistry::get().destroy(memPool); });
}

aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value) {
  return apiCall("aclrtMemPoolSetAttr", [&]() -> Outcome {
    return PoolRegistry::get().setAttribute(memPool, attr, value);
  });
}

aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value) {
  return apiCall("aclrtMemPoolGetAttr", [&]() -> Outcome {
    return PoolRegistry::get().getAttribute(memPool, attr, value);
  });
}

aclError aclrtMemPoolMallocAsync(void** ptr, size_t size, aclrtMemPool memPool,
                                 aclrtStream stream) {
  const char* fn = "aclrtMemPoolMallocAsync";
  return apiCall(fn, [&]() -> Outcome {
    if (ptr == nullptr) return nullArgument(fn, "ptr");
    if (memPool == nullptr) return nullArgument(fn, "memPool");
    if (stream == nullptr) return nullArgument(fn, "stream");
    if (size == 0) {  // as in CANN: nothing asked, nothing given
      *ptr = nullptr;
      return Status::Ok();
    }
    return PoolRegistry::get().allocate(ptr, size, memPool, toStream(stream));
  });
}

aclError aclrtMemPoolFreeAsync(void* ptr, aclrtStream stream) {
  return apiCall("aclrtMemPoolFreeAsync", [&]() -> Outcome { return freeAsync(ptr, stream); });
}

aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep) {
  return apiCall("aclrtMemPoolTrimTo",
                 [&]() -> Outcome { return PoolRegistry::get().trim(memPool, minBytesToKeep); });
}
