// Cache maintenance (aclrtCmo*). The emulated devices are CPU threads, whose caches the
// hardware keeps coherent with every other thread: prefetching, writing back,
// invalidating or flushing a range changes nothing a reader can observe. So each
// operation is a stream task that completes at once, ordered with the others, after
// the arguments CANN checks are checked; barriers order streams for real.
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/memory_util.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

using cohort::acl::Place;

struct CmoDesc {
  std::uint64_t magic;
  std::uint64_t src;
  std::uint64_t size;
  std::uint64_t reserved;
};
constexpr std::uint64_t kCmoMagic = 0xC0407D35C0000002ull;

bool validType(aclrtCmoType type) {
  return type == ACL_RT_CMO_TYPE_PREFETCH || type == ACL_RT_CMO_TYPE_WRITEBACK ||
         type == ACL_RT_CMO_TYPE_INVALID || type == ACL_RT_CMO_TYPE_FLUSH;
}

// cmoType must be a type; CANN's plain and descriptor forms take PREFETCH only.
Outcome checkType(const char* fn, aclrtCmoType type, bool prefetchOnly) {
  if (!validType(type)) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: cmoType {} is not an aclrtCmoType (0..3)", fn,
                             static_cast<int>(type));
  }
  if (prefetchOnly && type != ACL_RT_CMO_TYPE_PREFETCH) {
    return cohort::makeError(ErrorCode::kNotSupported,
                             "{}: cmoType {} is not supported (only ACL_RT_CMO_TYPE_PREFETCH)", fn,
                             static_cast<int>(type));
  }
  return Status::Ok();
}

// The range must be device memory of the stream's device.
Outcome checkRange(const char* fn, const void* src, std::size_t size, aclrtStream stream) {
  if (size == 0) return cohort::makeError(ErrorCode::kInvalidArgument, "{}: size is 0", fn);
  Place place;
  ACL_RETURN_IF_FAILED(cohort::acl::requireDeviceMemory(fn, "src", src, size, &place));
  int device = -1;
  ACL_RETURN_IF_FAILED(cohort::acl::streamDevice(fn, stream, &device));
  if (place.attributes.isDevice && place.deviceId >= 0 && place.deviceId != device) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: src {} is memory of device {}, the stream's device is {}", fn,
                             src, place.deviceId, device);
  }
  return Status::Ok();
}

Status queueNothing(aclrtStream stream) {
  return rt::launchKernel(toStream(stream), [](rt::Stream*) { return Status::Ok(); });
}

// The latest INVALID task of each barrier id, as an event recorded after it.
// Process-wide; the events live until exit.
std::mutex gBarrierMu;
std::map<std::uint32_t, rt::Event*>& barriers() {
  static auto* table = new std::map<std::uint32_t, rt::Event*>();
  return *table;
}

}  // namespace

aclError aclrtCmoAsync(void* src, size_t size, aclrtCmoType cmoType, aclrtStream stream) {
  return apiCall("aclrtCmoAsync", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkType("aclrtCmoAsync", cmoType, /*prefetchOnly=*/true));
    ACL_RETURN_IF_FAILED(checkRange("aclrtCmoAsync", src, size, stream));
    return queueNothing(stream);
  });
}

aclError aclrtCmoAsyncWithBarrier(void* src, size_t size, aclrtCmoType cmoType, uint32_t barrierId,
                                  aclrtStream stream) {
  return apiCall("aclrtCmoAsyncWithBarrier", [&]() -> Outcome {
    const char* fn = "aclrtCmoAsyncWithBarrier";
    ACL_RETURN_IF_FAILED(checkType(fn, cmoType, /*prefetchOnly=*/false));
    if (barrierId != 0 && cmoType != ACL_RT_CMO_TYPE_INVALID) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: barrierId {} is for ACL_RT_CMO_TYPE_INVALID only (0 otherwise)",
                               fn, barrierId);
    }
    ACL_RETURN_IF_FAILED(checkRange(fn, src, size, stream));
    COHORT_RETURN_IF_ERROR(queueNothing(stream));
    if (barrierId == 0) return Status::Ok();
    std::lock_guard<std::mutex> lock(gBarrierMu);
    rt::Event*& event = barriers()[barrierId];
    if (event == nullptr) COHORT_RETURN_IF_ERROR(rt::eventCreate(&event));
    return rt::eventRecord(event, toStream(stream));
  });
}

aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo* taskInfo, aclrtStream stream, uint32_t flag) {
  return apiCall("aclrtCmoWaitBarrier", [&]() -> Outcome {
    const char* fn = "aclrtCmoWaitBarrier";
    if (taskInfo == nullptr || flag != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: taskInfo must be non-null and flag 0 (got {})", fn, flag);
    }
    if (taskInfo->barrierNum == 0 || taskInfo->barrierNum > ACL_RT_CMO_MAX_BARRIER_NUM) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: barrierNum {} is not in 1..{}", fn,
                               taskInfo->barrierNum, ACL_RT_CMO_MAX_BARRIER_NUM);
    }
    for (std::size_t i = 0; i < taskInfo->barrierNum; ++i) {
      const aclrtBarrierCmoInfo& info = taskInfo->cmoInfo[i];
      if (info.cmoType != ACL_RT_CMO_TYPE_INVALID || info.barrierId == 0) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: cmoInfo[{}] must be ACL_RT_CMO_TYPE_INVALID with a barrierId "
                                 "> 0 (type {}, id {})",
                                 fn, i, static_cast<int>(info.cmoType), info.barrierId);
      }
    }
    ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
    std::lock_guard<std::mutex> lock(gBarrierMu);
    for (std::size_t i = 0; i < taskInfo->barrierNum; ++i) {
      auto it = barriers().find(taskInfo->cmoInfo[i].barrierId);
      if (it == barriers().end()) continue;  // no such task was queued: nothing to wait for
      COHORT_RETURN_IF_ERROR(rt::streamWaitEvent(toStream(stream), it->second));
    }
    return Status::Ok();
  });
}

aclError aclrtCmoGetDescSize(size_t* size) {
  return apiCall("aclrtCmoGetDescSize", [&]() -> Outcome {
    if (size == nullptr)
      return Status(ErrorCode::kInvalidArgument, "aclrtCmoGetDescSize: size is null");
    *size = sizeof(CmoDesc);
    return Status::Ok();
  });
}

aclError aclrtCmoSetDesc(void* cmoDesc, void* src, size_t size) {
  return apiCall("aclrtCmoSetDesc", [&]() -> Outcome {
    const char* fn = "aclrtCmoSetDesc";
    if (size == 0) return cohort::makeError(ErrorCode::kInvalidArgument, "{}: size is 0", fn);
    Place desc, range;
    ACL_RETURN_IF_FAILED(
        cohort::acl::requireDeviceMemory(fn, "cmoDesc", cmoDesc, sizeof(CmoDesc), &desc));
    ACL_RETURN_IF_FAILED(cohort::acl::requireDeviceMemory(fn, "src", src, size, &range));
    CmoDesc value{kCmoMagic, reinterpret_cast<std::uintptr_t>(src), size, 0};
    std::memcpy(cmoDesc, &value, sizeof(value));  // device memory is host RAM here
    return Status::Ok();
  });
}

aclError aclrtCmoAsyncWithDesc(void* cmoDesc, aclrtCmoType cmoType, aclrtStream stream,
                               const void* reserve) {
  return apiCall("aclrtCmoAsyncWithDesc", [&]() -> Outcome {
    const char* fn = "aclrtCmoAsyncWithDesc";
    if (reserve != nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: reserve must be NULL", fn);
    }
    ACL_RETURN_IF_FAILED(checkType(fn, cmoType, /*prefetchOnly=*/true));
    Place place;
    ACL_RETURN_IF_FAILED(
        cohort::acl::requireDeviceMemory(fn, "cmoDesc", cmoDesc, sizeof(CmoDesc), &place));
    CmoDesc now;
    std::memcpy(&now, cmoDesc, sizeof(now));
    if (now.magic != kCmoMagic) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: {} holds no descriptor (call aclrtCmoSetDesc first)", fn,
                               cmoDesc);
    }
    ACL_RETURN_IF_FAILED(checkRange(fn, reinterpret_cast<void*>(now.src), now.size, stream));
    return queueNothing(stream);
  });
}
