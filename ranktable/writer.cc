// Writing a ClusterSpec back out: an HCCL rank table (every value a string, as
// HCCL writes it) or a YAML cluster file.
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "cohort/ranktable.h"

namespace cohort::ranktable {

namespace {

using OrderedJson = nlohmann::ordered_json;

bool uses12(const ClusterSpec& spec) {
  if (spec.version == "1.2" || !spec.superPods.empty()) return true;
  for (const auto& rank : spec.ranks) {
    if (rank.superDeviceId >= 0 || !rank.backupDeviceIp.empty() || rank.backupDevicePort > 0) {
      return true;
    }
  }
  return false;
}

const char* transportName(Transport transport) {
  return transport == Transport::kTcp ? "tcp" : "rdma";
}

OrderedJson deviceJson(const RankInfo& rank, bool v12) {
  OrderedJson device;
  device["device_id"] = std::to_string(rank.deviceId);
  if (!rank.deviceIp.empty()) device["device_ip"] = rank.deviceIp;
  if (rank.devicePort > 0) device["device_port"] = std::to_string(rank.devicePort);
  if (rank.hostPort > 0) device["host_port"] = std::to_string(rank.hostPort);
  if (v12 && rank.superDeviceId >= 0) {
    device["super_device_id"] = std::to_string(rank.superDeviceId);
  }
  if (v12 && !rank.backupDeviceIp.empty()) device["backup_device_ip"] = rank.backupDeviceIp;
  if (v12 && rank.backupDevicePort > 0) {
    device["backup_device_port"] = std::to_string(rank.backupDevicePort);
  }
  device["rank_id"] = std::to_string(rank.rankId);
  return device;
}

void emitDevice(const RankInfo& rank, YAML::Emitter* out) {
  *out << YAML::Flow << YAML::BeginMap;
  *out << YAML::Key << "id" << YAML::Value << rank.deviceId;
  if (!rank.deviceIp.empty()) {
    *out << YAML::Key << "ip" << YAML::Value << YAML::DoubleQuoted << rank.deviceIp;
  }
  if (rank.devicePort > 0) *out << YAML::Key << "port" << YAML::Value << rank.devicePort;
  if (rank.hostPort > 0) *out << YAML::Key << "host_port" << YAML::Value << rank.hostPort;
  *out << YAML::Key << "rank" << YAML::Value << rank.rankId;
  if (rank.superDeviceId >= 0) {
    *out << YAML::Key << "super_device_id" << YAML::Value << rank.superDeviceId;
  }
  if (!rank.backupDeviceIp.empty()) {
    *out << YAML::Key << "backup_ip" << YAML::Value << YAML::DoubleQuoted << rank.backupDeviceIp;
  }
  if (rank.backupDevicePort > 0) {
    *out << YAML::Key << "backup_port" << YAML::Value << rank.backupDevicePort;
  }
  *out << YAML::EndMap;
}

void emitServer(const ClusterSpec& spec, const ServerInfo& server, YAML::Emitter* out) {
  *out << YAML::BeginMap;
  *out << YAML::Key << "id" << YAML::Value << YAML::DoubleQuoted << server.serverId;
  if (!server.hostIp.empty()) {
    *out << YAML::Key << "host_ip" << YAML::Value << YAML::DoubleQuoted << server.hostIp;
  }
  if (server.transport != Transport::kAuto) {
    *out << YAML::Key << "transport" << YAML::Value << transportName(server.transport);
  }
  if (!server.superPodId.empty()) {
    *out << YAML::Key << "super_pod" << YAML::Value << YAML::DoubleQuoted << server.superPodId;
  }
  *out << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (int r : server.ranks) emitDevice(spec.ranks[r], out);
  *out << YAML::EndSeq << YAML::EndMap;
}

}  // namespace

std::string toJson(const ClusterSpec& spec) {
  const bool v12 = uses12(spec);
  OrderedJson root;
  root["status"] = "completed";
  root["version"] = v12 ? "1.2" : "1.0";
  root["server_count"] = std::to_string(spec.servers.size());
  OrderedJson servers = OrderedJson::array();
  for (const auto& server : spec.servers) {
    OrderedJson entry;
    entry["server_id"] = server.serverId;
    if (!server.hostIp.empty()) entry["host_ip"] = server.hostIp;
    if (server.transport != Transport::kAuto) {
      entry["net_protocol"] = transportName(server.transport);
    }
    OrderedJson devices = OrderedJson::array();
    for (int r : server.ranks) devices.push_back(deviceJson(spec.ranks[r], v12));
    entry["device"] = std::move(devices);
    servers.push_back(std::move(entry));
  }
  root["server_list"] = std::move(servers);
  if (v12 && !spec.superPods.empty()) {
    OrderedJson pods = OrderedJson::array();
    for (const auto& pod : spec.superPods) {
      OrderedJson members = OrderedJson::array();
      for (int s : pod.servers) members.push_back({{"server_id", spec.servers[s].serverId}});
      pods.push_back({{"super_pod_id", pod.superPodId}, {"server_list", std::move(members)}});
    }
    root["super_pod_list"] = std::move(pods);
  }
  return root.dump(4, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

std::string toYaml(const ClusterSpec& spec) {
  YAML::Emitter out;
  out << YAML::Comment("Cohort cluster file (schema: ranktable/README.md)");
  out << YAML::BeginMap;
  out << YAML::Key << "version" << YAML::Value << YAML::DoubleQuoted
      << (uses12(spec) ? "1.2" : "1.0");
  out << YAML::Key << "servers" << YAML::Value << YAML::BeginSeq;
  for (const auto& server : spec.servers) emitServer(spec, server, &out);
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace cohort::ranktable
