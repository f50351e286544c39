#include "runtime/host_memory.h"

#include <unistd.h>

#include "common/error.h"
#include "runtime/api.h"
#include "runtime/memory_generation.h"

namespace cohort::runtime {

namespace {
constexpr std::size_t kManagedCapacity = 64ull << 30;
constexpr std::size_t kManagedGranule = 2u << 20;

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
std::size_t pageSize() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
}  // namespace

HostMemory& HostMemory::get() {
  static auto* memory = new HostMemory();  // used until exit, like the device pools
  return *memory;
}

std::map<std::uintptr_t, HostMemory::Range>::const_iterator HostMemory::findLocked(
    const void* p) const {
  auto it = ranges_.upper_bound(address(p));
  if (it == ranges_.begin()) return ranges_.end();
  --it;
  return address(p) < it->first + it->second.size ? it : ranges_.end();
}

Status HostMemory::registerRange(void* ptr, std::size_t size, bool mapped, int device) {
  if (ptr == nullptr || size == 0) {
    return Status(ErrorCode::kInvalidArgument, "hostRegister: null pointer or zero size");
  }
  if (address(ptr) % pageSize() != 0) {
    return makeError(ErrorCode::kInvalidArgument,
                     "hostRegister: {} is not aligned to the {}-byte page size", ptr, pageSize());
  }
  if (address(ptr) + size < address(ptr)) {
    return makeError(ErrorCode::kInvalidArgument, "hostRegister: {} bytes at {} wrap around", size,
                     ptr);
  }
  // Only host memory the runtime does not already treat as device memory.
  DeviceManager& m = DeviceManager::get();
  for (const void* end : {static_cast<const void*>(ptr),
                          static_cast<const void*>(static_cast<char*>(ptr) + size - 1)}) {
    const PointerInfo info = m.classify(end);
    if (info.kind != PointerInfo::Kind::kHost && info.kind != PointerInfo::Kind::kPinnedHost) {
      return makeError(ErrorCode::kInvalidArgument, "hostRegister: {} is {}, not host memory", end,
                       info.label);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto next = ranges_.lower_bound(address(ptr));
  if (next != ranges_.end() && next->first < address(ptr) + size) {
    return makeError(ErrorCode::kInvalidArgument,
                     "hostRegister: [{}, +{}) overlaps the registration at {:#x}", ptr, size,
                     next->first);
  }
  auto prev = findLocked(ptr);
  if (prev != ranges_.end()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "hostRegister: {} lies in the registration at {:#x} ({} bytes)", ptr,
                     prev->first, prev->second.size);
  }
  ranges_[address(ptr)] = Range{size, mapped, device};
  rangeCount_.store(ranges_.size(), std::memory_order_release);
  noteMemoryChange();
  return Status::Ok();
}

Status HostMemory::unregisterRange(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ranges_.find(address(ptr));
  if (it == ranges_.end()) {
    return makeError(ErrorCode::kInvalidPointer,
                     "hostUnregister: {} is not the start of a registered range", ptr);
  }
  ranges_.erase(it);
  rangeCount_.store(ranges_.size(), std::memory_order_release);
  noteMemoryChange();
  return Status::Ok();
}

Status HostMemory::registration(const void* ptr, HostRegistration* out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = findLocked(ptr);
  if (it == ranges_.end()) {
    return makeError(ErrorCode::kInvalidPointer, "{} is not in a registered host range", ptr);
  }
  out->base = reinterpret_cast<void*>(it->first);
  out->size = it->second.size;
  out->mapped = it->second.mapped;
  out->device = it->second.device;
  return Status::Ok();
}

Status HostMemory::allocateManaged(std::size_t size, void** ptr) {
  if (size == 0 || size > kManagedCapacity) {
    return makeError(ErrorCode::kInvalidArgument, "managedMalloc: size {} is not in (0, {}] bytes",
                     size, kManagedCapacity);
  }
  MemoryPool* pool = managedPool_.load(std::memory_order_acquire);
  if (pool == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (managed_ == nullptr) {
      COHORT_RETURN_IF_ERROR(MemoryPool::create("managed memory", kManagedCapacity, &managed_));
      managedPool_.store(managed_.get(), std::memory_order_release);
      noteMemoryChange();  // its addresses are managed memory from now on
    }
    pool = managed_.get();
  }
  // Whole 2 MiB granules, as on the device, so that advice can be given per granule.
  const std::size_t rounded = (size + kManagedGranule - 1) / kManagedGranule * kManagedGranule;
  return pool->allocate(rounded, ptr);
}

Status HostMemory::freeManaged(void* ptr) {
  MemoryPool* pool = managedPool_.load(std::memory_order_acquire);
  if (pool == nullptr || !pool->contains(ptr)) {
    return makeError(ErrorCode::kInvalidPointer, "{} is not managed memory", ptr);
  }
  return pool->free(ptr);
}

bool HostMemory::classify(const void* p, PointerInfo* info) {
  MemoryPool* pool = managedPool_.load(std::memory_order_acquire);
  if (pool != nullptr && pool->contains(p)) {
    info->kind = PointerInfo::Kind::kManaged;
    info->label = "managed memory";
    info->eitherSide = true;
    info->live = pool->findAllocation(p, &info->base, &info->size);
    return true;
  }
  if (rangeCount_.load(std::memory_order_acquire) == 0) return false;  // the common case
  std::lock_guard<std::mutex> lock(mu_);
  auto it = findLocked(p);
  if (it == ranges_.end()) return false;
  info->kind = PointerInfo::Kind::kRegistered;
  info->label = it->second.mapped ? "registered host memory" : "page-locked host memory";
  info->device = it->second.device;
  info->eitherSide = it->second.mapped;
  info->live = true;
  info->base = reinterpret_cast<char*>(it->first);
  info->size = it->second.size;
  return true;
}

bool HostMemory::mappedRegistration(const void* p) {
  if (rangeCount_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = findLocked(p);
  return it != ranges_.end() && it->second.mapped;
}

Status hostRegister(void* ptr, std::size_t size, bool mapped, int device) {
  return apiCall(
      [&](DeviceManager&) { return HostMemory::get().registerRange(ptr, size, mapped, device); });
}

Status hostUnregister(void* ptr) {
  return apiCall([&](DeviceManager&) { return HostMemory::get().unregisterRange(ptr); });
}

Status hostRegistration(const void* ptr, HostRegistration* out) {
  return apiCall([&](DeviceManager&) {
    if (out == nullptr) return Status(ErrorCode::kInvalidArgument, "hostRegistration: null output");
    return HostMemory::get().registration(ptr, out);
  });
}

Status managedMalloc(void** ptr, std::size_t size) {
  return apiCall([&](DeviceManager&) {
    if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "managedMalloc: ptr is null");
    return HostMemory::get().allocateManaged(size, ptr);
  });
}

}  // namespace cohort::runtime
