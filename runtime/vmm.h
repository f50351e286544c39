// Virtual memory: address ranges reserved with nothing behind them, and physical
// allocations mapped into them, so that a program can grow one contiguous range of
// device memory piece by piece (aclrtReserveMemAddress, aclrtMallocPhysical,
// aclrtMapMem). A physical allocation is pages of a file: a block of a device pool's
// memfd, or, imported from another process of the node (vmm_share.cc), the same pages
// of that process's pool, opened through /proc. A mapping maps those pages MAP_SHARED,
// so every mapping of one allocation, in any process, is the same memory. Pointers in
// mappings are device memory for every check and copy; they have no (segment, offset)
// of their own, since adjacent mappings need not be adjacent in a pool, so transports
// stage them (memSegmentOffset refuses them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "cohort/runtime.h"
#include "runtime/device.h"

namespace cohort::runtime {

struct ShareRecord;  // vmm_share.cc

/// One physical allocation. Owned by VirtualMemory; alive while the program holds a
/// reference on it or a mapping uses it (then, when exported and still imported
/// elsewhere, kept as a zombie until no importer is left).
struct PhysicalMemory {
  Device* device;            // the creator's device, or the device an import was made for
  std::size_t size;
  std::uint64_t attributes;  // the creator's (vmmCreate), opaque
  int fd;                    // the file of the pages: the pool's, or ours on the exporter's
  std::uint64_t fileOffset;  // of the pages in that file
  char* block = nullptr;     // this process's pool block (null for imports)
  std::uint64_t resetCount = 0;  // the device's resetCount when the block was allocated
  int references = 1;
  int mappings = 0;
  // Sharing (vmm_share.cc): exported, our record (sharedAlloc); imported, the
  // exporter's record mapped here and the importer slot this process holds in it.
  ShareRecord* record = nullptr;
  std::uint64_t shareable = 0;
  bool imported = false;
  int slot = -1;
};

/// Process-wide, thread-safe (one mutex). Reservations, allocations and mappings live
/// until released, unmapped and dropped by the program (or the process ends).
class VirtualMemory {
 public:
  static VirtualMemory& get();

  Status reserve(std::size_t size, std::size_t alignment, void* start, void** va);
  Status release(void* va);
  Status create(Device* device, std::size_t size, std::uint64_t attributes,
                PhysicalMemory** out);
  Status destroy(PhysicalMemory* mem);
  Status retain(const void* va, PhysicalMemory** out);
  Status info(const PhysicalMemory* mem, PhysicalMemoryInfo* out);
  Status map(void* va, std::size_t size, std::size_t offset, PhysicalMemory* mem,
             VmmAccess access);
  Status mapAlias(void* dst, const void* src, std::size_t size);
  Status unmap(void* va);
  Status setAccess(void* va, std::size_t size, VmmAccess access);
  Status lookup(const void* va, VmmMapping* out);
  Status checkAccess(const void* p, std::size_t bytes, bool write, const char* what);

  // Sharing between processes (vmm_share.cc).
  Status exportShareable(PhysicalMemory* mem, bool checkPid, std::uint64_t* shareable);
  Status setImportPids(std::uint64_t shareable, const std::int32_t* pids, std::size_t count);
  Status importShareable(std::uint64_t shareable, Device* device, PhysicalMemory** out,
                         bool* denied);

  /// Fills *info for a pointer inside a mapping (the contiguous run of mappings around
  /// it is its allocation); false if p is in none.
  bool classify(const void* p, PointerInfo* info);

 private:
  VirtualMemory() = default;
  struct Mapping {
    std::size_t size;
    PhysicalMemory* mem;
    std::size_t offset;  // in mem
    VmmAccess access;
  };
  using MappingMap = std::map<std::uintptr_t, Mapping>;

  // A handle the program holds: alive and referenced.
  Status heldLocked(const PhysicalMemory* mem, const char* what);
  MappingMap::iterator mappingAtLocked(const void* p);
  Status mapLocked(void* va, std::size_t size, std::size_t offset, PhysicalMemory* mem,
                   VmmAccess access);
  void unmapLocked(MappingMap::iterator it);
  // Ends `mem` here once nothing uses it any more.
  void dropIfUnusedLocked(PhysicalMemory* mem);
  void freeBlockLocked(PhysicalMemory* mem);
  // vmm_share.cc: an exported allocation ends (zombie while imported), an import ends,
  // and zombies nobody imports any more are freed.
  void endExportLocked(PhysicalMemory* mem);
  void endImportLocked(PhysicalMemory* mem);
  void sweepLocked();

  std::mutex mu_;
  std::map<std::uintptr_t, std::size_t> reservations_;  // start -> size
  MappingMap mappings_;                                 // start -> mapping
  std::set<PhysicalMemory*> blocks_;                    // alive here
  std::map<std::uint64_t, PhysicalMemory*> exports_;    // shareable -> ours
  std::map<std::uint64_t, PhysicalMemory*> imports_;    // shareable -> import
  std::vector<PhysicalMemory*> zombies_;  // ended here, block kept for importers
};

}  // namespace cohort::runtime
