// Regular test clusters for `cohort-ranktable generate` and for tests.
#include <fmt/format.h>

#include "cohort/ranktable.h"
#include "common/error.h"
#include "ranktable/ip_address.h"

namespace cohort::ranktable {

namespace {
constexpr long kMaxServers = 1 << 16;
constexpr long kMaxDevicesPerServer = 1 << 10;
constexpr long kMaxRanks = 1 << 20;

Status checkOptions(const GenerateOptions& o, std::uint32_t* deviceBase, std::uint32_t* hostBase) {
  if (o.servers < 1 || o.servers > kMaxServers) {
    return makeError(ErrorCode::kInvalidArgument, "servers: {} is not in 1..{}", o.servers,
                     kMaxServers);
  }
  if (o.devicesPerServer < 1 || o.devicesPerServer > kMaxDevicesPerServer) {
    return makeError(ErrorCode::kInvalidArgument, "devices per server: {} is not in 1..{}",
                     o.devicesPerServer, kMaxDevicesPerServer);
  }
  const long ranks = static_cast<long>(o.servers) * o.devicesPerServer;
  if (ranks > kMaxRanks) {
    return makeError(ErrorCode::kInvalidArgument, "{} ranks: more than {}", ranks, kMaxRanks);
  }
  if (o.serversPerSuperPod < 0) {
    return makeError(ErrorCode::kInvalidArgument, "servers per super pod: {} is negative",
                     o.serversPerSuperPod);
  }
  if (!parseIpv4(o.deviceIpBase, deviceBase) || !parseIpv4(o.hostIpBase, hostBase)) {
    return makeError(ErrorCode::kInvalidArgument, "IP bases \"{}\", \"{}\": need IPv4 A.B.C.D",
                     o.deviceIpBase, o.hostIpBase);
  }
  if (0xffffffffull - *deviceBase < static_cast<unsigned long long>(ranks - 1) ||
      0xffffffffull - *hostBase < static_cast<unsigned long long>(o.servers - 1)) {
    return makeError(ErrorCode::kInvalidArgument, "IP addresses run out above {} or {}",
                     o.deviceIpBase, o.hostIpBase);
  }
  return Status::Ok();
}
}  // namespace

Status generateCluster(const GenerateOptions& options, ClusterSpec* spec) {
  std::uint32_t deviceBase = 0;
  std::uint32_t hostBase = 0;
  COHORT_RETURN_IF_ERROR(recordError(checkOptions(options, &deviceBase, &hostBase)));
  const int perPod = options.serversPerSuperPod;
  const int devices = options.devicesPerServer;
  ClusterSpec out;
  out.version = perPod > 0 ? "1.2" : "1.0";
  for (int s = 0; s < options.servers; ++s) {
    ServerInfo server;
    server.hostIp = formatIpv4(hostBase + s);
    server.serverId = server.hostIp;
    if (perPod > 0) {
      if (s % perPod == 0) out.superPods.push_back(SuperPod{std::to_string(s / perPod), {}});
      out.superPods.back().servers.push_back(s);
      server.superPodId = out.superPods.back().superPodId;
    }
    for (int d = 0; d < devices; ++d) {
      RankInfo rank;
      rank.rankId = s * devices + d;
      rank.serverIndex = s;
      rank.localRank = d;
      rank.deviceId = d;
      rank.deviceIp = formatIpv4(deviceBase + rank.rankId);
      rank.hostIp = server.hostIp;
      if (perPod > 0) rank.superDeviceId = (s % perPod) * devices + d;
      server.ranks.push_back(rank.rankId);
      out.ranks.push_back(std::move(rank));
    }
    out.servers.push_back(std::move(server));
  }
  *spec = std::move(out);
  return Status::Ok();
}

}  // namespace cohort::ranktable
