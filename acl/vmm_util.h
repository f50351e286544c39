// What the virtual-memory entry points (vmm_*_api.cc) share: the creator's properties
// of a physical allocation, kept by the runtime as one opaque number (importers in
// other processes see it too).
#pragma once

#include <cstdint>

#include "acl/acl.h"

namespace cohort::acl {

/// handleType in the high half, memAttr in the low one; the allocation type is always
/// PINNED and the location a device.
inline std::uint64_t packAttributes(const aclrtPhysicalMemProp& prop) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(prop.handleType)) << 32 |
         static_cast<std::uint32_t>(prop.memAttr);
}

/// The properties of an allocation of `device` created with `attributes`.
inline aclrtPhysicalMemProp unpackAttributes(std::uint64_t attributes, int device) {
  aclrtPhysicalMemProp prop{};
  prop.handleType = static_cast<aclrtMemHandleType>(static_cast<int>(attributes >> 32));
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = static_cast<aclrtMemAttr>(static_cast<int>(attributes & 0xFFFFFFFFu));
  prop.location.id = static_cast<std::uint32_t>(device);
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.reserve = 0;
  return prop;
}

}  // namespace cohort::acl
