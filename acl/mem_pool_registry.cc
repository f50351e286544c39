// The memory pools' registry: creation, destruction, attributes, trimming, and the
// bookkeeping every call starts with (device resets, completed frees, the release
// threshold). See mem_pool_registry.h.
#include "acl/mem_pool_registry.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace cohort::acl::mempool {

namespace rt = cohort::runtime;

PoolRegistry& PoolRegistry::get() {
  static PoolRegistry* pools = new PoolRegistry;  // never destroyed (see the class)
  return *pools;
}

Outcome PoolRegistry::create(const aclrtMemPoolProps& props, aclrtMemPool* out) {
  const char* fn = "aclrtMemPoolCreate";
  const int device = static_cast<int>(props.location.id);
  rt::DeviceInfo info;
  COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(device, &info));
  std::uint64_t resets = 0;
  COHORT_RETURN_IF_ERROR(rt::deviceResetCount(device, &resets));
  if (props.maxSize > SIZE_MAX - (kBlockBytes - 1)) {
    return rtInvalid(cohort::makeError(
        ErrorCode::kInvalidArgument, "{}: poolProps->maxSize {} is too large", fn, props.maxSize));
  }
  const std::size_t size =
      props.maxSize == 0 ? info.memoryTotal / kBlockBytes * kBlockBytes : roundUp(props.maxSize);
  if (size > info.memoryTotal || size == 0) {
    return rtInvalid(cohort::makeError(
        ErrorCode::kInvalidArgument,
        "{}: poolProps->maxSize {} ({} bytes in 2 MiB blocks) does not fit device {}'s {} "
        "bytes",
        fn, props.maxSize, size, device, info.memoryTotal));
  }
  auto pool = std::make_shared<Pool>();
  pool->device = device;
  pool->resets = resets;
  pool->maxSize = size;
  std::lock_guard<std::mutex> lock(mu_);
  live_[pool.get()] = pool;
  *out = pool.get();
  return Status::Ok();
}

Outcome PoolRegistry::destroy(aclrtMemPool handle) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Pool> pool;
  ACL_RETURN_IF_FAILED(findLocked("aclrtMemPoolDestroy", handle, &pool));
  live_.erase(pool.get());
  pool->destroyed = true;
  refreshLocked(*pool);  // releases the idle blocks
  if (!pool->blocks.empty()) zombies_.insert(pool);
  return Status::Ok();
}

Outcome PoolRegistry::setAttribute(aclrtMemPool handle, aclrtMemPoolAttr attr, const void* value) {
  const char* fn = "aclrtMemPoolSetAttr";
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Pool> pool;
  ACL_RETURN_IF_FAILED(findLocked(fn, handle, &pool));
  if (value == nullptr) return rtInvalid(nullArgument(fn, "value"));
  refreshLocked(*pool);
  if (attr < ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
      attr > ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH) {
    return rtInvalid(badAttribute(fn, attr));  // before reading a value of unknown type
  }
  std::uint32_t flag = 0;
  std::uint64_t number = 0;
  std::memcpy(isFlag(attr) ? static_cast<void*>(&flag) : static_cast<void*>(&number), value,
              isFlag(attr) ? sizeof flag : sizeof number);
  switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      pool->followEventDependencies = flag != 0 ? 1 : 0;
      return Status::Ok();
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC:
      pool->allowOpportunistic = flag != 0 ? 1 : 0;
      return Status::Ok();
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      pool->allowInternalDependencies = flag != 0 ? 1 : 0;
      return Status::Ok();
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
      if (number > pool->maxSize) {
        return rtInvalid(cohort::makeError(ErrorCode::kInvalidArgument,
                                           "{}: release threshold {} exceeds the pool's size {}",
                                           fn, number, pool->maxSize));
      }
      pool->releaseThreshold = number;
      return Status::Ok();
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
      if (number != 0) {
        return rtInvalid(cohort::makeError(ErrorCode::kInvalidArgument,
                                           "{}: a high-water mark can only be set to 0 (to "
                                           "restart it), not {}",
                                           fn, number));
      }
      // The peak since now is what is reserved or used now.
      if (attr == ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH) {
        pool->reservedHigh = pool->reserved;
      } else {
        pool->usedHigh = pool->used;
      }
      return Status::Ok();
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT:
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT:
      return rtInvalid(cohort::makeError(ErrorCode::kInvalidArgument,
                                         "{}: attribute {} is read-only", fn,
                                         static_cast<int>(attr)));
  }
  return rtInvalid(badAttribute(fn, attr));
}

Outcome PoolRegistry::getAttribute(aclrtMemPool handle, aclrtMemPoolAttr attr, void* value) {
  const char* fn = "aclrtMemPoolGetAttr";
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Pool> pool;
  ACL_RETURN_IF_FAILED(findLocked(fn, handle, &pool));
  if (value == nullptr) return rtInvalid(nullArgument(fn, "value"));
  refreshLocked(*pool);
  std::uint32_t flag = 0;
  std::uint64_t number = 0;
  switch (attr) {
    case ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      flag = pool->followEventDependencies;
      break;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC:
      flag = pool->allowOpportunistic;
      break;
    case ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      flag = pool->allowInternalDependencies;
      break;
    case ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD:
      number = pool->releaseThreshold;
      break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT:
      number = pool->reserved;
      break;
    case ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH:
      number = pool->reservedHigh;
      break;
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT:
      number = pool->used;
      break;
    case ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH:
      number = pool->usedHigh;
      break;
    default:
      return rtInvalid(badAttribute(fn, attr));
  }
  if (isFlag(attr)) {
    std::memcpy(value, &flag, sizeof flag);
  } else {
    std::memcpy(value, &number, sizeof number);
  }
  return Status::Ok();
}

Outcome PoolRegistry::trim(aclrtMemPool handle, std::size_t keep) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Pool> pool;
  ACL_RETURN_IF_FAILED(findLocked("aclrtMemPoolTrimTo", handle, &pool));
  sweepZombiesLocked();
  refreshLocked(*pool);
  // Largest first, never below `keep`.
  for (auto it : idleLargestFirst(*pool)) {
    if (pool->reserved - it->second.size >= keep) releaseLocked(*pool, it);
  }
  return Status::Ok();
}

void PoolRegistry::poll(const std::shared_ptr<Pool>& pool) {
  std::lock_guard<std::mutex> lock(mu_);
  refreshLocked(*pool);
  if (pool->destroyed && pool->blocks.empty()) zombies_.erase(pool);
}

std::size_t PoolRegistry::roundUp(std::size_t bytes) {
  return (bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
}

bool PoolRegistry::isFlag(aclrtMemPoolAttr attr) {
  return attr == ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES ||
         attr == ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC ||
         attr == ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

Status PoolRegistry::badAttribute(const char* fn, aclrtMemPoolAttr attr) {
  return cohort::makeError(ErrorCode::kInvalidArgument,
                           "{}: attr {} is not an aclrtMemPoolAttr (1..8)", fn,
                           static_cast<int>(attr));
}

void PoolRegistry::noteHighs(Pool& pool) {
  pool.reservedHigh = std::max(pool.reservedHigh, pool.reserved);
  pool.usedHigh = std::max(pool.usedHigh, pool.used);
}

Outcome PoolRegistry::findLocked(const char* fn, aclrtMemPool handle, std::shared_ptr<Pool>* out) {
  if (handle == nullptr) return nullArgument(fn, "memPool");
  auto it = live_.find(static_cast<const Pool*>(handle));
  if (it == live_.end()) {
    return rtInvalid(cohort::makeError(ErrorCode::kInvalidArgument,
                                       "{}: memPool {} is not a live memory pool (destroyed, "
                                       "or not made by aclrtMemPoolCreate)",
                                       fn, handle));
  }
  *out = it->second;
  return Status::Ok();
}

void PoolRegistry::refreshLocked(Pool& pool) {
  std::uint64_t resets = 0;
  if (rt::deviceResetCount(pool.device, &resets).ok() && resets != pool.resets) {
    for (auto& [address, block] : pool.blocks) {
      owners_.erase(address);
      if (block.freed != nullptr) (void)rt::eventDestroy(block.freed);
    }
    if (!pool.blocks.empty()) {
      COHORT_LOG(kInfo, "acl",
                 "memory pool of device {}: the device was reset; its {} "
                 "block(s) went with it",
                 pool.device, pool.blocks.size());
    }
    pool.blocks.clear();
    pool.reserved = 0;
    pool.used = 0;
    pool.resets = resets;
    return;
  }
  bool completed = false;
  for (auto& [address, block] : pool.blocks) {
    if (block.state != BlockState::kFreeQueued || block.freed == nullptr) continue;
    if (rt::eventQuery(block.freed).code() == ErrorCode::kNotReady) continue;
    (void)rt::eventDestroy(block.freed);
    block.freed = nullptr;
    block.freeStream = nullptr;
    block.state = BlockState::kIdle;
    pool.used -= block.size;
    completed = true;
  }
  if (pool.destroyed) {
    releaseIdleLocked(pool, 0, pool.reserved);
  } else if (completed) {
    releaseIdleLocked(pool, pool.releaseThreshold, pool.reserved);
  }
}

std::vector<PoolRegistry::BlockIt> PoolRegistry::idleLargestFirst(Pool& pool) {
  std::vector<BlockIt> idle;
  for (BlockIt it = pool.blocks.begin(); it != pool.blocks.end(); ++it) {
    if (it->second.state == BlockState::kIdle) idle.push_back(it);
  }
  std::sort(idle.begin(), idle.end(),
            [](BlockIt a, BlockIt b) { return a->second.size > b->second.size; });
  return idle;
}

void PoolRegistry::releaseIdleLocked(Pool& pool, std::uint64_t keepIdle, std::uint64_t atLeast) {
  std::uint64_t released = 0;
  for (BlockIt it : idleLargestFirst(pool)) {
    if (pool.reserved - pool.used <= keepIdle || released >= atLeast) break;
    released += it->second.size;
    releaseLocked(pool, it);
  }
}

void PoolRegistry::releaseLocked(Pool& pool, BlockIt it) {
  const Status status = rt::deviceFree(it->first);
  if (!status.ok()) {
    COHORT_LOG(kWarn, "acl", "memory pool of device {}: releasing block {}: {}", pool.device,
               it->first, status.message());
  }
  owners_.erase(it->first);
  pool.reserved -= it->second.size;
  if (it->second.state != BlockState::kIdle) pool.used -= it->second.size;
  pool.blocks.erase(it);
}

void PoolRegistry::sweepZombiesLocked() {
  for (auto it = zombies_.begin(); it != zombies_.end();) {
    refreshLocked(**it);
    it = (*it)->blocks.empty() ? zombies_.erase(it) : std::next(it);
  }
}

}  // namespace cohort::acl::mempool
