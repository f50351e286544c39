// Public memory functions (cohort/runtime.h): allocation, copies with their
// checks, pointer attributes, and export/import between processes.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime/api.h"
#include "runtime/host_memory.h"
#include "runtime/ipc_handle.h"
#include "runtime/memory_generation.h"
#include "runtime/node_registry.h"
#include "runtime/vmm.h"

namespace cohort::runtime {

namespace {

const char* kindName(MemcpyKind kind) {
  switch (kind) {
    case MemcpyKind::kHostToHost: return "host-to-host";
    case MemcpyKind::kHostToDevice: return "host-to-device";
    case MemcpyKind::kDeviceToHost: return "device-to-host";
    case MemcpyKind::kDeviceToDevice: return "device-to-device";
    case MemcpyKind::kDefault: return "default";
  }
  return "unknown";
}

bool isDeviceSide(const PointerInfo& info) {
  return info.kind == PointerInfo::Kind::kDevice || info.kind == PointerInfo::Kind::kImported ||
         info.kind == PointerInfo::Kind::kMapped;
}

// Whether a pointer may stand on the side of a copy that wants device (or host) memory.
bool fitsSide(const PointerInfo& info, bool wantDevice) {
  return info.eitherSide || isDeviceSide(info) == wantDevice;
}

// A known allocation must be live and hold `count` bytes from p.
Status checkExtent(const PointerInfo& info, const void* p, std::size_t count, const char* fn,
                   const char* role) {
  if (info.kind == PointerInfo::Kind::kHost) return Status::Ok();
  if (!info.live) {
    return makeError(ErrorCode::kInvalidPointer,
                     "{}: {} {} lies in {}{} but not in a live allocation (freed or never "
                     "allocated)", fn, role, p, info.label,
                     info.device >= 0 ? fmt::format(" of device {}", info.device) : "");
  }
  const std::size_t available = info.size - static_cast<std::size_t>(
                                                static_cast<const char*>(p) - info.base);
  if (count > available) {
    return makeError(ErrorCode::kSizeOverflow,
                     "{}: {} bytes at {} {} overrun its allocation ({} bytes left of {} at {})", fn,
                     count, role, p, available, info.size, static_cast<void*>(info.base));
  }
  return Status::Ok();
}

// Validates a copy; the pointers' descriptions go to `dstInfo` and `srcInfo` (when
// given, and count > 0).
Status checkCopy(DeviceManager& m, void* dst, std::size_t destMax, const void* src,
                 std::size_t count, MemcpyKind kind, const char* fn,
                 PointerInfo* dstInfo = nullptr, PointerInfo* srcInfo = nullptr) {
  if (static_cast<int>(kind) < 0 || static_cast<int>(kind) > 4) {
    return makeError(ErrorCode::kInvalidMemcpyKind, "{}: unknown kind {}", fn,
                     static_cast<int>(kind));
  }
  if (count == 0) return Status::Ok();
  if (dst == nullptr || src == nullptr) {
    return makeError(ErrorCode::kInvalidArgument, "{}: {} pointer is null", fn,
                     dst == nullptr ? "destination" : "source");
  }
  if (count > destMax) {
    return makeError(ErrorCode::kSizeOverflow, "{}: count {} exceeds destMax {}", fn, count,
                     destMax);
  }
  const PointerInfo d = m.classify(dst);
  const PointerInfo s = m.classify(src);
  if (dstInfo != nullptr) *dstInfo = d;
  if (srcInfo != nullptr) *srcInfo = s;
  if (kind != MemcpyKind::kDefault) {
    const bool wantDstDevice =
        kind == MemcpyKind::kHostToDevice || kind == MemcpyKind::kDeviceToDevice;
    const bool wantSrcDevice =
        kind == MemcpyKind::kDeviceToHost || kind == MemcpyKind::kDeviceToDevice;
    if (!fitsSide(d, wantDstDevice) || !fitsSide(s, wantSrcDevice)) {
      return makeError(ErrorCode::kInvalidMemcpyKind,
                       "{}: kind {} contradicts the pointers: destination {} is {}, source {} is {}",
                       fn, kindName(kind), dst, d.label, src, s.label);
    }
  }
  COHORT_RETURN_IF_ERROR(checkExtent(d, dst, count, fn, "destination"));
  COHORT_RETURN_IF_ERROR(checkExtent(s, src, count, fn, "source"));
  // Mappings may allow no access, or reads only (aclrtMemSetAccess): refused here rather
  // than a fault in the copy.
  auto& vm = VirtualMemory::get();
  if (d.kind == PointerInfo::Kind::kMapped) {
    COHORT_RETURN_IF_ERROR(vm.checkAccess(dst, count, true, fn));
  }
  if (s.kind == PointerInfo::Kind::kMapped) {
    COHORT_RETURN_IF_ERROR(vm.checkAccess(src, count, false, fn));
  }
  return Status::Ok();
}

void copyBytes(void* dst, const void* src, std::size_t count) {
  const auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  if (d < s + count && s < d + count) {
    std::memmove(dst, src, count);
  } else {
    std::memcpy(dst, src, count);
  }
}

// Validates a set; the pointer's description goes to `info` (when given, count > 0).
Status checkSet(DeviceManager& m, void* dst, std::size_t destMax, std::size_t count,
                const char* fn, PointerInfo* info = nullptr) {
  if (count == 0) return Status::Ok();
  if (dst == nullptr) return makeError(ErrorCode::kInvalidArgument, "{}: pointer is null", fn);
  if (count > destMax) {
    return makeError(ErrorCode::kSizeOverflow, "{}: count {} exceeds destMax {}", fn, count,
                     destMax);
  }
  const PointerInfo d = m.classify(dst);
  if (info != nullptr) *info = d;
  COHORT_RETURN_IF_ERROR(checkExtent(d, dst, count, fn, "destination"));
  if (d.kind != PointerInfo::Kind::kMapped) return Status::Ok();
  return VirtualMemory::get().checkAccess(dst, count, true, fn);
}

}  // namespace

Status deviceMalloc(void** ptr, std::size_t size) {
  return apiCall([&](DeviceManager& m) {
    if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "deviceMalloc: ptr is null");
    if (size == 0) return Status(ErrorCode::kInvalidArgument, "deviceMalloc: size is 0");
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(currentDevice(m, &d));
    if (d->pool() == nullptr) {
      return makeError(ErrorCode::kInvalidDevice, "device {} is not set", d->id());
    }
    COHORT_RETURN_IF_ERROR(d->pool()->allocate(size, ptr));
    registryNoteMemory(d->id(), d->pool()->used());
    return Status::Ok();
  });
}

Status deviceFree(void* ptr) {
  return apiCall([&](DeviceManager& m) {
    if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "deviceFree: ptr is null");
    const PointerInfo info = m.classify(ptr);
    if (info.kind == PointerInfo::Kind::kManaged) return HostMemory::get().freeManaged(ptr);
    if (info.kind != PointerInfo::Kind::kDevice) {
      return makeError(ErrorCode::kInvalidPointer, "deviceFree: {} is {}, not device memory", ptr,
                       info.label);
    }
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(m.device(info.device, &d));
    m.settleFor(info);  // the device's copies and kernels that lead its queues read it first
    COHORT_RETURN_IF_ERROR(d->pool()->free(ptr));
    registryNoteMemory(d->id(), d->pool()->used());
    return Status::Ok();
  });
}

Status hostMalloc(void** ptr, std::size_t size) {
  return apiCall([&](DeviceManager& m) {
    if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "hostMalloc: ptr is null");
    if (size == 0) return Status(ErrorCode::kInvalidArgument, "hostMalloc: size is 0");
    return m.hostPool()->allocate(size, ptr);
  });
}

Status hostFree(void* ptr) {
  return apiCall([&](DeviceManager& m) {
    if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "hostFree: ptr is null");
    if (!m.hostPool()->contains(ptr)) {
      return makeError(ErrorCode::kInvalidPointer, "hostFree: {} is {}, not pinned host memory",
                       ptr, m.classify(ptr).label);
    }
    return m.hostPool()->free(ptr);
  });
}

Status memcpy(void* dst, std::size_t destMax, const void* src, std::size_t count,
              MemcpyKind kind) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(captureCheckUnsafe("memcpy (synchronous)"));
    PointerInfo dstInfo, srcInfo;
    COHORT_RETURN_IF_ERROR(
        checkCopy(m, dst, destMax, src, count, kind, "memcpy", &dstInfo, &srcInfo));
    if (count == 0) return Status::Ok();
    m.settleFor(srcInfo);
    m.settleFor(dstInfo);
    copyBytes(dst, src, count);
    return Status::Ok();
  });
}

Status memcpyAsync(void* dst, std::size_t destMax, const void* src, std::size_t count,
                   MemcpyKind kind, Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    COHORT_RETURN_IF_ERROR(checkCopy(m, dst, destMax, src, count, kind, "memcpyAsync"));
    if (count == 0) return Status::Ok();
    s->enqueue([dst, src, count] {
      copyBytes(dst, src, count);
      return Status::Ok();
    }, false, "copy", Stream::Work::kTransfer);
    return Status::Ok();
  });
}

Status memset(void* dst, std::size_t destMax, int value, std::size_t count) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(captureCheckUnsafe("memset (synchronous)"));
    PointerInfo dstInfo;
    COHORT_RETURN_IF_ERROR(checkSet(m, dst, destMax, count, "memset", &dstInfo));
    if (count == 0) return Status::Ok();
    m.settleFor(dstInfo);
    std::memset(dst, value, count);
    return Status::Ok();
  });
}

Status memsetAsync(void* dst, std::size_t destMax, int value, std::size_t count,
                   Stream* stream) {
  return apiCall([&](DeviceManager& m) {
    Stream* s = nullptr;
    COHORT_RETURN_IF_ERROR(m.resolveStream(stream, &s));
    COHORT_RETURN_IF_ERROR(checkSet(m, dst, destMax, count, "memsetAsync"));
    if (count == 0) return Status::Ok();
    s->enqueue([dst, value, count] {
      std::memset(dst, value, count);
      return Status::Ok();
    }, false, "set", Stream::Work::kTransfer);
    return Status::Ok();
  });
}

namespace {
// Starts at 1: a cache's zeroed entries never match.
std::atomic<std::uint64_t> gMemoryGeneration{1};
}  // namespace

void noteMemoryChange() { gMemoryGeneration.fetch_add(1, std::memory_order_acq_rel); }

std::uint64_t memoryGeneration() { return gMemoryGeneration.load(std::memory_order_acquire); }

Status pointerGetAttributes(const void* ptr, PointerAttributes* attributes) {
  return apiCall([&](DeviceManager& m) {
    if (attributes == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "pointerGetAttributes: null output");
    }
    const PointerInfo info = m.classify(ptr);
    *attributes = PointerAttributes{};
    attributes->isDevice = isDeviceSide(info) || info.kind == PointerInfo::Kind::kManaged;
    attributes->isPinnedHost = info.kind == PointerInfo::Kind::kPinnedHost;
    // Registered plain host memory is not isPinnedHost: its owner may unmap it after
    // unregistering, so it must not be treated as a pool that keeps its pages.
    attributes->isRegistered =
        info.kind == PointerInfo::Kind::kRegistered ||
        (info.kind == PointerInfo::Kind::kPinnedHost && HostMemory::get().mappedRegistration(ptr));
    attributes->isManaged = info.kind == PointerInfo::Kind::kManaged;
    attributes->isMapped = info.kind == PointerInfo::Kind::kMapped;
    attributes->device = info.device;
    if (info.kind != PointerInfo::Kind::kHost && info.live) {
      attributes->allocationBase = info.base;
      attributes->allocationSize = info.size;
    }
    return Status::Ok();
  });
}

MemHandle encodeIpcHandle(const IpcHandle& h) {
  static_assert(sizeof(IpcHandle) <= sizeof(MemHandle::bytes), "handle too large");
  MemHandle out{};
  std::memcpy(out.bytes, &h, sizeof(h));
  return out;
}

Status decodeIpcHandle(const MemHandle& handle, IpcHandle* out) {
  std::memcpy(out, handle.bytes, sizeof(*out));
  if (out->magic != kIpcMagic || out->version != kIpcVersion || out->pid <= 0 || out->fd < 0 ||
      out->size == 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "memImport: the handle is not a memory handle of this runtime version");
  }
  return Status::Ok();
}

// "<pid>.<fd>.<offset>.<size>.<physical device>", offset and size in hex: the fields a
// handle carries beyond its fixed magic and version.
Status memHandleToText(const MemHandle& handle, std::string* text) {
  if (text == nullptr) return Status(ErrorCode::kInvalidArgument, "memHandleToText: null output");
  IpcHandle h;
  COHORT_RETURN_IF_ERROR(decodeIpcHandle(handle, &h));
  *text = fmt::format("{}.{}.{:x}.{:x}.{}", h.pid, h.fd, h.offset, h.size, h.physicalDevice);
  return Status::Ok();
}

Status memHandleFromText(const std::string& text, MemHandle* handle) {
  if (handle == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "memHandleFromText: null output");
  }
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.version = kIpcVersion;
  unsigned long long offset = 0, size = 0;
  int used = 0;
  if (text.size() > kMemHandleTextMax ||
      std::sscanf(text.c_str(), "%d.%d.%llx.%llx.%d%n", &h.pid, &h.fd, &offset, &size,
                  &h.physicalDevice, &used) != 5 ||
      static_cast<std::size_t>(used) != text.size()) {
    return makeError(ErrorCode::kInvalidArgument, "'{}' is not the text of a memory handle",
                     text);
  }
  h.offset = offset;
  h.size = size;
  *handle = encodeIpcHandle(h);
  IpcHandle check;
  return decodeIpcHandle(*handle, &check);
}

namespace {
// The pool a pointer lies in: a device's, or the pinned host pool (device -1).
MemoryPool* poolOf(DeviceManager& m, const PointerInfo& info, int* physicalDevice) {
  if (info.kind == PointerInfo::Kind::kPinnedHost) {
    *physicalDevice = -1;
    return m.hostPool();
  }
  Device* d = nullptr;
  if (info.kind != PointerInfo::Kind::kDevice || !m.device(info.device, &d).ok()) return nullptr;
  *physicalDevice = d->physicalId();
  return d->pool();
}

MemHandle makeHandle(const MemoryPool& pool, std::uint64_t offset, std::uint64_t size,
                     int physicalDevice) {
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.version = kIpcVersion;
  h.pid = static_cast<std::int32_t>(getpid());
  h.fd = pool.fd();
  h.offset = offset;
  h.size = size;
  h.physicalDevice = physicalDevice;
  return encodeIpcHandle(h);
}
}  // namespace

Status memExport(void* devPtr, MemHandle* handle) {
  return apiCall([&](DeviceManager& m) {
    if (handle == nullptr) return Status(ErrorCode::kInvalidArgument, "memExport: null output");
    const PointerInfo info = m.classify(devPtr);
    int physical = -1;
    MemoryPool* pool = poolOf(m, info, &physical);
    if (pool == nullptr || !info.live || info.base != devPtr) {
      return makeError(ErrorCode::kInvalidPointer,
                       "memExport: {} is not the start of a live device allocation", devPtr);
    }
    COHORT_RETURN_IF_ERROR(pool->checkShareable("memExport"));
    *handle = makeHandle(*pool, static_cast<std::uint64_t>(info.base - pool->base()), info.size,
                         physical);
    return Status::Ok();
  });
}

Status memExportSegment(int device, MemHandle* handle, void** base) {
  return apiCall([&](DeviceManager& m) {
    if (handle == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "memExportSegment: null output");
    }
    MemoryPool* pool = m.hostPool();
    int physical = -1;
    if (device >= 0) {
      Device* d = nullptr;
      COHORT_RETURN_IF_ERROR(m.device(device, &d));
      pool = d->pool();
      physical = d->physicalId();
      if (pool == nullptr) {
        return makeError(ErrorCode::kInvalidDevice, "memExportSegment: device {} is not set",
                         device);
      }
    }
    COHORT_RETURN_IF_ERROR(pool->checkShareable("memExportSegment"));
    *handle = makeHandle(*pool, 0, pool->capacity(), physical);
    if (base != nullptr) *base = pool->base();
    return Status::Ok();
  });
}

Status memSegmentOffset(const void* ptr, int* device, std::uint64_t* offset) {
  return apiCall([&](DeviceManager& m) {
    if (device == nullptr || offset == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "memSegmentOffset: null output");
    }
    const PointerInfo info = m.classify(ptr);
    int physical = -1;
    MemoryPool* pool = poolOf(m, info, &physical);
    if (pool == nullptr) {
      return makeError(ErrorCode::kInvalidPointer,
                       "memSegmentOffset: {} is {}, not in a device or pinned segment", ptr,
                       info.label);
    }
    *device = info.kind == PointerInfo::Kind::kPinnedHost ? -1 : info.device;
    *offset = static_cast<std::uint64_t>(static_cast<const char*>(ptr) - pool->base());
    return Status::Ok();
  });
}

Status memImport(const MemHandle& handle, void** ptr) {
  return apiCall([&](DeviceManager& m) {
    if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "memImport: null output");
    return m.importMapping(handle, ptr);
  });
}

Status memClose(void* importedPtr) {
  return apiCall([&](DeviceManager& m) {
    m.settleFor(m.classify(importedPtr));
    return m.closeMapping(importedPtr);
  });
}

}  // namespace cohort::runtime
