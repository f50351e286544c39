// Context extras and compute groups: the default stream, system parameters of a
// context and of the process, the saturation overflow flag (not supported) and the
// one compute group of each device (aclrtCtxGetCurrentDefaultStream ...
// aclrtGetGroupInfoDetail).
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "acl/acl.h"
#include "acl/device_profile.h"
#include "acl/entry_names.h"
#include "acl/registry.h"
#include "acl/unsupported.h"
#include "cohort/runtime.h"
#include "common/error.h"

/// The compute groups of a device (aclrtGroupInfo): Cohort's devices have one group
/// holding all of their cores.
struct tagRtGroupInfo {
  int32_t device;
  int32_t values[6];  // by aclrtGroupAttr
};

namespace {

namespace profile = cohort::acl::profile;
using cohort::acl::Registry;

// aclSysParamOpt values: DETERMINISTIC takes 0..3, the others 0 or 1.
Outcome checkParam(const char* function, aclSysParamOpt opt, int64_t value) {
  int64_t max = 0;
  constexpr int kStrongConsistency = 2;  // ACL_OPT_STRONG_CONSISTENCY, deprecated
  switch (static_cast<int>(opt)) {
    case ACL_OPT_DETERMINISTIC:
      max = 3;
      break;
    case ACL_OPT_ENABLE_DEBUG_KERNEL:
    case kStrongConsistency:
    case ACL_OPT_ENABLE_KERNEL_EARLY_START:
      max = 1;
      break;
    default:
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: opt {} is not an aclSysParamOpt",
                               function, static_cast<int>(opt));
  }
  if (value < 0 || value > max) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: value {} for option {} is out of range [0, {}]", function, value,
                             static_cast<int>(opt), max);
  }
  return Status::Ok();
}

// Process-wide system parameters and the live group infos. Never destroyed.
struct ProcessState {
  std::mutex mu;
  std::map<int, int64_t> sysParams;
  std::set<const tagRtGroupInfo*> groupInfos;
};

ProcessState& process() {
  static auto* s = new ProcessState();
  return *s;
}

void fillGroups(tagRtGroupInfo* info, int device) {
  info->device = device;
  info->values[ACL_GROUP_AICORE_INT] = profile::kAiCores;
  info->values[ACL_GROUP_AIV_INT] = profile::kVectorCores;
  info->values[ACL_GROUP_AIC_INT] = profile::kAiCpuCores;
  info->values[ACL_GROUP_SDMANUM_INT] = profile::kConcurrentStreams;
  info->values[ACL_GROUP_ASQNUM_INT] = profile::kConcurrentStreams;
  info->values[ACL_GROUP_GROUPID_INT] = 0;
}

Outcome checkGroupInfo(const char* function, const aclrtGroupInfo* groupInfo) {
  if (groupInfo == nullptr) return nullArgument(function, "groupInfo");
  ProcessState& s = process();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.groupInfos.count(groupInfo) == 0) {
    return Outcome(ACL_ERROR_INVALID_PARAM,
                   cohort::makeError(ErrorCode::kInvalidHandle,
                                     "{}: {} was not made by aclrtCreateGroupInfo (or was "
                                     "destroyed)",
                                     function, static_cast<const void*>(groupInfo)));
  }
  return Status::Ok();
}

}  // namespace

aclError aclrtCtxGetCurrentDefaultStream(aclrtStream* stream) {
  const char* fn = "aclrtCtxGetCurrentDefaultStream";
  return apiCall(fn, [&]() -> Outcome {
    if (stream == nullptr) return nullArgument(fn, "stream");
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    rt::Stream* found = nullptr;
    COHORT_RETURN_IF_ERROR(rt::defaultStream(&found));
    *stream = found;
    return Status::Ok();
  });
}

aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  const char* fn = "aclrtCtxSetSysParamOpt";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkParam(fn, opt, value));
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    Status st = Registry::get().setContextParam(opt, value);
    if (!st.ok()) return Outcome(ACL_ERROR_RT_CONTEXT_NULL, st);
    return Status::Ok();
  });
}

aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t* value) {
  const char* fn = "aclrtCtxGetSysParamOpt";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    ACL_RETURN_IF_FAILED(checkParam(fn, opt, 0));
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    bool found = false;
    int64_t stored = 0;
    Status st = Registry::get().contextParam(opt, &stored, &found);
    if (!st.ok()) return Outcome(ACL_ERROR_RT_CONTEXT_NULL, st);
    if (!found) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: option {} was never set on the current context "
                               "(aclrtCtxSetSysParamOpt); context options have no default",
                               fn, static_cast<int>(opt));
    }
    *value = stored;
    return Status::Ok();
  });
}

aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
  const char* fn = "aclrtSetSysParamOpt";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkParam(fn, opt, value));
    ProcessState& s = process();
    std::lock_guard<std::mutex> lock(s.mu);
    s.sysParams[opt] = value;
    return Status::Ok();
  });
}

aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t* value) {
  const char* fn = "aclrtGetSysParamOpt";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    ACL_RETURN_IF_FAILED(checkParam(fn, opt, 0));
    ProcessState& s = process();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.sysParams.find(opt);
    *value = it == s.sysParams.end() ? 0 : it->second;  // unset options are off
    return Status::Ok();
  });
}

aclError aclrtCtxGetFloatOverflowAddr(void**) {
  return cohort::acl::notSupported("aclrtCtxGetFloatOverflowAddr",
                                   "Cohort's arithmetic never saturates (IEEE 754 inf/NaN), so "
                                   "there is no overflow flag");
}

aclError aclrtSetGroup(int32_t groupId) {
  const char* fn = "aclrtSetGroup";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    if (groupId != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: group {} does not exist: the device has one group, 0", fn,
                               groupId);
    }
    return Status::Ok();
  });
}

aclError aclrtGetGroupCount(uint32_t* count) {
  const char* fn = "aclrtGetGroupCount";
  return apiCall(fn, [&]() -> Outcome {
    if (count == nullptr) return nullArgument(fn, "count");
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    *count = 1;
    return Status::Ok();
  });
}

aclrtGroupInfo* aclrtCreateGroupInfo(void) {
  tagRtGroupInfo* created = nullptr;
  const char* fn = "aclrtCreateGroupInfo";
  (void)apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    int device = -1;
    COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
    created = new tagRtGroupInfo();
    fillGroups(created, device);
    ProcessState& s = process();
    std::lock_guard<std::mutex> lock(s.mu);
    s.groupInfos.insert(created);
    return Status::Ok();
  });
  return created;
}

aclError aclrtDestroyGroupInfo(aclrtGroupInfo* groupInfo) {
  const char* fn = "aclrtDestroyGroupInfo";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkGroupInfo(fn, groupInfo));
    {
      ProcessState& s = process();
      std::lock_guard<std::mutex> lock(s.mu);
      s.groupInfos.erase(groupInfo);
    }
    delete groupInfo;
    return Status::Ok();
  });
}

aclError aclrtGetAllGroupInfo(aclrtGroupInfo* groupInfo) {
  const char* fn = "aclrtGetAllGroupInfo";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkGroupInfo(fn, groupInfo));
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    int device = -1;
    COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
    fillGroups(groupInfo, device);
    return Status::Ok();
  });
}

aclError aclrtGetGroupInfoDetail(const aclrtGroupInfo* groupInfo, int32_t groupIndex,
                                 aclrtGroupAttr attr, void* attrValue, size_t valueLen,
                                 size_t* paramRetSize) {
  const char* fn = "aclrtGetGroupInfoDetail";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkGroupInfo(fn, groupInfo));
    if (attrValue == nullptr) return nullArgument(fn, "attrValue");
    if (paramRetSize == nullptr) return nullArgument(fn, "paramRetSize");
    if (groupIndex != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: groupIndex {} is out of range: there is 1 group (index 0)", fn,
                               groupIndex);
    }
    if (attr < ACL_GROUP_AICORE_INT || attr > ACL_GROUP_GROUPID_INT) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: attr {} is not an aclrtGroupAttr",
                               fn, static_cast<int>(attr));
    }
    if (valueLen < sizeof(int32_t)) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: valueLen {} is less than the {} bytes of the value", fn,
                               valueLen, sizeof(int32_t));
    }
    const int32_t value = groupInfo->values[attr];
    std::memcpy(attrValue, &value, sizeof value);
    *paramRetSize = sizeof value;
    return Status::Ok();
  });
}
