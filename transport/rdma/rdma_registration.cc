#include "transport/rdma/rdma_registration.h"

#include <sys/mman.h>

#include <cerrno>

#include "common/error.h"

namespace cohort::transport::rdma {

Status RegisteredBuffer::create(std::shared_ptr<Registrar> registrar, std::size_t length,
                                int access, std::unique_ptr<RegisteredBuffer>* out) {
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return systemError(errno, fmt::format("mmap of {} bytes", length));
  MemoryRegion region;
  Status s = registrar->registerMemory(p, length, access, &region);
  if (!s.ok()) {
    munmap(p, length);
    return s;
  }
  out->reset(new RegisteredBuffer(std::move(registrar), region));
  return Status::Ok();
}

RegisteredBuffer::~RegisteredBuffer() {
  registrar_->deregister(region_);
  munmap(region_.addr, region_.length);
}

RegistrationCache::~RegistrationCache() {
  for (auto& [start, e] : entries_) registrar_->deregister(e.region);
}

RegistrationCache::Map::iterator RegistrationCache::findCovering(std::uintptr_t start,
                                                                 std::uintptr_t end) {
  // Entries starting at or before `start`; the one covering `end` wins.
  auto it = entries_.upper_bound(start);
  while (it != entries_.begin()) {
    --it;
    if (it->second.end >= end) return it;
  }
  return entries_.end();
}

Status RegistrationCache::acquire(const void* addr, std::size_t length, const void* regionBase,
                                  std::size_t regionLength, Lease* out) {
  const auto start = reinterpret_cast<std::uintptr_t>(addr);
  const auto base = reinterpret_cast<std::uintptr_t>(regionBase);
  if (start < base || start + length > base + regionLength) {
    return makeError(ErrorCode::kInvalidArgument,
                     "rdma registration: [{:#x}, +{}) lies outside its allocation [{:#x}, +{})",
                     start, length, base, regionLength);
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = findCovering(start, start + length);
  if (it == entries_.end()) {
    MemoryRegion region;
    COHORT_RETURN_IF_ERROR(
        registrar_->registerMemory(const_cast<void*>(regionBase), regionLength, 0, &region));
    ++registrations_;
    it = entries_.emplace(base, Entry{base + regionLength, region, nextId_++, 0, 0});
  }
  it->second.uses++;
  it->second.lastUse = ++tick_;
  *out = Lease{it->second.id, it->second.region.lkey};
  evictIdle();
  return Status::Ok();
}

void RegistrationCache::release(const Lease& lease) {
  if (lease.id == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [start, e] : entries_) {
    if (e.id == lease.id) {
      e.uses--;
      break;
    }
  }
  evictIdle();
}

void RegistrationCache::evictIdle() {
  while (entries_.size() > capacity_) {
    auto victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.uses == 0 &&
          (victim == entries_.end() || it->second.lastUse < victim->second.lastUse)) {
        victim = it;
      }
    }
    if (victim == entries_.end()) return;  // all in use: over capacity until released
    registrar_->deregister(victim->second.region);
    entries_.erase(victim);
  }
}

std::size_t RegistrationCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::uint64_t RegistrationCache::registrations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return registrations_;
}

}  // namespace cohort::transport::rdma
