// Public virtual-memory functions (cohort/runtime.h) over VirtualMemory.
#include "common/error.h"
#include "runtime/api.h"
#include "runtime/vmm.h"

namespace cohort::runtime {

namespace {
Status nullOutput(const char* what) {
  return makeError(ErrorCode::kInvalidArgument, "{}: null output", what);
}

Status validAccess(VmmAccess access, const char* what) {
  if (access == VmmAccess::kNone || access == VmmAccess::kRead ||
      access == VmmAccess::kReadWrite) {
    return Status::Ok();
  }
  return makeError(ErrorCode::kInvalidArgument, "{}: access {} is not none (0), read (1) or "
                   "read-write (3)", what, static_cast<int>(access));
}
}  // namespace

std::size_t vmmGranularity() { return 2 << 20; }

Status vmmReserve(std::size_t size, std::size_t alignment, void* start, void** va) {
  return apiCall([&](DeviceManager&) {
    return VirtualMemory::get().reserve(size, alignment, start, va);
  });
}

Status vmmRelease(void* va) {
  return apiCall([&](DeviceManager&) { return VirtualMemory::get().release(va); });
}

Status vmmCreate(int device, std::size_t size, std::uint64_t attributes, PhysicalMemory** out) {
  return apiCall([&](DeviceManager& m) {
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(m.device(device, &d));
    return VirtualMemory::get().create(d, size, attributes, out);
  });
}

Status vmmDestroy(PhysicalMemory* mem) {
  return apiCall([&](DeviceManager&) { return VirtualMemory::get().destroy(mem); });
}

Status vmmMap(void* va, std::size_t size, std::size_t offset, PhysicalMemory* mem,
              VmmAccess access) {
  return apiCall([&](DeviceManager&) {
    COHORT_RETURN_IF_ERROR(validAccess(access, "map"));
    return VirtualMemory::get().map(va, size, offset, mem, access);
  });
}

Status vmmUnmap(void* va) {
  return apiCall([&](DeviceManager&) { return VirtualMemory::get().unmap(va); });
}

Status vmmSetAccess(void* va, std::size_t size, VmmAccess access) {
  return apiCall([&](DeviceManager&) {
    COHORT_RETURN_IF_ERROR(validAccess(access, "set access"));
    return VirtualMemory::get().setAccess(va, size, access);
  });
}

Status vmmCheckAccess(const void* p, std::size_t bytes, bool write, const char* what) {
  return apiCall([&](DeviceManager&) {
    return VirtualMemory::get().checkAccess(p, bytes, write, what != nullptr ? what : "access");
  });
}

Status vmmLookup(const void* va, VmmMapping* out) {
  return apiCall([&](DeviceManager&) {
    if (out == nullptr) return nullOutput("vmmLookup");
    return VirtualMemory::get().lookup(va, out);
  });
}

Status vmmRetain(const void* va, PhysicalMemory** out) {
  return apiCall([&](DeviceManager&) {
    if (out == nullptr) return nullOutput("vmmRetain");
    return VirtualMemory::get().retain(va, out);
  });
}

Status vmmMapAlias(void* dst, const void* src, std::size_t size) {
  return apiCall([&](DeviceManager&) { return VirtualMemory::get().mapAlias(dst, src, size); });
}

Status vmmInfo(const PhysicalMemory* mem, PhysicalMemoryInfo* info) {
  return apiCall([&](DeviceManager&) {
    if (info == nullptr) return nullOutput("vmmInfo");
    return VirtualMemory::get().info(mem, info);
  });
}

Status vmmDescribe(const PhysicalMemory* mem, int* device, std::size_t* size) {
  return apiCall([&](DeviceManager&) {
    if (device == nullptr || size == nullptr) return nullOutput("vmmDescribe");
    PhysicalMemoryInfo info;
    COHORT_RETURN_IF_ERROR(VirtualMemory::get().info(mem, &info));
    *device = info.device;
    *size = info.size;
    return Status::Ok();
  });
}

Status vmmExport(PhysicalMemory* mem, bool checkPid, std::uint64_t* shareable) {
  return apiCall([&](DeviceManager&) {
    if (shareable == nullptr) return nullOutput("vmmExport");
    return VirtualMemory::get().exportShareable(mem, checkPid, shareable);
  });
}

Status vmmSetImportPids(std::uint64_t shareable, const std::int32_t* pids, std::size_t count) {
  return apiCall([&](DeviceManager&) {
    if (pids == nullptr && count > 0) {
      return makeError(ErrorCode::kInvalidArgument, "whitelist: pids is null");
    }
    return VirtualMemory::get().setImportPids(shareable, pids, count);
  });
}

Status vmmImport(std::uint64_t shareable, int device, PhysicalMemory** out, bool* denied) {
  return apiCall([&](DeviceManager& m) {
    if (out == nullptr) return nullOutput("vmmImport");
    if (denied != nullptr) *denied = false;
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(m.device(device, &d));
    return VirtualMemory::get().importShareable(shareable, d, out, denied);
  });
}

}  // namespace cohort::runtime
