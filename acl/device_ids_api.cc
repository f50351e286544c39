// Device id mappings (aclrtGetLogicDevIdByUserDevId ... aclrtGetPhyDevIdByUserDevId).
//
// CANN has three ids: the user id (what aclrtSetDevice takes: an index into
// ASCEND_RT_VISIBLE_DEVICES), the logical id (the id on the node, as that variable
// lists it) and the physical id (the logical id as the host outside a container sees
// it). Cohort's visible devices are indexed the same way (COHORT_VISIBLE_DEVICES /
// ASCEND_RT_VISIBLE_DEVICES), its devices' node ids are the logical ids, and it runs
// in no container of its own, so the physical id equals the logical one.
#include "acl/acl.h"
#include "acl/entry_names.h"
#include "cohort/runtime.h"
#include "common/config.h"
#include "common/error.h"

namespace {

// The node id of visible device `user`.
Outcome nodeIdOf(const char* function, int32_t user, int32_t* nodeId) {
  rt::DeviceInfo info;
  Status st = rt::getDeviceInfo(user, &info);
  if (!st.ok()) {
    return cohort::makeError(st.code(), "{}: user device id {}: {}", function, user, st.message());
  }
  *nodeId = info.physicalId;
  return Status::Ok();
}

// The user id of the device whose node id is `nodeId` (kInvalidDevice when that
// device exists on the node but is not visible, or does not exist).
Outcome userIdOf(const char* function, int32_t nodeId, int32_t* user) {
  int count = 0;
  COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    rt::DeviceInfo info;
    COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(d, &info));
    if (info.physicalId == nodeId) {
      *user = d;
      return Status::Ok();
    }
  }
  return cohort::makeError(ErrorCode::kInvalidDevice,
                           "{}: device {} of the node is not visible to this process "
                           "(ASCEND_RT_VISIBLE_DEVICES / COHORT_VISIBLE_DEVICES)",
                           function, nodeId);
}

// A logical (or physical) id must name a device of the node.
Outcome checkNodeId(const char* function, int32_t nodeId) {
  const int onNode = cohort::Config::global().deviceCount;
  if (nodeId < 0 || nodeId >= onNode) {
    return cohort::makeError(ErrorCode::kInvalidDevice,
                             "{}: device {} does not exist: the node has {} (ids 0..{}; "
                             "COHORT_DEVICE_COUNT)",
                             function, nodeId, onNode, onNode - 1);
  }
  return Status::Ok();
}

template <typename Map>
aclError mapId(const char* function, int32_t in, int32_t* out, Map&& map) {
  return apiCall(function, [&]() -> Outcome {
    if (out == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: the output pointer is null",
                               function);
    }
    int32_t result = -1;
    ACL_RETURN_IF_FAILED(map(in, &result));
    *out = result;
    return Status::Ok();
  });
}

}  // namespace

aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t* const logicDevId) {
  const char* fn = "aclrtGetLogicDevIdByUserDevId";
  return mapId(fn, userDevid, logicDevId,
               [&](int32_t in, int32_t* out) { return nodeIdOf(fn, in, out); });
}

aclError aclrtGetUserDevIdByLogicDevId(const int32_t logicDevId, int32_t* const userDevid) {
  const char* fn = "aclrtGetUserDevIdByLogicDevId";
  return mapId(fn, logicDevId, userDevid, [&](int32_t in, int32_t* out) -> Outcome {
    ACL_RETURN_IF_FAILED(checkNodeId(fn, in));
    return userIdOf(fn, in, out);
  });
}

aclError aclrtGetLogicDevIdByPhyDevId(const int32_t phyDevId, int32_t* const logicDevId) {
  const char* fn = "aclrtGetLogicDevIdByPhyDevId";
  return mapId(fn, phyDevId, logicDevId, [&](int32_t in, int32_t* out) -> Outcome {
    ACL_RETURN_IF_FAILED(checkNodeId(fn, in));
    *out = in;
    return Status::Ok();
  });
}

aclError aclrtGetPhyDevIdByLogicDevId(const int32_t logicDevId, int32_t* const phyDevId) {
  const char* fn = "aclrtGetPhyDevIdByLogicDevId";
  return mapId(fn, logicDevId, phyDevId, [&](int32_t in, int32_t* out) -> Outcome {
    ACL_RETURN_IF_FAILED(checkNodeId(fn, in));
    *out = in;
    return Status::Ok();
  });
}

aclError aclrtGetUserDevIdByPhyDevId(const int32_t phyDevId, int32_t* const userDevId) {
  const char* fn = "aclrtGetUserDevIdByPhyDevId";
  return mapId(fn, phyDevId, userDevId, [&](int32_t in, int32_t* out) -> Outcome {
    ACL_RETURN_IF_FAILED(checkNodeId(fn, in));
    return userIdOf(fn, in, out);
  });
}

aclError aclrtGetPhyDevIdByUserDevId(const int32_t userDevId, int32_t* const phyDevId) {
  const char* fn = "aclrtGetPhyDevIdByUserDevId";
  return mapId(fn, userDevId, phyDevId,
               [&](int32_t in, int32_t* out) { return nodeIdOf(fn, in, out); });
}
