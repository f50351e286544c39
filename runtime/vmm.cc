#include "runtime/vmm.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

#include "common/error.h"
#include "runtime/api.h"
#include "runtime/memory_generation.h"
#include "runtime/memory_pool.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000  // Linux 4.17; older kernels take it as a hint
#endif

namespace cohort::runtime {

namespace {
constexpr std::size_t kGranularity = 2 << 20;

bool aligned(std::size_t v) { return v % kGranularity == 0; }
std::uintptr_t toAddress(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
void* pointer(std::uintptr_t a) { return reinterpret_cast<void*>(a); }

int protection(VmmAccess access) {
  switch (access) {
    case VmmAccess::kNone: return PROT_NONE;
    case VmmAccess::kRead: return PROT_READ;
    case VmmAccess::kReadWrite: return PROT_READ | PROT_WRITE;
  }
  return PROT_NONE;
}

const char* accessName(VmmAccess access) {
  switch (access) {
    case VmmAccess::kNone: return "no";
    case VmmAccess::kRead: return "read-only";
    case VmmAccess::kReadWrite: return "read-write";
  }
  return "unknown";
}

// Back to reserved addresses with nothing behind them.
void clear(std::uintptr_t at, std::size_t size) {
  mmap(pointer(at), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
       0);
}
}  // namespace

VirtualMemory& VirtualMemory::get() {
  static auto* vm = new VirtualMemory();  // used until exit
  return *vm;
}

Status VirtualMemory::reserve(std::size_t size, std::size_t alignment, void* start, void** va) {
  if (va == nullptr || size == 0 || !aligned(size)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "reserve: size {} is not a positive multiple of the granularity ({} bytes)",
                     size, kGranularity);
  }
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return makeError(ErrorCode::kInvalidArgument, "reserve: alignment {} is not a power of two",
                     alignment);
  }
  const std::size_t align = std::max(alignment, kGranularity);
  std::uintptr_t at = 0;
  if (start != nullptr) {
    // Exactly there, or not at all: the program lays out its addresses itself.
    if (toAddress(start) % align != 0) {
      return makeError(ErrorCode::kInvalidArgument, "reserve: start {} is not aligned to {} bytes",
                       start, align);
    }
    void* p = mmap(start, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    const int err = errno;
    if (p != MAP_FAILED && p != start) munmap(p, size);
    if (p == MAP_FAILED && err != EEXIST) {
      return systemError(err, fmt::format("reserve: {} bytes at {}", size, start));
    }
    if (p != start) {
      return makeError(ErrorCode::kInvalidArgument,
                       "reserve: [{}, +{}) is not free (memory of this process is there)", start,
                       size);
    }
    at = toAddress(p);
  } else {
    // Over-reserve to align the start, then give back the slack on both sides.
    const std::size_t span = size + align;
    void* raw = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return systemError(errno, fmt::format("reserve: {} bytes", size));
    at = (toAddress(raw) + align - 1) / align * align;
    if (at > toAddress(raw)) munmap(raw, at - toAddress(raw));
    const std::uintptr_t end = toAddress(raw) + span;
    if (end > at + size) munmap(pointer(at + size), end - at - size);
  }
  std::lock_guard<std::mutex> lock(mu_);
  reservations_[at] = size;
  *va = pointer(at);
  noteMemoryChange();
  return Status::Ok();
}

Status VirtualMemory::release(void* va) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reservations_.find(toAddress(va));
  if (it == reservations_.end()) {
    return makeError(ErrorCode::kInvalidPointer, "release: {} is not the start of a reservation",
                     va);
  }
  auto m = mappings_.lower_bound(it->first);
  if (m != mappings_.end() && m->first < it->first + it->second) {
    return makeError(ErrorCode::kInvalidUsage,
                     "release: the reservation at {} still holds a mapping at {:#x} (unmap it "
                     "first)", va, m->first);
  }
  munmap(va, it->second);
  reservations_.erase(it);
  noteMemoryChange();
  return Status::Ok();
}

Status VirtualMemory::create(Device* device, std::size_t size, std::uint64_t attributes,
                             PhysicalMemory** out) {
  if (out == nullptr || size == 0 || !aligned(size)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "physical allocation: size {} is not a positive multiple of the granularity "
                     "({} bytes)", size, kGranularity);
  }
  MemoryPool* pool = device->pool();
  if (pool == nullptr) {
    return makeError(ErrorCode::kInvalidDevice, "physical allocation: device {} is not set",
                     device->id());
  }
  std::lock_guard<std::mutex> lock(mu_);
  sweepLocked();  // blocks importers gave back count again
  void* block = nullptr;
  COHORT_RETURN_IF_ERROR(pool->allocate(size, &block));
  auto* mem = new PhysicalMemory{device, size, attributes, pool->fd(),
                                 static_cast<std::uint64_t>(static_cast<char*>(block) -
                                                            pool->base())};
  mem->block = static_cast<char*>(block);
  mem->resetCount = device->resetCount.load();
  blocks_.insert(mem);
  *out = mem;
  return Status::Ok();
}

Status VirtualMemory::heldLocked(const PhysicalMemory* mem, const char* what) {
  auto it = blocks_.find(const_cast<PhysicalMemory*>(mem));
  if (it == blocks_.end() || (*it)->references == 0) {
    return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live physical allocation", what,
                     static_cast<const void*>(mem));
  }
  return Status::Ok();
}

Status VirtualMemory::destroy(PhysicalMemory* mem) {
  std::lock_guard<std::mutex> lock(mu_);
  COHORT_RETURN_IF_ERROR(heldLocked(mem, "free physical"));
  --mem->references;
  dropIfUnusedLocked(mem);
  sweepLocked();
  return Status::Ok();
}

void VirtualMemory::dropIfUnusedLocked(PhysicalMemory* mem) {
  if (mem->references > 0 || mem->mappings > 0) return;
  blocks_.erase(mem);
  if (mem->imported) {
    endImportLocked(mem);
  } else if (mem->record != nullptr) {
    endExportLocked(mem);
  } else {
    freeBlockLocked(mem);
    delete mem;
  }
}

void VirtualMemory::freeBlockLocked(PhysicalMemory* mem) {
  // A reset of the device released every block of its pool already.
  if (mem->device->resetCount.load() != mem->resetCount) return;
  (void)mem->device->pool()->free(mem->block);
}

Status VirtualMemory::retain(const void* va, PhysicalMemory** out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mappingAtLocked(va);
  if (it == mappings_.end()) {
    return makeError(ErrorCode::kInvalidPointer, "retain: {} is not in a mapping", va);
  }
  ++it->second.mem->references;
  *out = it->second.mem;
  return Status::Ok();
}

Status VirtualMemory::info(const PhysicalMemory* mem, PhysicalMemoryInfo* out) {
  std::lock_guard<std::mutex> lock(mu_);
  COHORT_RETURN_IF_ERROR(heldLocked(mem, "physical allocation"));
  out->device = mem->device->id();
  out->size = mem->size;
  out->attributes = mem->attributes;
  out->imported = mem->imported;
  return Status::Ok();
}

VirtualMemory::MappingMap::iterator VirtualMemory::mappingAtLocked(const void* p) {
  auto it = mappings_.upper_bound(toAddress(p));
  if (it == mappings_.begin()) return mappings_.end();
  --it;
  return toAddress(p) < it->first + it->second.size ? it : mappings_.end();
}

Status VirtualMemory::map(void* va, std::size_t size, std::size_t offset, PhysicalMemory* mem,
                          VmmAccess access) {
  std::lock_guard<std::mutex> lock(mu_);
  COHORT_RETURN_IF_ERROR(heldLocked(mem, "map"));
  return mapLocked(va, size, offset, mem, access);
}

Status VirtualMemory::mapLocked(void* va, std::size_t size, std::size_t offset,
                                PhysicalMemory* mem, VmmAccess access) {
  if (size == 0 || !aligned(size) || !aligned(offset) || offset > mem->size ||
      size > mem->size - offset) {
    return makeError(ErrorCode::kInvalidArgument,
                     "map: {} bytes from offset {} of a {}-byte allocation (both multiples of "
                     "{} bytes, within the allocation)", size, offset, mem->size, kGranularity);
  }
  const std::uintptr_t at = toAddress(va);
  auto r = reservations_.upper_bound(at);
  if (r == reservations_.begin() || (--r, at + size > r->first + r->second) ||
      !aligned(at - r->first)) {
    return makeError(ErrorCode::kInvalidPointer,
                     "map: [{}, +{}) is not inside a reservation at a granularity boundary", va,
                     size);
  }
  auto next = mappings_.lower_bound(at);
  const bool overlapsNext = next != mappings_.end() && next->first < at + size;
  const bool overlapsPrev = next != mappings_.begin() &&
                            std::prev(next)->first + std::prev(next)->second.size > at;
  if (overlapsNext || overlapsPrev) {
    return makeError(ErrorCode::kInvalidUsage, "map: [{}, +{}) overlaps a mapping", va, size);
  }
  if (mmap(va, size, protection(access), MAP_SHARED | MAP_FIXED, mem->fd,
           static_cast<off_t>(mem->fileOffset + offset)) == MAP_FAILED) {
    const int err = errno;
    clear(at, size);
    return systemError(err, fmt::format("map: mmap of {} bytes at {}", size, va));
  }
  mappings_[at] = Mapping{size, mem, offset, access};
  ++mem->mappings;
  noteMemoryChange();
  return Status::Ok();
}

Status VirtualMemory::mapAlias(void* dst, const void* src, std::size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = reservations_.find(toAddress(dst));
  if (r == reservations_.end() || size == 0 || size > r->second) {
    return makeError(ErrorCode::kInvalidPointer,
                     "map alias: {} is not the start of a reservation of at least {} bytes", dst,
                     size);
  }
  // What is mapped at src, piece by piece, checked whole before anything is mapped.
  std::vector<Mapping> pieces;
  auto it = mappings_.find(toAddress(src));
  for (std::size_t done = 0; done < size; done += pieces.back().size, ++it) {
    if (it == mappings_.end() || it->first != toAddress(src) + done ||
        done + it->second.size > size) {
      return makeError(ErrorCode::kInvalidPointer,
                       "map alias: [{}, +{}) is not whole mappings back to back from its start "
                       "(at +{})", src, size, done);
    }
    pieces.push_back(it->second);
  }
  std::size_t done = 0;
  for (std::size_t k = 0; k < pieces.size(); done += pieces[k++].size) {
    Status s = mapLocked(static_cast<char*>(dst) + done, pieces[k].size, pieces[k].offset,
                         pieces[k].mem, VmmAccess::kReadWrite);
    if (!s.ok()) {
      for (std::size_t back = 0, j = 0; j < k; back += pieces[j++].size) {
        unmapLocked(mappings_.find(toAddress(dst) + back));
      }
      return s;
    }
  }
  return Status::Ok();
}

Status VirtualMemory::unmap(void* va) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mappings_.find(toAddress(va));
  if (it == mappings_.end()) {
    return makeError(ErrorCode::kInvalidPointer, "unmap: {} is not the start of a mapping", va);
  }
  unmapLocked(it);
  return Status::Ok();
}

void VirtualMemory::unmapLocked(MappingMap::iterator it) {
  clear(it->first, it->second.size);
  PhysicalMemory* mem = it->second.mem;
  --mem->mappings;
  mappings_.erase(it);
  dropIfUnusedLocked(mem);  // a freed allocation goes with its last mapping
  noteMemoryChange();
}

Status VirtualMemory::setAccess(void* va, std::size_t size, VmmAccess access) {
  std::lock_guard<std::mutex> lock(mu_);
  auto first = mappings_.find(toAddress(va));
  auto it = first;
  std::size_t done = 0;
  while (done < size && it != mappings_.end() && it->first == toAddress(va) + done &&
         done + it->second.size <= size) {
    done += it->second.size;
    ++it;
  }
  if (size == 0 || done != size) {
    return makeError(ErrorCode::kInvalidArgument,
                     "set access: [{}, +{}) is not whole mappings back to back from its start",
                     va, size);
  }
  if (mprotect(va, size, protection(access)) != 0) {
    return systemError(errno, fmt::format("set access: mprotect of {} bytes at {}", size, va));
  }
  for (it = first; it != mappings_.end() && it->first < toAddress(va) + size; ++it) {
    it->second.access = access;
  }
  noteMemoryChange();
  return Status::Ok();
}

Status VirtualMemory::lookup(const void* va, VmmMapping* out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mappingAtLocked(va);
  if (it == mappings_.end()) {
    return makeError(ErrorCode::kInvalidPointer, "{} is not in a mapping", va);
  }
  *out = VmmMapping{pointer(it->first), it->second.size, it->second.mem, it->second.offset,
                    it->second.access};
  return Status::Ok();
}

Status VirtualMemory::checkAccess(const void* p, std::size_t bytes, bool write,
                                  const char* what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mappings_.empty() || bytes == 0) return Status::Ok();
  const VmmAccess needed = write ? VmmAccess::kReadWrite : VmmAccess::kRead;
  const std::uintptr_t end = toAddress(p) + bytes;
  auto it = mappingAtLocked(p);
  if (it == mappings_.end()) it = mappings_.upper_bound(toAddress(p));
  for (; it != mappings_.end() && it->first < end; ++it) {
    if ((static_cast<int>(it->second.access) & static_cast<int>(needed)) ==
        static_cast<int>(needed)) {
      continue;
    }
    return makeError(ErrorCode::kInvalidPointer,
                     "{}: {} bytes at {} meet the mapping at {:#x}, which allows {} access (a "
                     "{} needs {}; see aclrtMemSetAccess)", what, bytes, p, it->first,
                     accessName(it->second.access), write ? "write" : "read",
                     write ? "READWRITE" : "READ");
  }
  return Status::Ok();
}

bool VirtualMemory::classify(const void* p, PointerInfo* info) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reservations_.empty()) return false;  // every mapping lies in a reservation
  auto it = mappingAtLocked(p);
  if (it == mappings_.end()) {
    // Reserved addresses with nothing mapped there: no memory a copy may touch
    // (they fault), so no live allocation.
    auto r = reservations_.upper_bound(toAddress(p));
    if (r == reservations_.begin() || (--r, toAddress(p) >= r->first + r->second)) return false;
    info->kind = PointerInfo::Kind::kMapped;
    info->device = -1;
    info->live = false;
    info->label = "reserved addresses with nothing mapped there";
    return true;
  }
  // The contiguous run of mappings of the same device around p.
  const int device = it->second.mem->device->id();
  auto first = it;
  while (first != mappings_.begin()) {
    auto before = std::prev(first);
    if (before->first + before->second.size != first->first ||
        before->second.mem->device->id() != device) {
      break;
    }
    first = before;
  }
  std::uintptr_t end = it->first + it->second.size;
  for (auto after = std::next(it); after != mappings_.end() && after->first == end &&
                                   after->second.mem->device->id() == device;
       ++after) {
    end += after->second.size;
  }
  info->kind = PointerInfo::Kind::kMapped;
  info->device = device;
  info->live = true;
  info->base = reinterpret_cast<char*>(first->first);
  info->size = end - first->first;
  info->label = "mapped device memory";
  return true;
}

}  // namespace cohort::runtime
