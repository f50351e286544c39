// Host memory that device calls accept too: ranges registered with hostRegister
// (aclrtHostRegister) and managed memory (managedMalloc, aclrtMemAllocManaged). The
// emulated devices compute on host RAM, so such memory needs no second mapping: the
// host address is the device address, and classify() reports it so that every check
// of the runtime accepts it on either side of a copy.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "cohort/runtime.h"
#include "runtime/device.h"
#include "runtime/memory_pool.h"

namespace cohort::runtime {

/// Process-wide, thread-safe. Registrations last until hostUnregister; the managed pool
/// (created on first use) until exit, like the pinned host pool.
class HostMemory {
 public:
  static HostMemory& get();

  Status registerRange(void* ptr, std::size_t size, bool mapped, int device);
  Status unregisterRange(void* ptr);
  Status registration(const void* ptr, HostRegistration* out);

  Status allocateManaged(std::size_t size, void** ptr);
  /// kInvalidPointer / kDoubleFree like a device pool's free.
  Status freeManaged(void* ptr);

  /// Fills *info for managed memory and registered plain host memory; false for
  /// anything else.
  bool classify(const void* p, PointerInfo* info);
  /// True when p (pinned host memory) lies in a registration made with `mapped`.
  bool mappedRegistration(const void* p);

 private:
  HostMemory() = default;
  struct Range {
    std::size_t size;
    bool mapped;
    int device;
  };
  // The registration containing p, or ranges_.end(). Needs mu_.
  std::map<std::uintptr_t, Range>::const_iterator findLocked(const void* p) const;

  std::mutex mu_;
  std::map<std::uintptr_t, Range> ranges_;  // by start address
  std::atomic<std::size_t> rangeCount_{0};  // ranges_.size(), readable without mu_
  std::unique_ptr<MemoryPool> managed_;
  std::atomic<MemoryPool*> managedPool_{nullptr};  // managed_, readable without mu_
};

}  // namespace cohort::runtime
