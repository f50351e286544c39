// Memory beyond the basics: allocation variants (aclrtMallocAlign32 ... FreeHostWithDevSync),
// pointer and usage queries, UCE (none on an emulated device), cache flush/invalidate,
// and the shared buffers CANN reserves (not supported).
#include <unistd.h>

#include <cstring>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/memory_util.h"
#include "acl/unsupported.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

using cohort::acl::Place;
using cohort::acl::placeOf;

// Checks a configuration of the *WithCfg allocations; `host` for host memory.
Outcome checkConfig(const char* fn, const aclrtMallocConfig* cfg, bool host) {
  if (cfg == nullptr) return Status::Ok();
  if (cfg->numAttrs > 0 && cfg->attrs == nullptr) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: cfg has {} attributes but no array",
                             fn, cfg->numAttrs);
  }
  for (std::size_t i = 0; i < cfg->numAttrs; ++i) {
    const aclrtMallocAttribute& a = cfg->attrs[i];
    switch (a.attr) {
      case ACL_RT_MEM_ATTR_RSV:
      case ACL_RT_MEM_ATTR_MODULE_ID:  // who allocates: nothing here depends on it
        break;
      case ACL_RT_MEM_ATTR_DEVICE_ID: {
        int current = -1;
        if (!rt::getDevice(&current).ok() ||
            a.value.deviceId != static_cast<std::uint32_t>(current)) {
          return cohort::makeError(ErrorCode::kInvalidArgument,
                                   "{}: cfg attribute {} asks for device {}, but the current "
                                   "device is {}",
                                   fn, i, a.value.deviceId, current);
        }
        break;
      }
      case ACL_RT_MEM_ATTR_VA_FLAG:
        // Registered host memory always has its host address on the device side.
        if (a.value.vaFlag > 1 || (!host && a.value.vaFlag != 0)) {
          return cohort::makeError(ErrorCode::kInvalidArgument,
                                   "{}: cfg attribute {}: VA_FLAG {} (0 or 1, for host memory)", fn,
                                   i, a.value.vaFlag);
        }
        break;
      default:
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: cfg attribute {} has type {}, not an aclrtMallocAttrType "
                                 "(0..3)",
                                 fn, i, static_cast<int>(a.attr));
    }
  }
  return Status::Ok();
}

Outcome deviceMalloc(const char* fn, void** devPtr, std::size_t size,
                     const aclrtMallocConfig* cfg) {
  if (devPtr == nullptr)
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: devPtr is null", fn);
  ACL_RETURN_IF_FAILED(requireDevice(fn));
  ACL_RETURN_IF_FAILED(checkConfig(fn, cfg, /*host=*/false));
  return rt::deviceMalloc(devPtr, size);  // every policy gives the same memory
}

constexpr const char* kMbufWhy =
    "CANN reserves shared buffers (mbuf, for its data queues) and does not support them in this "
    "version";

}  // namespace

aclError aclrtMallocAlign32(void** devPtr, size_t size, aclrtMemMallocPolicy /*policy*/) {
  return apiCall("aclrtMallocAlign32", [&]() -> Outcome {
    return deviceMalloc("aclrtMallocAlign32", devPtr, size, nullptr);
  });
}

aclError aclrtMallocCached(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return apiCall("aclrtMallocCached", [&]() -> Outcome {
    if (policy != ACL_MEM_MALLOC_HUGE_FIRST && policy != ACL_MEM_MALLOC_HUGE_ONLY &&
        policy != ACL_MEM_MALLOC_NORMAL_ONLY && policy != ACL_MEM_MALLOC_HUGE1G_ONLY) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtMallocCached: policy {} is not HUGE_FIRST, HUGE_ONLY, "
                               "NORMAL_ONLY or HUGE1G_ONLY",
                               static_cast<int>(policy));
    }
    return deviceMalloc("aclrtMallocCached", devPtr, size, nullptr);
  });
}

aclError aclrtMallocWithCfg(void** devPtr, size_t size, aclrtMemMallocPolicy /*policy*/,
                            aclrtMallocConfig* cfg) {
  return apiCall("aclrtMallocWithCfg", [&]() -> Outcome {
    return deviceMalloc("aclrtMallocWithCfg", devPtr, size, cfg);
  });
}

aclError aclrtMallocForTaskScheduler(void** devPtr, size_t size, aclrtMemMallocPolicy /*policy*/,
                                     aclrtMallocConfig* cfg) {
  return apiCall("aclrtMallocForTaskScheduler", [&]() -> Outcome {
    return deviceMalloc("aclrtMallocForTaskScheduler", devPtr, size, cfg);
  });
}

aclError aclrtMallocHostWithCfg(void** ptr, uint64_t size, aclrtMallocConfig* cfg) {
  return apiCall("aclrtMallocHostWithCfg", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkConfig("aclrtMallocHostWithCfg", cfg, /*host=*/true));
    return rt::hostMalloc(ptr, static_cast<std::size_t>(size));
  });
}

aclError aclrtFreeWithDevSync(void* devPtr) {
  return apiCall("aclrtFreeWithDevSync", Site::kFree, [&]() -> Outcome {
    if (devPtr == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "aclrtFreeWithDevSync: devPtr is null");
    }
    // The tasks that may use the memory are those of its device (or, for managed
    // memory, of the current one).
    const Place place = placeOf(devPtr);
    int device = place.deviceId;
    if (device < 0 && !rt::getDevice(&device).ok()) device = -1;
    const Status synced = device >= 0 ? rt::synchronizeDeviceById(device, -1) : Status::Ok();
    COHORT_RETURN_IF_ERROR(rt::deviceFree(devPtr));
    return synced;
  });
}

aclError aclrtFreeHostWithDevSync(void* hostPtr) {
  return apiCall("aclrtFreeHostWithDevSync", Site::kFree, [&]() -> Outcome {
    int device = -1;
    const Status synced = rt::getDevice(&device).ok() ? rt::synchronizeDevice(-1) : Status::Ok();
    COHORT_RETURN_IF_ERROR(rt::hostFree(hostPtr));
    return synced;
  });
}

aclError aclrtCheckMemType(void** addrList, uint32_t size, uint32_t memType, uint32_t* checkResult,
                           uint32_t reserve) {
  return apiCall("aclrtCheckMemType", [&]() -> Outcome {
    const char* fn = "aclrtCheckMemType";
    constexpr std::uint32_t kAll =
        ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | ACL_RT_MEM_TYPE_RSVD;
    if (addrList == nullptr || size == 0 || checkResult == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: addrList and checkResult must be non-null and size > 0", fn);
    }
    if (memType == 0 || (memType & ~kAll) != 0 || reserve != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: memType {:#x} is not a set of ACL_RT_MEM_TYPE_* bits (or "
                               "reserve {} is not 0)",
                               fn, memType, reserve);
    }
    std::uint32_t result = 1;
    for (std::uint32_t i = 0; i < size; ++i) {
      rt::PointerAttributes a;
      COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(addrList[i], &a));
      std::uint32_t type = 0;  // plain host, registered and managed memory are none of them
      if (a.isMapped) {
        type = ACL_RT_MEM_TYPE_RSVD;
      } else if (a.isDevice && !a.isManaged && a.allocationBase != nullptr) {
        type = ACL_RT_MEM_TYPE_DEV;
      }
      if ((type & memType) == 0) result = 0;
    }
    *checkResult = result;
    return Status::Ok();
  });
}

aclError aclrtPointerGetAttributes(const void* ptr, aclrtPtrAttributes* attributes) {
  return apiCall("aclrtPointerGetAttributes", [&]() -> Outcome {
    if (ptr == nullptr || attributes == nullptr) {
      return Status(ErrorCode::kInvalidArgument,
                    "aclrtPointerGetAttributes: ptr or attributes is null");
    }
    rt::PointerAttributes a;
    COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(ptr, &a));
    std::memset(attributes, 0, sizeof(*attributes));
    attributes->pageSize = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));
    if (a.isManaged) {
      attributes->location.type = ACL_MEM_LOCATION_TYPE_MANAGED;
    } else if (a.isDevice) {
      // Imported memory belongs to another process's device: it is mapped for the
      // calling thread's device, as an import is in CANN.
      int device = a.device;
      if (device < 0 && !rt::getDevice(&device).ok()) device = 0;
      attributes->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
      attributes->location.id = static_cast<std::uint32_t>(device);
    } else if (a.isPinnedHost || a.isRegistered) {
      attributes->location.type = ACL_MEM_LOCATION_TYPE_HOST;
    } else {
      attributes->location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
    }
    return Status::Ok();
  });
}

aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo* memUsageInfo, size_t inputNum,
                              size_t* outputNum) {
  return apiCall("aclrtGetMemUsageInfo", [&]() -> Outcome {
    if (outputNum == nullptr || (inputNum > 0 && memUsageInfo == nullptr)) {
      return Status(ErrorCode::kInvalidArgument,
                    "aclrtGetMemUsageInfo: outputNum is null, or memUsageInfo is null with "
                    "inputNum > 0");
    }
    rt::DeviceInfo info;
    COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(deviceId, &info));
    *outputNum = 0;
    if (inputNum == 0) return Status::Ok();
    aclrtMemUsageInfo& entry = memUsageInfo[0];
    std::memset(&entry, 0, sizeof(entry));
    std::strncpy(entry.name, "all users", sizeof(entry.name) - 1);
    entry.curMemSize = info.memoryTotal - info.memoryFree;
    entry.memPeakSize = info.memoryPeak;
    *outputNum = 1;
    return Status::Ok();
  });
}

aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo* memUceInfoArray, size_t arraySize,
                            size_t* retSize) {
  return apiCall("aclrtGetMemUceInfo", [&]() -> Outcome {
    if (retSize == nullptr || (arraySize > 0 && memUceInfoArray == nullptr)) {
      return Status(ErrorCode::kInvalidArgument,
                    "aclrtGetMemUceInfo: retSize is null, or memUceInfoArray is null with "
                    "arraySize > 0");
    }
    rt::DeviceInfo info;
    COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(deviceId, &info));
    *retSize = 0;  // emulated device memory is host RAM: no UCE ever reaches the device
    return Status::Ok();
  });
}

aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo* memUceInfoArray, size_t arraySize) {
  return apiCall("aclrtMemUceRepair", [&]() -> Outcome {
    rt::DeviceInfo info;
    COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(deviceId, &info));
    if (arraySize == 0) return Status::Ok();
    if (memUceInfoArray == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "aclrtMemUceRepair: memUceInfoArray is null");
    }
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "aclrtMemUceRepair: entry 0 ({}, {} bytes) was never reported: an "
                             "emulated device has no uncorrectable memory errors",
                             memUceInfoArray[0].addr, memUceInfoArray[0].len);
  });
}

namespace {
// Flush and invalidate: CPU caches are coherent, so only the arguments are checked.
Outcome checkCacheRange(const char* fn, void* devPtr, size_t size) {
  if (size == 0) return cohort::makeError(ErrorCode::kInvalidArgument, "{}: size is 0", fn);
  return cohort::acl::checkSpan(fn, "devPtr", devPtr, size, placeOf(devPtr));
}
}  // namespace

aclError aclrtMemFlush(void* devPtr, size_t size) {
  return apiCall("aclrtMemFlush",
                 [&]() -> Outcome { return checkCacheRange("aclrtMemFlush", devPtr, size); });
}

aclError aclrtMemInvalidate(void* devPtr, size_t size) {
  return apiCall("aclrtMemInvalidate",
                 [&]() -> Outcome { return checkCacheRange("aclrtMemInvalidate", devPtr, size); });
}

aclError aclrtAllocBuf(aclrtMbuf* /*buf*/, size_t /*size*/) {
  return cohort::acl::notSupported("aclrtAllocBuf", kMbufWhy);
}

aclError aclrtFreeBuf(aclrtMbuf /*buf*/) {
  return cohort::acl::notSupported("aclrtFreeBuf", kMbufWhy);
}

aclError aclrtGetBufData(const aclrtMbuf /*buf*/, void** /*dataPtr*/, size_t* /*size*/) {
  return cohort::acl::notSupported("aclrtGetBufData", kMbufWhy);
}

aclError aclrtGetBufDataLen(aclrtMbuf /*buf*/, size_t* /*len*/) {
  return cohort::acl::notSupported("aclrtGetBufDataLen", kMbufWhy);
}

aclError aclrtSetBufDataLen(aclrtMbuf /*buf*/, size_t /*len*/) {
  return cohort::acl::notSupported("aclrtSetBufDataLen", kMbufWhy);
}

aclError aclrtGetBufUserData(const aclrtMbuf /*buf*/, void* /*dataPtr*/, size_t /*size*/,
                             size_t /*offset*/) {
  return cohort::acl::notSupported("aclrtGetBufUserData", kMbufWhy);
}

aclError aclrtSetBufUserData(aclrtMbuf /*buf*/, const void* /*dataPtr*/, size_t /*size*/,
                             size_t /*offset*/) {
  return cohort::acl::notSupported("aclrtSetBufUserData", kMbufWhy);
}

aclError aclrtAppendBufChain(aclrtMbuf /*headBuf*/, aclrtMbuf /*buf*/) {
  return cohort::acl::notSupported("aclrtAppendBufChain", kMbufWhy);
}

aclError aclrtGetBufChainNum(aclrtMbuf /*headBuf*/, uint32_t* /*num*/) {
  return cohort::acl::notSupported("aclrtGetBufChainNum", kMbufWhy);
}

aclError aclrtGetBufFromChain(aclrtMbuf /*headBuf*/, uint32_t /*index*/, aclrtMbuf* /*buf*/) {
  return cohort::acl::notSupported("aclrtGetBufFromChain", kMbufWhy);
}

aclError aclrtCopyBufRef(const aclrtMbuf /*buf*/, aclrtMbuf* /*newBuf*/) {
  return cohort::acl::notSupported("aclrtCopyBufRef", kMbufWhy);
}
