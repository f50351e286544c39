// Peer access between the emulated devices of this process (aclrtDevice*PeerAccess*,
// aclrtMemP2PMap) and the link choices of mapped memory (aclrtMemMapSetLink,
// aclrtMemMapSelectedLink). All devices compute on one RAM, so every device reaches
// every other; what is recorded is which ordered pairs the program enabled.
#include <mutex>
#include <set>
#include <utility>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/memory_util.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

// Enabled (device, peer) pairs: device may access peer's memory. Process-wide.
std::mutex gPeerMu;
std::set<std::pair<int, int>>& enabledPairs() {
  static auto* pairs = new std::set<std::pair<int, int>>();  // used until exit
  return *pairs;
}

Outcome checkDevice(const char* fn, const char* role, int device) {
  int count = 0;
  COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
  if (device < 0 || device >= count) {
    return cohort::makeError(ErrorCode::kInvalidDevice,
                             "{}: {} {} does not exist: {} device(s) visible (ids 0..{})", fn, role,
                             device, count, count - 1);
  }
  return Status::Ok();
}

// The calling thread's device and a valid, different peer.
Outcome currentAndPeer(const char* fn, int peer, int* current) {
  ACL_RETURN_IF_FAILED(cohort::acl::requireDevice(fn));
  COHORT_RETURN_IF_ERROR(rt::getDevice(current));
  ACL_RETURN_IF_FAILED(checkDevice(fn, "peerDeviceId", peer));
  if (peer == *current) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: peerDeviceId {} is the current device", fn, peer);
  }
  return Status::Ok();
}

bool enabled(int device, int peer) {
  std::lock_guard<std::mutex> lock(gPeerMu);
  return enabledPairs().count({device, peer}) != 0;
}

}  // namespace

namespace cohort::acl {
void enablePeerAccess(int device, int peer) {
  std::lock_guard<std::mutex> lock(gPeerMu);
  enabledPairs().insert({device, peer});
}
}  // namespace cohort::acl

aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
  return apiCall("aclrtDeviceCanAccessPeer", [&]() -> Outcome {
    const char* fn = "aclrtDeviceCanAccessPeer";
    if (canAccessPeer == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: canAccessPeer is null", fn);
    }
    ACL_RETURN_IF_FAILED(checkDevice(fn, "deviceId", deviceId));
    ACL_RETURN_IF_FAILED(checkDevice(fn, "peerDeviceId", peerDeviceId));
    if (deviceId == peerDeviceId) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: deviceId and peerDeviceId are both {}", fn, deviceId);
    }
    *canAccessPeer = 1;  // one process, one RAM: every pair of devices
    return Status::Ok();
  });
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  return apiCall("aclrtDeviceEnablePeerAccess", [&]() -> Outcome {
    const char* fn = "aclrtDeviceEnablePeerAccess";
    if (flags != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: flags {} must be 0", fn, flags);
    }
    int current = -1;
    ACL_RETURN_IF_FAILED(currentAndPeer(fn, peerDeviceId, &current));
    std::lock_guard<std::mutex> lock(gPeerMu);
    enabledPairs().insert({current, peerDeviceId});
    return Status::Ok();
  });
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
  return apiCall("aclrtDeviceDisablePeerAccess", [&]() -> Outcome {
    int current = -1;
    ACL_RETURN_IF_FAILED(currentAndPeer("aclrtDeviceDisablePeerAccess", peerDeviceId, &current));
    std::lock_guard<std::mutex> lock(gPeerMu);
    enabledPairs().erase({current, peerDeviceId});
    return Status::Ok();
  });
}

aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t* status) {
  return apiCall("aclrtDevicePeerAccessStatus", [&]() -> Outcome {
    const char* fn = "aclrtDevicePeerAccessStatus";
    if (status == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: status is null", fn);
    }
    int count = 0;
    COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
    if (deviceId < 0 || deviceId >= count || peerDeviceId < 0 || peerDeviceId >= count) {
      // CANN documents ACL_ERROR_RT_PARAM_INVALID for ids outside the visible range.
      return Outcome(ACL_ERROR_RT_PARAM_INVALID,
                     cohort::makeError(ErrorCode::kInvalidDevice,
                                       "{}: devices {} and {}: ids must be in 0..{}", fn, deviceId,
                                       peerDeviceId, count - 1));
    }
    *status = enabled(deviceId, peerDeviceId) ? 1 : 0;
    return Status::Ok();
  });
}

aclError aclrtMemP2PMap(void* devPtr, size_t size, int32_t dstDevId, uint64_t flags) {
  return apiCall("aclrtMemP2PMap", [&]() -> Outcome {
    const char* fn = "aclrtMemP2PMap";
    if (flags != 0 || size == 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: flags {} must be 0 and size > 0 (got {})", fn, flags, size);
    }
    cohort::acl::Place place;
    ACL_RETURN_IF_FAILED(cohort::acl::requireDeviceMemory(fn, "devPtr", devPtr, size, &place));
    const int owner = place.deviceId;
    if (!place.attributes.isDevice || owner < 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: devPtr {} is not memory of one of this process's devices", fn,
                               devPtr);
    }
    ACL_RETURN_IF_FAILED(checkDevice(fn, "dstDevId", dstDevId));
    if (dstDevId == owner) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: dstDevId {} owns the memory already", fn, dstDevId);
    }
    if (!enabled(dstDevId, owner)) {
      return cohort::makeError(ErrorCode::kInvalidUsage,
                               "{}: peer access from device {} to device {} is not enabled (call "
                               "aclrtDeviceEnablePeerAccess({}) on device {} first)",
                               fn, dstDevId, owner, owner, dstDevId);
    }
    return Status::Ok();  // the pages are reachable from every device already
  });
}

aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle, aclrtMemLinkType adviceLink) {
  return apiCall("aclrtMemMapSetLink", [&]() -> Outcome {
    const char* fn = "aclrtMemMapSetLink";
    if (handle == nullptr)
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: handle is null", fn);
    int device = -1;
    std::size_t size = 0;
    COHORT_RETURN_IF_ERROR(withName(fn, rt::vmmDescribe(static_cast<const rt::PhysicalMemory*>(handle), &device, &size)));
    if (static_cast<int>(adviceLink) < ACL_RT_MEM_ACCESS_LINK_SIO ||
        static_cast<int>(adviceLink) > ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH) {
      return Outcome(ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED,
                     cohort::makeError(ErrorCode::kInvalidArgument,
                                       "{}: adviceLink {} is not an aclrtMemLinkType (0..3)", fn,
                                       static_cast<int>(adviceLink)));
    }
    return Status::Ok();  // every link reaches the same RAM
  });
}

aclError aclrtMemMapSelectedLink(void* virPtrDst, size_t size, void* virPtrSrc, uint32_t linkIdx) {
  return apiCall("aclrtMemMapSelectedLink", [&]() -> Outcome {
    const char* fn = "aclrtMemMapSelectedLink";
    if (virPtrDst == nullptr || virPtrSrc == nullptr || size == 0 ||
        (linkIdx != ACL_RT_MEM_LINK_IDX_0 && linkIdx != ACL_RT_MEM_LINK_IDX_1)) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: needs two addresses, size > 0 and linkIdx 0 (SIO) or 1 (HCCS); "
                               "got linkIdx {}",
                               fn, linkIdx);
    }
    // Every link reaches the same RAM: virPtrDst maps the same physical pieces.
    return withName(fn, rt::vmmMapAlias(virPtrDst, virPtrSrc, size));
  });
}
