// Registered memory. A Registrar registers ranges with the device (ibv_reg_mr,
// or a fake in tests); RegisteredBuffer owns memory it allocated and
// registered (rings, staging); RegistrationCache keeps registrations of
// caller memory keyed by address range, so a buffer sent again costs a lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "cohort/status.h"

namespace cohort::transport::rdma {

struct MemoryRegion {
  void* addr = nullptr;
  std::size_t length = 0;
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  void* handle = nullptr;  // the registrar's (an ibv_mr*)
};

/// Thread-safe.
class Registrar {
 public:
  virtual ~Registrar() = default;
  /// `access` is an ibv_access_flags mask.
  virtual Status registerMemory(void* addr, std::size_t length, int access, MemoryRegion* out) = 0;
  virtual void deregister(const MemoryRegion& region) = 0;
};

/// Page-aligned, zeroed memory registered for its lifetime. Owns the memory and
/// the registration; keeps the registrar alive. Not copyable.
class RegisteredBuffer {
 public:
  static Status create(std::shared_ptr<Registrar> registrar, std::size_t length, int access,
                       std::unique_ptr<RegisteredBuffer>* out);
  ~RegisteredBuffer();
  RegisteredBuffer(const RegisteredBuffer&) = delete;
  RegisteredBuffer& operator=(const RegisteredBuffer&) = delete;

  std::uint8_t* data() const { return static_cast<std::uint8_t*>(region_.addr); }
  std::size_t length() const { return region_.length; }
  const MemoryRegion& region() const { return region_; }

 private:
  RegisteredBuffer(std::shared_ptr<Registrar> registrar, MemoryRegion region)
      : registrar_(std::move(registrar)), region_(region) {}
  std::shared_ptr<Registrar> registrar_;
  MemoryRegion region_;
};

/// Registrations of caller memory, keyed by address range. A lookup that hits
/// an entry covering the range reuses it; a miss registers the caller's whole
/// allocation. Entries in use (acquired, not yet released) are never evicted;
/// beyond `capacity` entries the least recently used idle one is. Only memory
/// whose pages never change while mapped (the runtime's pooled device and
/// pinned segments) may go through the cache. Thread-safe.
class RegistrationCache {
 public:
  struct Lease {
    std::uint64_t id = 0;  // 0 = none
    std::uint32_t lkey = 0;
  };

  RegistrationCache(std::shared_ptr<Registrar> registrar, std::size_t capacity)
      : registrar_(std::move(registrar)), capacity_(capacity) {}
  ~RegistrationCache();

  /// A registration covering [addr, addr+length); on a miss registers
  /// [regionBase, regionBase+regionLength), which must contain it.
  Status acquire(const void* addr, std::size_t length, const void* regionBase,
                 std::size_t regionLength, Lease* out);
  void release(const Lease& lease);

  std::size_t size() const;
  std::uint64_t registrations() const;  // misses so far

 private:
  struct Entry {
    std::uintptr_t end;
    MemoryRegion region;
    std::uint64_t id;
    int uses;
    std::uint64_t lastUse;
  };
  using Map = std::multimap<std::uintptr_t, Entry>;  // by start address
  Map::iterator findCovering(std::uintptr_t start, std::uintptr_t end);
  void evictIdle();

  std::shared_ptr<Registrar> registrar_;
  const std::size_t capacity_;
  mutable std::mutex mu_;
  Map entries_;
  std::uint64_t nextId_ = 1;
  std::uint64_t tick_ = 0;
  std::uint64_t registrations_ = 0;
};

}  // namespace cohort::transport::rdma
