// The legacy rank table template without `version`:
//   {status, group_count, group_list: [{group_name, instance_count, device_count,
//    instance_list: [{pod_name, server_id, devices: [{device_id, device_ip}]}]}]}
// Ranks are implicit: the order of devices in instance_list. An instance is a
// pod; instances naming the same server_id are one server, so a server whose pods
// are not adjacent gets non-contiguous ranks (and the validator says so).
#include <fmt/format.h>

#include <map>

#include "ranktable/json_fields.h"
#include "ranktable/text_util.h"

namespace cohort::ranktable {

namespace {

struct LegacyState {
  const JsonFields& f;
  RawTable* table;
  std::map<std::string, std::size_t> serverById;  // server_id -> index in table->servers
  std::map<std::string, std::string> podNames;    // pod_name -> its pointer
  int nextRank = 0;
};

void readDevices(const Json& devices, const std::string& pointer, LegacyState* state,
                 RawServer* server) {
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string entry = fmt::format("{}/{}", pointer, i);
    if (!state->f.isObject(devices[i], entry,
                           "a device {\"device_id\": ..., \"device_ip\": ...}")) {
      continue;
    }
    RawDevice device;
    device.location = at(entry);
    device.deviceId = state->f.scalar(devices[i], entry, "device_id", true, "a device id");
    device.deviceIp = state->f.scalar(devices[i], entry, "device_ip", true, "an IP address");
    device.rankId.present = true;  // implicit: the order of the devices
    device.rankId.text = std::to_string(state->nextRank++);
    device.rankId.location = device.location;
    server->devices.push_back(std::move(device));
  }
}

void checkPodName(const RawValue& podName, LegacyState* state) {
  if (!podName.present) return;
  const auto [it, inserted] = state->podNames.emplace(podName.text, podName.location.pointer);
  if (inserted) return;
  state->f.diagnostics()->error(
      Rule::kDuplicatePodName, podName.location, quoteValue(podName.text),
      fmt::format("a pod_name used once; {} is also at {}", quoteValue(podName.text), it->second));
}

void readInstance(const Json& instance, const std::string& pointer, LegacyState* state) {
  const JsonFields& f = state->f;
  if (!f.isObject(instance, pointer, "an instance {\"pod_name\": ..., \"server_id\": ...}")) {
    return;
  }
  checkPodName(f.scalar(instance, pointer, "pod_name", true, "a unique pod name"), state);
  RawServer fresh;
  fresh.location = at(pointer);
  fresh.serverId = f.scalar(instance, pointer, "server_id", true, "the server's id (its IP)");
  fresh.devicesLocation = at(pointer + "/devices");
  const Json* devices = f.array(instance, pointer, "devices", true, "the devices of the pod");
  // A second pod on a known server adds its devices to that server.
  const bool merge = fresh.serverId.present && !fresh.serverId.text.empty() &&
                     state->serverById.count(fresh.serverId.text) > 0;
  RawServer* server = &fresh;
  if (merge) server = &state->table->servers[state->serverById[fresh.serverId.text]];
  if (devices != nullptr) {
    server->hasDeviceList = true;
    if (merge && devices->empty()) {
      f.diagnostics()->error(Rule::kEmptyDeviceList, fresh.devicesLocation, "an empty list",
                             "at least one device");
    }
    readDevices(*devices, pointer + "/devices", state, server);
  }
  if (merge) return;
  if (fresh.serverId.present && !fresh.serverId.text.empty()) {
    state->serverById[fresh.serverId.text] = state->table->servers.size();
  }
  state->table->servers.push_back(std::move(fresh));
}

void readGroup(const Json& group, LegacyState* state) {
  const JsonFields& f = state->f;
  const std::string pointer = "/group_list/0";
  if (!f.isObject(group, pointer, "a group {\"instance_list\": [...], ...}")) return;
  RawTable* table = state->table;
  table->serverCount = f.scalar(group, pointer, "instance_count", true, "the number of instances");
  const RawValue deviceCount =
      f.scalar(group, pointer, "device_count", true, "the number of devices");
  table->serversLocation = at(pointer + "/instance_list");
  const Json* instances =
      f.array(group, pointer, "instance_list", true, "the instances (pods) of the group");
  if (instances == nullptr) return;
  table->hasServerList = true;
  table->serverListSize = static_cast<int>(instances->size());
  for (std::size_t i = 0; i < instances->size(); ++i) {
    readInstance((*instances)[i], fmt::format("{}/instance_list/{}", pointer, i), state);
  }
  // Devices that could not be read still count: compare with what is listed.
  int listed = 0;
  for (const auto& instance : *instances) {
    const auto devices = instance.is_object() ? instance.find("devices") : instance.end();
    if (instance.is_object() && devices != instance.end() && devices->is_array()) {
      listed += static_cast<int>(devices->size());
    }
  }
  if (deviceCount.present) {
    checkCount(deviceCount, listed, pointer + "/instance_list/*/devices", f.diagnostics());
  }
}

}  // namespace

void readLegacyTemplate(const Json& root, const JsonFields& f, RawTable* table) {
  table->version = "1.0";
  const RawValue groupCount = f.scalar(root, "", "group_count", true, "the number of groups");
  const Json* groups = f.array(root, "", "group_list", true, "the list of groups");
  if (groups == nullptr) return;
  if (groupCount.present) {
    checkCount(groupCount, static_cast<int>(groups->size()), "/group_list", f.diagnostics());
  }
  table->serversLocation = at("/group_list");
  if (groups->empty()) {
    f.diagnostics()->error(Rule::kEmptyServerList, at("/group_list"), "an empty list",
                           "one group (hccl_world_group)");
    return;
  }
  LegacyState state{f, table, {}, {}, 0};
  readGroup((*groups)[0], &state);
  for (std::size_t i = 1; i < groups->size(); ++i) {
    f.diagnostics()->warning(Rule::kIgnoredKey, at(fmt::format("/group_list/{}", i)),
                             "another group", "one group: only the first defines the ranks");
  }
}

}  // namespace cohort::ranktable
