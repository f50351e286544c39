// What the memory entry points beyond the basics share: where a pointer is (device,
// host, or memory usable as either), extent checks against its allocation, copy kinds,
// and the streams they queue on.
#pragma once

#include <cstddef>

#include "acl/acl.h"
#include "acl/api_call.h"
#include "acl/entry_helpers.h"
#include "cohort/runtime.h"

namespace cohort::acl {

/// Where memory is, as the runtime sees it. A plain value.
struct Place {
  bool device = false;    ///< usable where device memory is wanted
  bool host = false;      ///< usable where host memory is wanted
  bool pageable = false;  ///< plain host memory: copies with it return after the copy
  bool known = false;     ///< inside an allocation or registration the runtime tracks
  int deviceId = -1;      ///< the owning device, when there is one
  const char* base = nullptr;
  std::size_t size = 0;
  runtime::PointerAttributes attributes;
};

/// Describes p (never fails for a non-null p: unknown memory is plain host memory).
Place placeOf(const void* p);

/// [p, p + bytes) must be null-free and, when the runtime knows p's allocation, inside
/// it. `role` names the argument in the message.
Outcome checkSpan(const char* function, const char* role, const void* p, std::size_t bytes,
                  const Place& place);

/// Device memory of this process (own allocations, mappings, imports, managed or
/// registered memory) holding `bytes` from p.
Outcome requireDeviceMemory(const char* function, const char* role, const void* p,
                            std::size_t bytes, Place* place);

/// An aclrtMemcpyKind as the runtime's kind; ACL_ERROR_INVALID_PARAM for other values.
Outcome toRuntimeKind(const char* function, aclrtMemcpyKind kind, runtime::MemcpyKind* out);

/// A null stream needs a current device (ACL_ERROR_RT_CONTEXT_NULL); others must be live.
Outcome checkStream(const char* function, aclrtStream stream);

/// The device a stream (null: the default stream) belongs to.
Outcome streamDevice(const char* function, aclrtStream stream, int* device);

/// Records that `device` may access `peer`'s memory, as aclrtDeviceEnablePeerAccess
/// (peer_api.cc) does; for imports that enable it themselves.
void enablePeerAccess(int device, int peer);

}  // namespace cohort::acl
