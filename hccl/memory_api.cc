// Zero-copy memory and symmetric windows: HcclCommSetMemoryRange/UnsetMemoryRange,
// HcclCommActivateCommMemory/DeactivateCommMemory, HcclCommSymWinRegister/
// Deregister/Get. Cohort's operations take any device memory, mapped addresses
// (aclrtMapMem) included, so these calls check the rules HCCL documents and keep
// the records its queries answer from; nothing else depends on them.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "cohort/runtime.h"
#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/comm_registry.h"
#include "hccl/hccl.h"

namespace {

using cohort::ErrorCode;
using cohort::Status;
using cohort::hccl::apiCall;
using cohort::hccl::CommEntry;
using cohort::hccl::invalidParameter;
using cohort::hccl::lookupComm;
using cohort::hccl::nullPointer;
using cohort::hccl::Outcome;

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

struct Window {
  HcclComm comm;
  std::uintptr_t start;
  std::uint64_t size;
};

// Process-wide, as HCCL's ranges are: "visible to every communicator of the process".
struct MemoryBook {
  std::mutex mu;
  std::map<std::uintptr_t, std::size_t> ranges;  // start -> size (SetMemoryRange)
  std::map<std::uintptr_t, std::size_t> active;  // start -> size (ActivateCommMemory)
  std::map<std::uintptr_t, std::unique_ptr<Window>> windows;  // handle -> window
};
MemoryBook& book() {
  static auto* b = new MemoryBook();  // used until exit
  return *b;
}

// The entry of the map whose [start, start + size) holds [p, p + bytes), or end().
template <typename Map>
typename Map::iterator holding(Map& m, std::uintptr_t p, std::size_t bytes) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return m.end();
  --it;
  return p + bytes <= it->first + it->second ? it : m.end();
}

template <typename Map>
bool overlaps(const Map& m, std::uintptr_t p, std::size_t bytes) {
  auto next = m.lower_bound(p);
  if (next != m.end() && next->first < p + bytes) return true;
  return next != m.begin() && std::prev(next)->first + std::prev(next)->second > p;
}

Outcome zeroOnly(const char* fn, std::uint64_t v, const char* name) {
  if (v == 0) return Status::Ok();
  return invalidParameter(fn, std::to_string(v), name, "0 (reserved)");
}

}  // namespace

HcclResult HcclCommSetMemoryRange(HcclComm comm, void* baseVirPtr, size_t size, size_t alignment,
                                  uint64_t flags) {
  const char* fn = "HcclCommSetMemoryRange";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (baseVirPtr == nullptr) return nullPointer(fn, "baseVirPtr");
    if (size == 0) return invalidParameter(fn, "0", "size", "a size above 0");
    HCCL_RETURN_IF_FAILED(zeroOnly(fn, alignment, "alignment"));
    HCCL_RETURN_IF_FAILED(zeroOnly(fn, flags, "flags"));
    MemoryBook& b = book();
    std::lock_guard<std::mutex> lock(b.mu);
    if (overlaps(b.ranges, address(baseVirPtr), size)) {
      return invalidParameter(fn, cohort::hccl::pointerText(baseVirPtr), "baseVirPtr",
                              "a range that overlaps no range set before");
    }
    b.ranges[address(baseVirPtr)] = size;
    return Status::Ok();
  });
}

HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void* baseVirPtr) {
  const char* fn = "HcclCommUnsetMemoryRange";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (baseVirPtr == nullptr) return nullPointer(fn, "baseVirPtr");
    MemoryBook& b = book();
    std::lock_guard<std::mutex> lock(b.mu);
    auto it = b.ranges.find(address(baseVirPtr));
    if (it == b.ranges.end()) {
      return invalidParameter(fn, cohort::hccl::pointerText(baseVirPtr), "baseVirPtr",
                              "the base of a range set with HcclCommSetMemoryRange");
    }
    if (overlaps(b.active, it->first, it->second)) {
      return Outcome(HCCL_E_PARA, cohort::makeError(ErrorCode::kInvalidUsage,
                                                    "{}: the range at {} still holds activated "
                                                    "memory (HcclCommDeactivateCommMemory first)",
                                                    fn, cohort::hccl::pointerText(baseVirPtr)));
    }
    b.ranges.erase(it);
    return Status::Ok();
  });
}

HcclResult HcclCommActivateCommMemory(HcclComm comm, void* virPtr, size_t size, size_t offset,
                                      aclrtDrvMemHandle handle, uint64_t flags) {
  const char* fn = "HcclCommActivateCommMemory";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (virPtr == nullptr) return nullPointer(fn, "virPtr");
    if (handle == nullptr) return nullPointer(fn, "handle");
    if (size == 0) return invalidParameter(fn, "0", "size", "a size above 0");
    HCCL_RETURN_IF_FAILED(zeroOnly(fn, offset, "offset"));
    HCCL_RETURN_IF_FAILED(zeroOnly(fn, flags, "flags"));
    // Mapped device memory of this communicator's device, all of it.
    cohort::runtime::PointerAttributes a;
    COHORT_RETURN_IF_ERROR(cohort::runtime::pointerGetAttributes(virPtr, &a));
    const bool mapped = a.isDevice && a.allocationBase != nullptr &&
                        address(virPtr) + size <= address(a.allocationBase) + a.allocationSize;
    if (!mapped || a.device != entry->comm->device()) {
      return invalidParameter(fn, cohort::hccl::pointerText(virPtr), "virPtr",
                              "addresses mapped (aclrtMapMem) to memory of the communicator's "
                              "device for the whole size");
    }
    MemoryBook& b = book();
    std::lock_guard<std::mutex> lock(b.mu);
    if (holding(b.ranges, address(virPtr), size) == b.ranges.end()) {
      return invalidParameter(fn, cohort::hccl::pointerText(virPtr), "virPtr",
                              "addresses inside a range set with HcclCommSetMemoryRange");
    }
    if (overlaps(b.active, address(virPtr), size)) {
      return invalidParameter(fn, cohort::hccl::pointerText(virPtr), "virPtr",
                              "memory not activated already");
    }
    b.active[address(virPtr)] = size;
    return Status::Ok();
  });
}

HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void* virPtr) {
  const char* fn = "HcclCommDeactivateCommMemory";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (virPtr == nullptr) return nullPointer(fn, "virPtr");
    MemoryBook& b = book();
    std::lock_guard<std::mutex> lock(b.mu);
    if (b.active.erase(address(virPtr)) == 0) {
      return invalidParameter(fn, cohort::hccl::pointerText(virPtr), "virPtr",
                              "the start of memory activated with HcclCommActivateCommMemory");
    }
    return Status::Ok();
  });
}

HcclResult HcclCommSymWinRegister(HcclComm comm, void* addr, uint64_t size,
                                  HcclCommSymWindow* winHandle, uint32_t flag) {
  const char* fn = "HcclCommSymWinRegister";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (addr == nullptr) return nullPointer(fn, "addr");
    if (winHandle == nullptr) return nullPointer(fn, "winHandle");
    if (size == 0) return invalidParameter(fn, "0", "size", "a size above 0");
    HCCL_RETURN_IF_FAILED(zeroOnly(fn, flag, "flag"));
    cohort::runtime::PointerAttributes a;
    COHORT_RETURN_IF_ERROR(cohort::runtime::pointerGetAttributes(addr, &a));
    if (!a.isDevice || a.device != entry->comm->device()) {
      return invalidParameter(fn, cohort::hccl::pointerText(addr), "addr",
                              "device memory of the communicator's device");
    }
    auto w = std::make_unique<Window>(Window{comm, address(addr), size});
    const std::uintptr_t handle = address(w.get());
    MemoryBook& b = book();
    std::lock_guard<std::mutex> lock(b.mu);
    b.windows[handle] = std::move(w);
    *winHandle = reinterpret_cast<HcclCommSymWindow>(handle);
    return Status::Ok();
  });
}

HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle) {
  const char* fn = "HcclCommSymWinDeregister";
  return apiCall(fn, [&]() -> Outcome {
    if (winHandle == nullptr) return nullPointer(fn, "winHandle");
    MemoryBook& b = book();
    std::lock_guard<std::mutex> lock(b.mu);
    if (b.windows.erase(address(winHandle)) == 0) {
      return invalidParameter(fn, cohort::hccl::pointerText(winHandle), "winHandle",
                              "a window of HcclCommSymWinRegister");
    }
    return Status::Ok();
  });
}

HcclResult HcclCommSymWinGet(HcclComm comm, void* ptr, size_t size, HcclCommSymWindow* winHandle,
                             size_t* offset) {
  const char* fn = "HcclCommSymWinGet";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    HCCL_RETURN_IF_FAILED(cohort::hccl::requirePointers(
        fn, {{"ptr", ptr}, {"winHandle", winHandle}, {"offset", offset}}));
    if (size == 0) return invalidParameter(fn, "0", "size", "a size above 0");
    MemoryBook& b = book();
    std::lock_guard<std::mutex> lock(b.mu);
    for (const auto& [handle, w] : b.windows) {
      if (w->comm == comm && address(ptr) >= w->start &&
          address(ptr) + size <= w->start + w->size) {
        *winHandle = reinterpret_cast<HcclCommSymWindow>(handle);
        *offset = address(ptr) - w->start;
        return Status::Ok();
      }
    }
    return invalidParameter(fn, cohort::hccl::pointerText(ptr), "ptr",
                            "an address with size bytes inside a window this communicator "
                            "registered");
  });
}
