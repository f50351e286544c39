// What a device is: its attributes, capabilities, identity (UUID, PCI address),
// topology, status and the run mode (aclrtGetDeviceInfo ... aclrtDeviceL2CacheFlush).
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "acl/acl.h"
#include "acl/device_profile.h"
#include "acl/entry_names.h"
#include "acl/unsupported.h"
#include "cohort/runtime.h"
#include "common/config.h"
#include "common/error.h"
#include "common/hash.h"

namespace {

namespace profile = cohort::acl::profile;

// The device's runtime description; kInvalidDevice (ACL_ERROR_RT_INVALID_DEVICEID)
// naming the visible range when the id is not a visible device.
Outcome describe(const char* function, int64_t device, rt::DeviceInfo* info) {
  if (device < 0 || device > INT32_MAX) {
    return cohort::makeError(ErrorCode::kInvalidDevice, "{}: device {} does not exist", function,
                             device);
  }
  return describeDevice(function, static_cast<int>(device), info);
}

Outcome notSupportedHere(const char* function, const char* what) {
  return failure(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ErrorCode::kNotSupported, function, "{}", what);
}

// What identifies this node: COHORT_HOST_ID, else the machine id, else the host name.
std::string nodeIdentity() {
  const std::string& configured = cohort::Config::global().hostId;
  if (!configured.empty()) return configured;
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (in >> id && !id.empty()) return id;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

// The emulated PCI address of a device: bus 1 + its id on the node.
std::string pciBusIdOf(int physicalId) {
  char text[16];
  std::snprintf(text, sizeof text, "0000:%02x:00.0", 1 + physicalId);
  return text;
}

// "DDDD:BB:SS.F" in hexadecimal digits of either case, nothing before or after.
bool parsePciBusId(const char* text, unsigned* domain, unsigned* bus, unsigned* slot,
                   unsigned* function) {
  const int widths[4] = {4, 2, 2, 1};
  const char separators[4] = {':', ':', '.', '\0'};
  unsigned* fields[4] = {domain, bus, slot, function};
  const char* p = text;
  for (int i = 0; i < 4; ++i) {
    unsigned value = 0;
    for (int k = 0; k < widths[i]; ++k, ++p) {
      if (!std::isxdigit(static_cast<unsigned char>(*p))) return false;
      value = value * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(*p))
                                                     ? *p - '0'
                                                     : std::tolower(*p) - 'a' + 10);
    }
    if (*p != separators[i]) return false;
    if (i < 3) ++p;
    *fields[i] = value;
  }
  return true;
}

Outcome checkOperations(const char* function, uint32_t* capabilities,
                        const aclrtAtomicOperation* operations, uint32_t count) {
  if (count == 0) return Status::Ok();
  if (capabilities == nullptr) return nullArgument(function, "capabilities");
  if (operations == nullptr) return nullArgument(function, "operations");
  for (uint32_t i = 0; i < count; ++i) {
    const int op = static_cast<int>(operations[i]);
    const bool known =
        (op >= ACL_RT_ATOMIC_OPERATION_INTEGER_ADD && op <= ACL_RT_ATOMIC_OPERATION_FLOAT_MAX) ||
        (op >= ACL_RT_ATOMIC_OPERATION_DMA_ADD && op <= ACL_RT_ATOMIC_OPERATION_DMA_MAX) ||
        (op >= ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD &&
         op <= ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH);
    if (!known) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: operations[{}] = {} is not an aclrtAtomicOperation", function,
                               i, op);
    }
  }
  // No device code runs on Cohort, so no device issues an atomic operation.
  for (uint32_t i = 0; i < count; ++i) capabilities[i] = 0;
  return Status::Ok();
}

}  // namespace

// Allowed before aclInit and after aclFinalize, as CANN's is: programs ask it first,
// to choose how to allocate.
aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  return apiCallAnyTime("aclrtGetRunMode", [&]() -> Outcome {
    if (runMode == nullptr) return nullArgument("aclrtGetRunMode", "runMode");
    // The program is a host process; the emulated devices are attached to the host.
    *runMode = ACL_HOST;
    return Status::Ok();
  });
}

aclError aclrtSetTsDevice(aclrtTsId tsId) {
  return apiCall("aclrtSetTsDevice", [&]() -> Outcome {
    if (tsId != ACL_TS_ID_AICORE && tsId != ACL_TS_ID_AIVECTOR) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtSetTsDevice: tsId {} is neither ACL_TS_ID_AICORE (0) nor "
                               "ACL_TS_ID_AIVECTOR (1)",
                               static_cast<int>(tsId));
    }
    return Status::Ok();  // one scheduler serves both
  });
}

aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo* utilizationInfo) {
  const char* fn = "aclrtGetDeviceUtilizationRate";
  return apiCall(fn, [&]() -> Outcome {
    if (utilizationInfo == nullptr) return nullArgument(fn, "utilizationInfo");
    if (utilizationInfo->utilizationExtend != nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: utilizationExtend is reserved and must be NULL", fn);
    }
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    // Nothing is measured, which CANN reports as -1.
    utilizationInfo->cubeUtilization = -1;
    utilizationInfo->vectorUtilization = -1;
    utilizationInfo->aicpuUtilization = -1;
    utilizationInfo->memoryUtilization = -1;
    return Status::Ok();
  });
}

aclError aclrtQueryDeviceStatus(int32_t deviceId, aclrtDeviceStatus* deviceStatus) {
  const char* fn = "aclrtQueryDeviceStatus";
  return apiCall(fn, [&]() -> Outcome {
    if (deviceStatus == nullptr) return nullArgument(fn, "deviceStatus");
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    *deviceStatus = ACL_RT_DEVICE_STATUS_NORMAL;
    return Status::Ok();
  });
}

aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t* value) {
  const char* fn = "aclrtGetDeviceInfo";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    switch (attr) {
      case ACL_DEV_ATTR_AICPU_CORE_NUM:
        *value = profile::kAiCpuCores;
        break;
      case ACL_DEV_ATTR_AICORE_CORE_NUM:
        *value = profile::kAiCores;
        break;
      case ACL_DEV_ATTR_CUBE_CORE_NUM:
        *value = profile::kCubeCores;
        break;
      case ACL_DEV_ATTR_VECTOR_CORE_NUM:
        *value = profile::kVectorCores;
        break;
      case ACL_DEV_ATTR_WARP_SIZE:
      case ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE:
      case ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE:
      case ACL_DEV_ATTR_MAX_GRID_DIM_X:
      case ACL_DEV_ATTR_MAX_GRID_DIM_Y:
      case ACL_DEV_ATTR_MAX_GRID_DIM_Z:
      case ACL_DEV_ATTR_MAX_BLOCK_PER_GRID:
      case ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK:
      case ACL_DEV_ATTR_MAX_BLOCK_DIM_X:
      case ACL_DEV_ATTR_MAX_BLOCK_DIM_Y:
      case ACL_DEV_ATTR_MAX_BLOCK_DIM_Z:
        *value = 0;
        break;  // no SIMT on the SoC emulated
      case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE:
        *value = static_cast<int64_t>(info.memoryTotal);
        break;
      case ACL_DEV_ATTR_L2_CACHE_SIZE:
        *value = profile::kL2CacheBytes;
        break;
      case ACL_DEV_ATTR_SMP_ID:
        *value = 0;
        break;  // every device of the node: one OS
      case ACL_DEV_ATTR_PHY_CHIP_ID:
        *value = info.physicalId;
        break;
      case ACL_DEV_ATTR_CUST_OP_PRIVILEGE:
        *value = 0;
        break;
      case ACL_DEV_ATTR_MAINBOARD_ID:
        *value = 0;
        break;  // the node's one board
      case ACL_DEV_ATTR_IS_VIRTUAL:
        *value = 0;
        break;
      case ACL_DEV_ATTR_NPU_ARCH:
        *value = profile::kNpuArch;
        break;
      case ACL_DEV_ATTR_SUPER_POD_DEVICE_ID:
      case ACL_DEV_ATTR_SUPER_POD_SERVER_ID:
      case ACL_DEV_ATTR_SUPER_POD_ID:
        return notSupportedHere(fn, "the devices are in no super pod");
      case ACL_DEV_ATTR_HD_CONNECT_TYPE:
      case ACL_DEV_ATTR_DEVICE_FORM_FACTOR:
        return notSupportedHere(fn, "the SoC emulated does not report this attribute");
      default:
        return cohort::makeError(ErrorCode::kInvalidArgument, "{}: attr {} is not an aclrtDevAttr",
                                 fn, static_cast<int>(attr));
    }
    return Status::Ok();
  });
}

aclError aclrtDeviceGetStreamPriorityRange(int32_t* leastPriority, int32_t* greatestPriority) {
  const char* fn = "aclrtDeviceGetStreamPriorityRange";
  return apiCall(fn, [&]() -> Outcome {
    if (leastPriority == nullptr) return nullArgument(fn, "leastPriority");
    if (greatestPriority == nullptr) return nullArgument(fn, "greatestPriority");
    *leastPriority = 7;
    *greatestPriority = 0;
    return Status::Ok();
  });
}

aclError aclrtGetDeviceCapability(int32_t deviceId, aclrtDevFeatureType devFeatureType,
                                  int32_t* value) {
  const char* fn = "aclrtGetDeviceCapability";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    if (devFeatureType != ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV &&
        devFeatureType != ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: devFeatureType {} is not an aclrtDevFeatureType", fn,
                               static_cast<int>(devFeatureType));
    }
    *value = ACL_DEV_FEATURE_NOT_SUPPORT;  // no AI Core tasks to update, no memory queues
    return Status::Ok();
  });
}

aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid* uuid) {
  const char* fn = "aclrtDeviceGetUuid";
  return apiCall(fn, [&]() -> Outcome {
    if (uuid == nullptr) return nullArgument(fn, "uuid");
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    // Name-based: the same node and physical device give the same UUID in every process.
    const std::string name =
        "cohort-device:" + nodeIdentity() + ":" + std::to_string(info.physicalId);
    const std::uint64_t halves[2] = {cohort::fnv1a(name),
                                     cohort::fnv1a(name, 0x84222325cbf29ce4ull)};
    std::memcpy(uuid->bytes, halves, sizeof halves);
    uuid->bytes[6] = static_cast<char>((uuid->bytes[6] & 0x0f) | 0x50);  // version 5 layout
    uuid->bytes[8] = static_cast<char>((uuid->bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
    return Status::Ok();
  });
}

aclError aclrtDeviceSetLimit(aclrtDeviceLimit, size_t) {
  return cohort::acl::notSupported("aclrtDeviceSetLimit",
                                   "no kernel runs on an emulated device, so there is no kernel "
                                   "stack or printf buffer to size");
}

aclError aclrtDeviceGetLimit(aclrtDeviceLimit, size_t*) {
  return cohort::acl::notSupported("aclrtDeviceGetLimit",
                                   "no kernel runs on an emulated device, so there is no kernel "
                                   "stack or printf buffer to size");
}

aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char* pciBusId, int32_t len) {
  const char* fn = "aclrtDeviceGetPCIBusId";
  return apiCall(fn, [&]() -> Outcome {
    if (pciBusId == nullptr) return nullArgument(fn, "pciBusId");
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    const std::string id = pciBusIdOf(info.physicalId);
    if (len < static_cast<int32_t>(id.size() + 1)) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: len {} is too small for \"{}\" (at least {})", fn, len, id,
                               id.size() + 1);
    }
    std::memcpy(pciBusId, id.c_str(), id.size() + 1);
    return Status::Ok();
  });
}

aclError aclrtDeviceGetByPCIBusId(const char* pciBusId, int32_t* deviceId) {
  const char* fn = "aclrtDeviceGetByPCIBusId";
  return apiCall(fn, [&]() -> Outcome {
    if (pciBusId == nullptr) return nullArgument(fn, "pciBusId");
    if (deviceId == nullptr) return nullArgument(fn, "deviceId");
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    if (!parsePciBusId(pciBusId, &domain, &bus, &slot, &function)) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: \"{}\" is not a PCI bus id (domain:bus:device.function)", fn,
                               pciBusId);
    }
    int count = 0;
    COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
    for (int d = 0; d < count; ++d) {
      rt::DeviceInfo info;
      COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(d, &info));
      if (domain == 0 && slot == 0 && function == 0 &&
          bus == static_cast<unsigned>(1 + info.physicalId)) {
        *deviceId = d;
        return Status::Ok();
      }
    }
    return cohort::makeError(ErrorCode::kInvalidDevice,
                             "{}: no visible device has PCI bus id \"{}\"", fn, pciBusId);
  });
}

aclError aclrtDeviceGetHostAtomicCapabilities(uint32_t* capabilities,
                                              const aclrtAtomicOperation* operations,
                                              const uint32_t count, int32_t deviceId) {
  const char* fn = "aclrtDeviceGetHostAtomicCapabilities";
  return apiCall(fn, [&]() -> Outcome {
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    return checkOperations(fn, capabilities, operations, count);
  });
}

aclError aclrtDeviceGetP2PAtomicCapabilities(uint32_t* capabilities,
                                             const aclrtAtomicOperation* operations,
                                             const uint32_t count, int32_t srcDeviceId,
                                             int32_t dstDeviceId) {
  const char* fn = "aclrtDeviceGetP2PAtomicCapabilities";
  return apiCall(fn, [&]() -> Outcome {
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, srcDeviceId, &info));
    ACL_RETURN_IF_FAILED(describe(fn, dstDeviceId, &info));
    return checkOperations(fn, capabilities, operations, count);
  });
}

aclError aclrtDeviceGetBareTgid(int32_t* pid) {
  return apiCall("aclrtDeviceGetBareTgid", [&]() -> Outcome {
    if (pid == nullptr) return nullArgument("aclrtDeviceGetBareTgid", "pid");
    *pid = static_cast<int32_t>(getpid());
    return Status::Ok();
  });
}

aclError aclrtGetDevicesTopo(uint32_t deviceId, uint32_t otherDeviceId, uint64_t* value) {
  const char* fn = "aclrtGetDevicesTopo";
  return apiCall(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    rt::DeviceInfo info;
    ACL_RETURN_IF_FAILED(describe(fn, deviceId, &info));
    ACL_RETURN_IF_FAILED(describe(fn, otherDeviceId, &info));
    if (deviceId == otherDeviceId) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: deviceId and otherDeviceId are both {}: a device has no link "
                               "to itself",
                               fn, deviceId);
    }
    *value = ACL_RT_DEVS_TOPOLOGY_HCCS;  // what Cohort's intra-node links stand for
    return Status::Ok();
  });
}

aclError aclrtDeviceL2CacheFlush(void* rsv) {
  const char* fn = "aclrtDeviceL2CacheFlush";
  return apiCall(fn, [&]() -> Outcome {
    if (rsv != nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: rsv is reserved and must be NULL",
                               fn);
    }
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    // Device memory is coherent host memory: nothing to write back.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return Status::Ok();
  });
}
