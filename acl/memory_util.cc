#include "acl/memory_util.h"

#include "common/error.h"

namespace cohort::acl {

namespace rt = runtime;

Place placeOf(const void* p) {
  Place place;
  if (!rt::pointerGetAttributes(p, &place.attributes).ok()) return place;
  const rt::PointerAttributes& a = place.attributes;
  // Registered host memory without MAPPED is host memory only; with it (and managed
  // memory) it is both.
  rt::HostRegistration registration;
  const bool mapped =
      a.isRegistered && rt::hostRegistration(p, &registration).ok() && registration.mapped;
  place.device = a.isDevice || mapped;
  place.host = !a.isDevice || a.isManaged;
  place.pageable = !a.isDevice && !a.isPinnedHost && !a.isRegistered;
  place.deviceId = a.device;
  place.base = static_cast<const char*>(a.allocationBase);
  place.size = a.allocationSize;
  place.known = a.allocationBase != nullptr;
  return place;
}

Outcome checkSpan(const char* function, const char* role, const void* p, std::size_t bytes,
                  const Place& place) {
  if (p == nullptr) return makeError(ErrorCode::kInvalidArgument, "{}: {} is null", function, role);
  if (!place.known || bytes == 0) return Status::Ok();
  const std::size_t left =
      place.size - static_cast<std::size_t>(static_cast<const char*>(p) - place.base);
  if (bytes > left) {
    return makeError(ErrorCode::kSizeOverflow,
                     "{}: {} bytes at {} {} overrun its allocation ({} bytes left of {} at {})",
                     function, bytes, role, p, left, place.size,
                     static_cast<const void*>(place.base));
  }
  return Status::Ok();
}

Outcome requireDeviceMemory(const char* function, const char* role, const void* p,
                            std::size_t bytes, Place* place) {
  if (p == nullptr) return makeError(ErrorCode::kInvalidArgument, "{}: {} is null", function, role);
  *place = placeOf(p);
  if (!place->device) {
    return makeError(ErrorCode::kInvalidArgument, "{}: {} {} is not device memory", function, role,
                     p);
  }
  if (!place->known) {  // inside a device's memory but in no live allocation
    return makeError(ErrorCode::kInvalidPointer,
                     "{}: {} {} lies in device memory but not in a live allocation (freed?)",
                     function, role, p);
  }
  return checkSpan(function, role, p, bytes, *place);
}

Outcome toRuntimeKind(const char* function, aclrtMemcpyKind kind, rt::MemcpyKind* out) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
      *out = rt::MemcpyKind::kHostToHost;
      return Status::Ok();
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
      *out = rt::MemcpyKind::kHostToDevice;
      return Status::Ok();
    case ACL_MEMCPY_DEVICE_TO_HOST:
      *out = rt::MemcpyKind::kDeviceToHost;
      return Status::Ok();
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE:
      *out = rt::MemcpyKind::kDeviceToDevice;
      return Status::Ok();
    case ACL_MEMCPY_DEFAULT:
      *out = rt::MemcpyKind::kDefault;
      return Status::Ok();
  }
  return makeError(ErrorCode::kInvalidArgument, "{}: kind {} is not an aclrtMemcpyKind (0..7)",
                   function, static_cast<int>(kind));
}

Outcome checkStream(const char* function, aclrtStream stream) {
  int device = -1;
  return streamDevice(function, stream, &device);
}

Outcome streamDevice(const char* function, aclrtStream stream, int* device) {
  if (stream == nullptr) {
    ACL_RETURN_IF_FAILED(requireDevice(function));
    return rt::getDevice(device);
  }
  Status s = rt::streamGetDevice(toStream(stream), device);
  if (!s.ok()) {
    return makeError(ErrorCode::kInvalidHandle, "{}: stream {} is not a live stream", function,
                     stream);
  }
  return Status::Ok();
}

}  // namespace cohort::acl
