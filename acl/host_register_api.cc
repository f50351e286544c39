// Host memory registration (aclrtHostRegister ... aclrtHostMemMapCapabilities). The
// emulated devices compute on host RAM, so a registered range needs no second mapping:
// its device address is its host address, and the runtime accepts it wherever device
// memory is wanted (copies on either side, memsets, kernels, collectives).
#include <cstdint>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

constexpr std::uint32_t kV2Flags =
    ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;

Outcome registerRange(const char* fn, void* ptr, std::uint64_t size, bool mapped) {
  if (ptr == nullptr || size == 0) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: ptr is null or size is 0", fn);
  }
  ACL_RETURN_IF_FAILED(requireDevice(fn));
  int device = -1;
  COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
  COHORT_RETURN_IF_ERROR(withName(fn, rt::hostRegister(ptr, static_cast<std::size_t>(size), mapped, device)));
  return Status::Ok();
}

}  // namespace

aclError aclrtHostRegister(void* ptr, uint64_t size, aclrtHostRegisterType type, void** devPtr) {
  return apiCall("aclrtHostRegister", [&]() -> Outcome {
    const char* fn = "aclrtHostRegister";
    if (devPtr == nullptr)
      return Status(ErrorCode::kInvalidArgument, "aclrtHostRegister: devPtr is null");
    if (type == ACL_HOST_REGISTER_IOMEMORY || type == ACL_HOST_REGISTER_READONLY) {
      return cohort::makeError(ErrorCode::kNotSupported,
                               "{}: type {} is reserved and not supported (as in CANN)", fn,
                               static_cast<int>(type));
    }
    if (type != ACL_HOST_REGISTER_MAPPED) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: type {} is not an aclrtHostRegisterType", fn,
                               static_cast<int>(type));
    }
    ACL_RETURN_IF_FAILED(registerRange(fn, ptr, size, /*mapped=*/true));
    *devPtr = ptr;  // one RAM: the device address is the host address
    return Status::Ok();
  });
}

aclError aclrtHostRegisterV2(void* ptr, uint64_t size, uint32_t flag) {
  return apiCall("aclrtHostRegisterV2", [&]() -> Outcome {
    const char* fn = "aclrtHostRegisterV2";
    if (flag == 0 || (flag & ~kV2Flags) != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: flag {:#x} is not a set of ACL_HOST_REG_* flags", fn, flag);
    }
    if ((flag & (ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY)) != 0) {
      return cohort::makeError(ErrorCode::kNotSupported,
                               "{}: ACL_HOST_REG_IOMEMORY and ACL_HOST_REG_READONLY are reserved "
                               "and not supported (as in CANN)",
                               fn);
    }
    if ((flag & ACL_HOST_REG_PINNED) != 0 && ptr != nullptr) {
      rt::PointerAttributes a;
      COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(ptr, &a));
      if (a.isPinnedHost) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: {} is page-locked already (aclrtMallocHost memory): "
                                 "ACL_HOST_REG_PINNED is for pageable memory",
                                 fn, ptr);
      }
    }
    return registerRange(fn, ptr, size, (flag & ACL_HOST_REG_MAPPED) != 0);
  });
}

aclError aclrtHostUnregister(void* ptr) {
  return apiCall("aclrtHostUnregister", [&]() -> Outcome {
    if (ptr == nullptr)
      return Status(ErrorCode::kInvalidArgument, "aclrtHostUnregister: ptr is null");
    Status s = rt::hostUnregister(ptr);
    if (!s.ok()) return cohort::makeError(s.code(), "aclrtHostUnregister: {}", s.message());
    return Status::Ok();
  });
}

aclError aclrtHostGetDevicePointer(void* pHost, void** pDevice, uint32_t flag) {
  return apiCall("aclrtHostGetDevicePointer", [&]() -> Outcome {
    const char* fn = "aclrtHostGetDevicePointer";
    if (pHost == nullptr || pDevice == nullptr || flag != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: pHost and pDevice must be non-null and flag 0 (got {})", fn,
                               flag);
    }
    rt::HostRegistration registration;
    COHORT_RETURN_IF_ERROR(withName(fn, rt::hostRegistration(pHost, &registration)));
    if (!registration.mapped) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: {} was registered without ACL_HOST_REG_MAPPED: it has no "
                               "device address",
                               fn, pHost);
    }
    *pDevice = pHost;
    return Status::Ok();
  });
}

aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType,
                                     aclrtHostMemMapCapability* capabilities) {
  return apiCall("aclrtHostMemMapCapabilities", [&]() -> Outcome {
    const char* fn = "aclrtHostMemMapCapabilities";
    if (capabilities == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: capabilities is null", fn);
    }
    if (static_cast<int>(hacType) < ACL_RT_HAC_TYPE_STARS ||
        static_cast<int>(hacType) > ACL_RT_HAC_TYPE_CCU) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: hacType {} is not an aclrtHacType (0..9)", fn,
                               static_cast<int>(hacType));
    }
    rt::DeviceInfo info;
    COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(static_cast<int>(deviceId), &info));
    // Every engine of an emulated device is host code reading host RAM.
    *capabilities = ACL_RT_HOST_MEM_MAP_SUPPORTED;
    return Status::Ok();
  });
}
