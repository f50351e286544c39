// Rules on rank ids and super pods, the caller's own rank, and building the
// ClusterSpec once everything holds.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "ranktable/text_util.h"
#include "ranktable/validator.h"

namespace cohort::ranktable {

// HCCL sorts the ranks and requires rank i at position i: ids are unique and
// exactly 0..N-1, N being the number of devices listed.
void Validator::checkRanks() {
  rankCount_ = 0;
  for (const auto& server : table_.servers) rankCount_ += static_cast<int>(server.devices.size());
  std::vector<const RawValue*> owner(rankCount_, nullptr);
  for (std::size_t s = 0; s < table_.servers.size(); ++s) {
    for (std::size_t d = 0; d < table_.servers[s].devices.size(); ++d) {
      const RawValue& id = table_.servers[s].devices[d].rankId;
      int rank = -1;
      if (!id.present) continue;
      if (!parseBoundedInt(id.text, 0, INT_MAX, &rank)) {
        error(Rule::kBadRankId, id.location, quoteValue(id.text),
              "a non-negative integer such as \"0\"");
      } else if (rank >= rankCount_) {
        error(Rule::kRankIdOutOfRange, id.location, quoteValue(id.text),
              fmt::format("a rank id below {0}, the number of ranks (ids are 0..{1})", rankCount_,
                          rankCount_ - 1));
      } else if (owner[rank] != nullptr) {
        error(Rule::kDuplicateRankId, id.location, quoteValue(id.text),
              fmt::format("a rank_id used once; {} is also at {}", quoteValue(id.text),
                          owner[rank]->location.toString()));
      } else {
        owner[rank] = &id;
        devices_[s][d].rank = rank;
      }
    }
  }
  for (std::size_t s = 0; s < table_.servers.size(); ++s) checkContiguous(static_cast<int>(s));
}

// The ranks of one server form one block (0..3 | 4..7, never 0,1,2,7 | 3..6):
// hierarchical algorithms and local ranks rely on it.
void Validator::checkContiguous(int s) {
  std::vector<std::pair<int, int>> ranks;  // (rank, device index)
  for (std::size_t d = 0; d < devices_[s].size(); ++d) {
    if (devices_[s][d].rank < 0) return;  // already reported
    ranks.emplace_back(devices_[s][d].rank, static_cast<int>(d));
  }
  if (ranks.empty()) return;
  std::sort(ranks.begin(), ranks.end());
  const int first = ranks.front().first;
  const int last = first + static_cast<int>(ranks.size()) - 1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].first == first + static_cast<int>(i)) continue;
    const RawServer& server = table_.servers[s];
    error(Rule::kRanksNotContiguous, server.devices[ranks[i].second].rankId.location,
          quoteValue(std::to_string(ranks[i].first)),
          fmt::format("rank {}: the ranks of server {} must be consecutive ({}..{})",
                      first + static_cast<int>(i), quoteValue(server.serverId.text), first, last));
    return;
  }
}

// JSON: super_pod_list names each pod and its servers.
void Validator::collectListedPods() {
  std::map<std::string, const RawValue*> podIds;
  for (const RawSuperPod& raw : table_.superPods) {
    Pod pod;
    pod.id = raw.superPodId.text;
    if (raw.superPodId.present && pod.id.empty()) {
      error(Rule::kEmptySuperPodId, raw.superPodId.location, "\"\"", "a non-empty super_pod_id");
    } else if (raw.superPodId.present) {
      checkCharacters(raw.superPodId);
    }
    if (raw.superPodId.present && !pod.id.empty() &&
        !podIds.emplace(pod.id, &raw.superPodId).second) {
      error(Rule::kDuplicateSuperPodId, raw.superPodId.location, quoteValue(pod.id),
            fmt::format("a super_pod_id used once; {} is also at {}", quoteValue(pod.id),
                        podIds[pod.id]->location.toString()));
    }
    if (raw.hasServerList && raw.serverIds.empty()) {
      error(Rule::kEmptyServerList, raw.serversLocation, "an empty list",
            "at least one server of server_list");
    }
    for (const RawValue& serverId : raw.serverIds) addListedMember(serverId, &pod);
    pods_.push_back(std::move(pod));
  }
}

// Adds a server to the pod being built (it becomes pods_[pods_.size()]).
void Validator::addListedMember(const RawValue& serverId, Pod* pod) {
  const auto found = serverById_.find(serverId.text);
  if (found == serverById_.end()) {
    error(Rule::kUnknownSuperPodServer, serverId.location, quoteValue(serverId.text),
          "the server_id of a server in server_list");
    return;
  }
  const int s = found->second;
  if (podOfServer_[s] >= 0) {
    const bool earlier = static_cast<std::size_t>(podOfServer_[s]) < pods_.size();
    const Pod& other = earlier ? pods_[podOfServer_[s]] : *pod;
    const auto at = std::find(other.servers.begin(), other.servers.end(), s);
    error(
        Rule::kDuplicateSuperPodServer, serverId.location, quoteValue(serverId.text),
        fmt::format("a server in one super pod only; it is also in {} at {}", quoteValue(other.id),
                    other.memberLocations[at - other.servers.begin()].toString()));
    return;
  }
  podOfServer_[s] = static_cast<int>(pods_.size());
  pod->servers.push_back(s);
  pod->memberLocations.push_back(serverId.location);
}

// YAML: each server names its super pod; pods appear in order of first use.
void Validator::collectNamedPods() {
  std::map<std::string, int> byId;
  for (std::size_t s = 0; s < table_.servers.size(); ++s) {
    const RawValue& podId = table_.servers[s].superPodId;
    if (!podId.present) continue;
    if (podId.text.empty()) {
      error(Rule::kEmptySuperPodId, podId.location, "\"\"", "a non-empty super pod id");
      continue;
    }
    checkCharacters(podId);
    const auto [it, inserted] = byId.emplace(podId.text, static_cast<int>(pods_.size()));
    if (inserted) pods_.push_back(Pod{podId.text, {}, {}});
    pods_[it->second].servers.push_back(static_cast<int>(s));
    pods_[it->second].memberLocations.push_back(podId.location);
    podOfServer_[s] = it->second;
  }
}

void Validator::checkSuperPod(const Pod& pod) {
  std::vector<std::pair<int, Location>> members;
  for (std::size_t i = 0; i < pod.servers.size(); ++i) {
    members.emplace_back(pod.servers[i], pod.memberLocations[i]);
  }
  std::sort(members.begin(), members.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < members.size(); ++i) {
    const int between = members[0].first + static_cast<int>(i);
    if (members[i].first == between) continue;
    error(Rule::kSuperPodNotContiguous, members[i].second,
          quoteValue(table_.servers[members[i].first].serverId.text),
          fmt::format("a server next to the others of super pod {}; the server at {} is "
                      "between them",
                      quoteValue(pod.id), table_.servers[between].location.toString()));
    break;
  }
  std::map<int, const RawValue*> seen;  // super_device_id -> where
  for (int s : pod.servers) {
    const RawServer& server = table_.servers[s];
    for (std::size_t d = 0; d < server.devices.size(); ++d) {
      const RawValue& raw = server.devices[d].superDeviceId;
      const int id = devices_[s][d].superDeviceId;
      if (!raw.keyFound) {
        error(Rule::kMissingKey, raw.location, "(missing)",
              fmt::format("a super_device_id: the devices of super pod {} need one",
                          quoteValue(pod.id)));
      } else if (id >= 0 && !seen.emplace(id, &raw).second) {
        error(Rule::kDuplicateSuperDeviceId, raw.location, quoteValue(raw.text),
              fmt::format("a super_device_id used once in super pod {}; {} is also at {}",
                          quoteValue(pod.id), quoteValue(raw.text), seen[id]->location.toString()));
      }
    }
  }
}

void Validator::checkOwnRank() {
  if (options_.ownRank < 0 || options_.ownRank < rankCount_) return;
  error(Rule::kRankNotInTable, Location{}, fmt::format("rank {}", options_.ownRank),
        rankCount_ > 0 ? fmt::format("a rank of the table, 0..{}", rankCount_ - 1)
                       : std::string("a table with ranks"));
}

void Validator::build(ClusterSpec* spec) const {
  ClusterSpec out;
  out.version = table_.version;
  out.ranks.resize(rankCount_);
  for (std::size_t s = 0; s < table_.servers.size(); ++s) buildServer(static_cast<int>(s), &out);
  for (const Pod& pod : pods_) {
    SuperPod superPod{pod.id, pod.servers};
    std::sort(superPod.servers.begin(), superPod.servers.end());
    if (!superPod.servers.empty()) out.superPods.push_back(std::move(superPod));
  }
  std::sort(out.superPods.begin(), out.superPods.end(),
            [](const SuperPod& a, const SuperPod& b) { return a.servers[0] < b.servers[0]; });
  *spec = std::move(out);
}

// Appends server s and fills in the ranks of its devices.
void Validator::buildServer(int s, ClusterSpec* out) const {
  const RawServer& raw = table_.servers[s];
  ServerInfo server;
  server.serverId = raw.serverId.text;
  server.hostIp = raw.hostIp.present ? raw.hostIp.text : "";
  server.transport = !raw.transport.present        ? Transport::kAuto
                     : raw.transport.text == "tcp" ? Transport::kTcp
                                                   : Transport::kRdma;
  if (podOfServer_[s] >= 0) server.superPodId = pods_[podOfServer_[s]].id;
  for (const Device& device : devices_[s]) server.ranks.push_back(device.rank);
  std::sort(server.ranks.begin(), server.ranks.end());
  for (std::size_t d = 0; d < raw.devices.size(); ++d) {
    const RawDevice& rawDevice = raw.devices[d];
    const Device& device = devices_[s][d];
    RankInfo& rank = out->ranks[device.rank];
    rank.rankId = device.rank;
    rank.serverIndex = s;
    rank.localRank = device.rank - server.ranks.front();
    rank.deviceId = device.deviceId;
    rank.deviceIp = rawDevice.deviceIp.present ? rawDevice.deviceIp.text : "";
    rank.devicePort = device.devicePort;
    rank.hostIp = server.hostIp;
    rank.hostPort = device.hostPort;
    rank.superDeviceId = device.superDeviceId;
    rank.backupDeviceIp = rawDevice.backupDeviceIp.present ? rawDevice.backupDeviceIp.text : "";
    rank.backupDevicePort = device.backupDevicePort;
  }
  out->servers.push_back(std::move(server));
}

void validateTable(const RawTable& table, const LoadOptions& options, Diagnostics* diagnostics,
                   ClusterSpec* spec) {
  Validator(table, options, diagnostics).run(spec);
}

}  // namespace cohort::ranktable
