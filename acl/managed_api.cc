// Managed memory (aclrtMemAllocManaged, aclrtMemManaged*). Host and device memory are
// one RAM here, so managed memory is both at one address and never migrates; advice
// and prefetch locations are recorded per 2 MiB granule, for the attribute queries.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/memory_util.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

constexpr std::size_t kGranule = 2u << 20;
constexpr std::int32_t kHostId = -1;   // what CANN reports for the host
constexpr std::int32_t kMixedId = -2;  // not the same over the range (or not set)

// A location with its type resolved (NUMA_CURRENT becomes the node of the caller).
using Location = std::pair<int, std::int32_t>;  // (aclrtMemManagedLocationType, id)
const Location kNowhere{ACL_MEM_LOCATIONTYPE_INVALID, 0};

struct Granule {
  bool readMostly = false;
  Location preferred = kNowhere;
  std::set<Location> accessedBy;
  Location lastPrefetch = kNowhere;
};

// The advice given for each managed allocation, by base address. Process-wide; guarded
// by gManagedMu. An entry is reset when its allocation is made again (aclrtMemAllocManaged).
std::mutex gManagedMu;
std::map<const char*, std::vector<Granule>>& granulesByBase() {
  static auto* table = new std::map<const char*, std::vector<Granule>>();  // used until exit
  return *table;
}

// The granules [first, last) of the managed allocation that [ptr, ptr + size) lies in.
struct Range {
  const char* base = nullptr;
  std::size_t first = 0;
  std::size_t last = 0;
  std::size_t granules = 0;  // of the whole allocation
};

Outcome managedRange(const char* fn, const void* ptr, std::size_t size, bool wholeGranules,
                     Range* out) {
  if (ptr == nullptr || size == 0) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: ptr is null or size is 0", fn);
  }
  if (wholeGranules && size % kGranule != 0) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: size {} is not a multiple of 2 MiB",
                             fn, size);
  }
  rt::PointerAttributes a;
  COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(ptr, &a));
  if (!a.isManaged || a.allocationBase == nullptr) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: {} is not memory of a live aclrtMemAllocManaged allocation", fn,
                             ptr);
  }
  const auto* base = static_cast<const char*>(a.allocationBase);
  const std::size_t offset = static_cast<std::size_t>(static_cast<const char*>(ptr) - base);
  if (size > a.allocationSize - offset) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: {} bytes at {} overrun the managed allocation ({} bytes at {})",
                             fn, size, ptr, a.allocationSize, a.allocationBase);
  }
  out->base = base;
  out->first = offset / kGranule;
  out->last = (offset + size + kGranule - 1) / kGranule;
  out->granules = a.allocationSize / kGranule;
  return Status::Ok();
}

// The granules of a range; gManagedMu must be held.
std::vector<Granule>& granulesLocked(const Range& range) {
  std::vector<Granule>& g = granulesByBase()[range.base];
  if (g.size() != range.granules) g.assign(range.granules, Granule{});  // made again, resized
  return g;
}

int numaNodeOfCaller() {
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0) return 0;
  return static_cast<int>(node);
}

bool numaNodeExists(std::int32_t id) {
  struct stat st;
  const std::string path = "/sys/devices/system/node/node" + std::to_string(id);
  return id >= 0 && (stat(path.c_str(), &st) == 0 || (id == 0 && stat("/sys", &st) == 0));
}

// A location the program names (INVALID only when `allowInvalid`).
Outcome resolveLocation(const char* fn, const aclrtMemManagedLocation& in, bool allowInvalid,
                        Location* out) {
  switch (in.type) {
    case ACL_MEM_LOCATIONTYPE_INVALID:
      if (!allowInvalid) break;
      *out = kNowhere;
      return Status::Ok();
    case ACL_MEM_LOCATIONTYPE_HOST:
      *out = Location{ACL_MEM_LOCATIONTYPE_HOST, 0};
      return Status::Ok();
    case ACL_MEM_LOCATIONTYPE_DEVICE: {
      int count = 0;
      COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
      if (in.id < 0 || in.id >= count) {
        return Outcome(ACL_ERROR_RT_INVALID_DEVICEID,
                       cohort::makeError(ErrorCode::kInvalidDevice,
                                         "{}: location device {} does not exist ({} visible)", fn,
                                         in.id, count));
      }
      *out = Location{ACL_MEM_LOCATIONTYPE_DEVICE, in.id};
      return Status::Ok();
    }
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA:
      if (!numaNodeExists(in.id)) {
        return cohort::makeError(ErrorCode::kInvalidArgument, "{}: NUMA node {} does not exist", fn,
                                 in.id);
      }
      *out = Location{ACL_MEM_LOCATIONTYPE_HOST_NUMA, in.id};
      return Status::Ok();
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT:
      *out = Location{ACL_MEM_LOCATIONTYPE_HOST_NUMA, numaNodeOfCaller()};
      return Status::Ok();
  }
  return cohort::makeError(ErrorCode::kInvalidArgument,
                           "{}: location type {} is not a usable aclrtMemManagedLocationType", fn,
                           static_cast<int>(in.type));
}

// How CANN encodes a location as one integer: the device or node id, -1 for the host,
// -2 when the range does not agree (or nothing was set).
std::int32_t locationId(const Location& l) {
  if (l.first == ACL_MEM_LOCATIONTYPE_HOST) return kHostId;
  if (l.first == ACL_MEM_LOCATIONTYPE_INVALID) return kMixedId;
  return l.second;
}

// The location every granule of the range has, or kNowhere.
template <typename Get>
Location common(const std::vector<Granule>& g, const Range& r, Get get) {
  const Location first = get(g[r.first]);
  for (std::size_t i = r.first + 1; i < r.last; ++i) {
    if (get(g[i]) != first) return kNowhere;
  }
  return first;
}

Outcome writeInt(const char* fn, void* data, std::size_t dataSize, std::int32_t value) {
  if (dataSize != sizeof(std::int32_t)) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: dataSize {} must be 4", fn,
                             dataSize);
  }
  *static_cast<std::int32_t*>(data) = value;
  return Status::Ok();
}

Outcome getAttr(const char* fn, aclrtMemManagedRangeAttribute attribute, const void* ptr,
                std::size_t size, void* data, std::size_t dataSize) {
  if (data == nullptr)
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: data is null", fn);
  Range r;
  ACL_RETURN_IF_FAILED(managedRange(fn, ptr, size, /*wholeGranules=*/false, &r));
  std::lock_guard<std::mutex> lock(gManagedMu);
  const std::vector<Granule>& g = granulesLocked(r);
  auto preferred = [](const Granule& x) { return x.preferred; };
  auto prefetched = [](const Granule& x) { return x.lastPrefetch; };
  switch (attribute) {
    case ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: {
      bool all = true;
      for (std::size_t i = r.first; i < r.last; ++i) all = all && g[i].readMostly;
      return writeInt(fn, data, dataSize, all ? 1 : 0);
    }
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
      return writeInt(fn, data, dataSize, locationId(common(g, r, preferred)));
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
      return writeInt(fn, data, dataSize, locationId(common(g, r, prefetched)));
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
      return writeInt(fn, data, dataSize, common(g, r, preferred).first);
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
      return writeInt(fn, data, dataSize, common(g, r, prefetched).first);
    case ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
    case ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: {
      const Location loc = attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID
                               ? common(g, r, preferred)
                               : common(g, r, prefetched);
      const bool hasId =
          loc.first == ACL_MEM_LOCATIONTYPE_DEVICE || loc.first == ACL_MEM_LOCATIONTYPE_HOST_NUMA;
      return writeInt(fn, data, dataSize, hasId ? loc.second : kMixedId);
    }
    case ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
      if (dataSize == 0 || dataSize % sizeof(std::int32_t) != 0) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: dataSize {} must be a positive multiple of 4", fn, dataSize);
      }
      std::set<Location> all = g[r.first].accessedBy;  // set on every granule of the range
      for (std::size_t i = r.first + 1; i < r.last; ++i) {
        std::set<Location> both;
        for (const Location& l : all) {
          if (g[i].accessedBy.count(l) != 0) both.insert(l);
        }
        all.swap(both);
      }
      auto* out = static_cast<std::int32_t*>(data);
      const std::size_t n = dataSize / sizeof(std::int32_t);
      auto it = all.begin();
      for (std::size_t i = 0; i < n; ++i) out[i] = it != all.end() ? locationId(*it++) : kMixedId;
      return Status::Ok();
    }
  }
  return cohort::makeError(ErrorCode::kInvalidArgument,
                           "{}: attribute {} is not an aclrtMemManagedRangeAttribute (1..8)", fn,
                           static_cast<int>(attribute));
}

// Validates a prefetch and records where it goes; the caller queues the task.
Outcome notePrefetch(const char* fn, const void* ptr, std::size_t size,
                     const aclrtMemManagedLocation& where, bool apply) {
  Range r;
  ACL_RETURN_IF_FAILED(managedRange(fn, ptr, size, /*wholeGranules=*/true, &r));
  Location l;
  ACL_RETURN_IF_FAILED(resolveLocation(fn, where, /*allowInvalid=*/false, &l));
  if (!apply) return Status::Ok();
  std::lock_guard<std::mutex> lock(gManagedMu);
  std::vector<Granule>& g = granulesLocked(r);
  for (std::size_t i = r.first; i < r.last; ++i) g[i].lastPrefetch = l;
  return Status::Ok();
}

// A task that completes in stream order: there is nothing to move.
Outcome queuePrefetchTask(const char* fn, aclrtStream stream) {
  ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
  return rt::launchKernel(cohort::acl::toStream(stream), [](rt::Stream*) { return Status::Ok(); });
}

}  // namespace

aclError aclrtMemAllocManaged(void** ptr, uint64_t size, uint32_t flag) {
  return apiCall("aclrtMemAllocManaged", [&]() -> Outcome {
    if (ptr == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "aclrtMemAllocManaged: ptr is null");
    }
    if (flag != ACL_RT_MEM_ATTACH_GLOBAL) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtMemAllocManaged: flag {:#x} is not ACL_RT_MEM_ATTACH_GLOBAL",
                               flag);
    }
    COHORT_RETURN_IF_ERROR(rt::managedMalloc(ptr, static_cast<std::size_t>(size)));
    std::lock_guard<std::mutex> lock(gManagedMu);
    granulesByBase().erase(static_cast<const char*>(*ptr));  // advice of an earlier owner
    return Status::Ok();
  });
}

aclError aclrtMemManagedAdvise(const void* const ptr, uint64_t size,
                               aclrtMemManagedAdviseType advise, aclrtMemManagedLocation location) {
  return apiCall("aclrtMemManagedAdvise", [&]() -> Outcome {
    const char* fn = "aclrtMemManagedAdvise";
    Range r;
    ACL_RETURN_IF_FAILED(managedRange(fn, ptr, static_cast<std::size_t>(size), true, &r));
    Location l = kNowhere;
    switch (advise) {
      case ACL_MEM_ADVISE_SET_READ_MOSTLY:  // location ignored, as documented
      case ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
        break;
      case ACL_MEM_ADVISE_UNSET_READ_MOSTLY:  // INVALID: keep the host's copy
        ACL_RETURN_IF_FAILED(resolveLocation(fn, location, /*allowInvalid=*/true, &l));
        break;
      case ACL_MEM_ADVISE_SET_PREFERRED_LOCATION:
      case ACL_MEM_ADVISE_SET_ACCESSED_BY:
      case ACL_MEM_ADVISE_UNSET_ACCESSED_BY:
        ACL_RETURN_IF_FAILED(resolveLocation(fn, location, /*allowInvalid=*/false, &l));
        break;
      default:
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: advise {} is not an aclrtMemManagedAdviseType (0..5)", fn,
                                 static_cast<int>(advise));
    }
    std::lock_guard<std::mutex> lock(gManagedMu);
    std::vector<Granule>& g = granulesLocked(r);
    for (std::size_t i = r.first; i < r.last; ++i) {
      switch (advise) {
        case ACL_MEM_ADVISE_SET_READ_MOSTLY:
          g[i].readMostly = true;
          break;
        case ACL_MEM_ADVISE_UNSET_READ_MOSTLY:
          g[i].readMostly = false;
          break;
        case ACL_MEM_ADVISE_SET_PREFERRED_LOCATION:
          g[i].preferred = l;
          break;
        case ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
          g[i].preferred = kNowhere;
          break;
        case ACL_MEM_ADVISE_SET_ACCESSED_BY:
          g[i].accessedBy.insert(l);
          break;
        case ACL_MEM_ADVISE_UNSET_ACCESSED_BY:
          g[i].accessedBy.erase(l);
          break;
      }
    }
    return Status::Ok();
  });
}

aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void* ptr,
                                size_t size, void* data, size_t dataSize) {
  return apiCall("aclrtMemManagedGetAttr", [&]() -> Outcome {
    return getAttr("aclrtMemManagedGetAttr", attribute, ptr, size, data, dataSize);
  });
}

aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute* attributes, size_t numAttributes,
                                 const void* ptr, size_t size, void** data, size_t* dataSizes) {
  return apiCall("aclrtMemManagedGetAttrs", [&]() -> Outcome {
    const char* fn = "aclrtMemManagedGetAttrs";
    if (attributes == nullptr || data == nullptr || dataSizes == nullptr || numAttributes == 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: attributes, data and dataSizes must be non-null arrays of "
                               "numAttributes > 0 entries",
                               fn);
    }
    for (std::size_t i = 0; i < numAttributes; ++i) {
      ACL_RETURN_IF_FAILED(getAttr(fn, attributes[i], ptr, size, data[i], dataSizes[i]));
    }
    return Status::Ok();
  });
}

aclError aclrtMemManagedPrefetchAsync(const void* ptr, size_t size,
                                      aclrtMemManagedLocation location, uint32_t flags,
                                      aclrtStream stream) {
  return apiCall("aclrtMemManagedPrefetchAsync", [&]() -> Outcome {
    const char* fn = "aclrtMemManagedPrefetchAsync";
    if (flags != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: flags {} must be 0", fn, flags);
    }
    ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
    ACL_RETURN_IF_FAILED(notePrefetch(fn, ptr, size, location, /*apply=*/true));
    return queuePrefetchTask(fn, stream);
  });
}

aclError aclrtMemManagedPrefetchBatchAsync(const void** ptrs, size_t* sizes, size_t count,
                                           aclrtMemManagedLocation* prefetchLocs,
                                           size_t* prefetchLocIdxs, size_t numPrefetchLocs,
                                           uint64_t flags, aclrtStream stream) {
  return apiCall("aclrtMemManagedPrefetchBatchAsync", [&]() -> Outcome {
    const char* fn = "aclrtMemManagedPrefetchBatchAsync";
    if (ptrs == nullptr || sizes == nullptr || prefetchLocs == nullptr ||
        prefetchLocIdxs == nullptr || count == 0 || numPrefetchLocs == 0 ||
        numPrefetchLocs > count || flags != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: needs non-null arrays, 0 < numPrefetchLocs ({}) <= count ({}) "
                               "and flags 0 (got {})",
                               fn, numPrefetchLocs, count, flags);
    }
    for (std::size_t k = 0; k < numPrefetchLocs; ++k) {
      const bool ok =
          k == 0 ? prefetchLocIdxs[0] == 0
                 : prefetchLocIdxs[k] > prefetchLocIdxs[k - 1] && prefetchLocIdxs[k] < count;
      if (!ok) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: prefetchLocIdxs[{}] = {}: the first must be 0, each larger "
                                 "than the last and below count ({})",
                                 fn, k, prefetchLocIdxs[k], count);
      }
    }
    ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
    // Everything is checked before anything is recorded.
    for (bool apply : {false, true}) {
      std::size_t k = 0;
      for (std::size_t i = 0; i < count; ++i) {
        while (k + 1 < numPrefetchLocs && prefetchLocIdxs[k + 1] <= i) ++k;
        ACL_RETURN_IF_FAILED(notePrefetch(fn, ptrs[i], sizes[i], prefetchLocs[k], apply));
      }
    }
    return queuePrefetchTask(fn, stream);
  });
}
