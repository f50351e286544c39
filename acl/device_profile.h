// The hardware numbers an emulated device reports (aclrtGetDeviceInfo, the compute
// groups, the resource limits): those of the SoC Cohort's devices stand for, the
// Ascend910B4 (CANN's platform description of it). Nothing in Cohort runs on these
// cores; they are what a program asks about to size its work.
#pragma once

#include <cstdint>

namespace cohort::acl::profile {

inline constexpr int kAiCpuCores = 6;
inline constexpr int kAiCores = 20;  ///< each one cube core and two vector cores
inline constexpr int kCubeCores = 20;
inline constexpr int kVectorCores = 40;
inline constexpr std::int64_t kL2CacheBytes = 96ll << 20;
inline constexpr int kNpuArch = 2201;  ///< the SoC's architecture number
/// Streams a device schedules at once (ACL_GROUP_ASQNUM_INT); each copies on its own.
inline constexpr int kConcurrentStreams = 32;

}  // namespace cohort::acl::profile
