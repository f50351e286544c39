#include "cohort/ranktable.h"
#include "common/error.h"

namespace cohort::ranktable {

bool RankInfo::operator==(const RankInfo& o) const {
  return rankId == o.rankId && serverIndex == o.serverIndex && localRank == o.localRank &&
         deviceId == o.deviceId && deviceIp == o.deviceIp && devicePort == o.devicePort &&
         hostIp == o.hostIp && hostPort == o.hostPort && superDeviceId == o.superDeviceId &&
         backupDeviceIp == o.backupDeviceIp && backupDevicePort == o.backupDevicePort;
}

bool ServerInfo::operator==(const ServerInfo& o) const {
  return serverId == o.serverId && hostIp == o.hostIp && transport == o.transport &&
         superPodId == o.superPodId && ranks == o.ranks;
}

bool SuperPod::operator==(const SuperPod& o) const {
  return superPodId == o.superPodId && servers == o.servers;
}

bool ClusterSpec::operator==(const ClusterSpec& o) const {
  return version == o.version && servers == o.servers && ranks == o.ranks &&
         superPods == o.superPods;
}

int ClusterSpec::ranksPerServer() const {
  if (servers.empty()) return 0;
  const std::size_t n = servers.front().ranks.size();
  for (const auto& server : servers) {
    if (server.ranks.size() != n) return 0;
  }
  return static_cast<int>(n);
}

const std::vector<int>& ClusterSpec::localRanks(int server) const {
  COHORT_CHECK_LE(0, server);
  COHORT_CHECK_LT(server, serverCount());
  return servers[server].ranks;
}

int ClusterSpec::serverOf(int rank) const {
  if (rank < 0 || rank >= rankCount()) return -1;
  return ranks[rank].serverIndex;
}

int ClusterSpec::superPodOf(int server) const {
  for (std::size_t i = 0; i < superPods.size(); ++i) {
    for (int s : superPods[i].servers) {
      if (s == server) return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace cohort::ranktable
