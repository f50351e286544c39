// Rules on servers, devices, addresses and device counts.
#include <fmt/format.h>

#include <climits>

#include "ranktable/ip_address.h"
#include "ranktable/text_util.h"
#include "ranktable/validator.h"

namespace cohort::ranktable {

namespace {
constexpr std::size_t kMaxServerIdLength = 64;  // HCCL's SERVERID_MAX_LENGTH
constexpr const char* kAddressExample = "an IPv4 or IPv6 address such as \"10.0.0.1\"";

// "<rule>; "x" is also at <where>".
std::string alsoAt(const char* rule, const RawValue& value, const Location& other) {
  return fmt::format("{}; {} is also at {}", rule, quoteValue(value.text), other.toString());
}
}  // namespace

bool checkCount(const RawValue& count, int actual, const std::string& listPointer,
                Diagnostics* diagnostics) {
  int value = 0;
  if (!parseBoundedInt(count.text, 1, INT_MAX, &value)) {
    diagnostics->error(Rule::kBadCount, count.location, quoteValue(count.text),
                       "a positive integer such as \"1\"");
    return false;
  }
  if (value == actual) return true;
  diagnostics->error(Rule::kCountMismatch, count.location, quoteValue(count.text),
                     fmt::format("\"{}\", the number of entries in {}", actual, listPointer));
  return false;
}

Validator::Validator(const RawTable& table, const LoadOptions& options, Diagnostics* diagnostics)
    : table_(table), options_(options), diagnostics_(diagnostics) {}

void Validator::run(ClusterSpec* spec) {
  devices_.resize(table_.servers.size());
  podOfServer_.assign(table_.servers.size(), -1);
  checkServerList();
  checkServerIds();
  for (std::size_t s = 0; s < table_.servers.size(); ++s) checkServer(static_cast<int>(s));
  checkDuplicateIps();
  std::vector<const RawValue*> deviceAddresses;
  std::vector<const RawValue*> hostAddresses;
  for (const auto& server : table_.servers) {
    hostAddresses.push_back(&server.hostIp);
    for (const auto& device : server.devices) {
      deviceAddresses.push_back(&device.deviceIp);
      deviceAddresses.push_back(&device.backupDeviceIp);
    }
  }
  checkIpFamily(deviceAddresses, "device");
  checkIpFamily(hostAddresses, "host");
  checkDeviceCounts();
  checkRanks();
  collectListedPods();
  collectNamedPods();
  for (const auto& pod : pods_) checkSuperPod(pod);
  checkOwnRank();
  if (spec != nullptr && !diagnostics_->hasErrors()) build(spec);
}

void Validator::checkServerList() {
  if (table_.serverCount.present) {
    checkCount(table_.serverCount, table_.serverListSize, table_.serversLocation.pointer,
               diagnostics_);
  }
  if (table_.hasServerList && table_.serverListSize == 0) {
    error(Rule::kEmptyServerList, table_.serversLocation, "an empty list", "at least one server");
  }
}

void Validator::checkServerIds() {
  for (std::size_t s = 0; s < table_.servers.size(); ++s) {
    const RawValue& id = table_.servers[s].serverId;
    if (!id.present) continue;
    if (id.text.empty()) {
      error(Rule::kEmptyServerId, id.location, "\"\"", "a server id of 1..64 characters");
      continue;
    }
    checkCharacters(id);
    if (id.text.size() > kMaxServerIdLength) {
      error(Rule::kServerIdTooLong, id.location, quoteValue(id.text),
            fmt::format("at most {} characters, not {}", kMaxServerIdLength, id.text.size()));
    }
    const auto [it, inserted] = serverById_.emplace(id.text, static_cast<int>(s));
    if (!inserted) {
      error(Rule::kDuplicateServerId, id.location, quoteValue(id.text),
            alsoAt("a server_id used once", id, table_.servers[it->second].serverId.location));
    }
  }
}

void Validator::checkServer(int s) {
  const RawServer& server = table_.servers[s];
  checkIp(server.hostIp);
  if (server.transport.present && server.transport.text != "tcp" &&
      server.transport.text != "rdma") {
    error(Rule::kBadTransport, server.transport.location, quoteValue(server.transport.text),
          "tcp or rdma");
  }
  if (server.hasDeviceList && server.devices.empty()) {
    error(Rule::kEmptyDeviceList, server.devicesLocation, "an empty list", "at least one device");
  }
  devices_[s].resize(server.devices.size());
  std::map<int, const RawValue*> deviceIds;
  std::map<int, const RawValue*> hostPorts;
  for (std::size_t d = 0; d < server.devices.size(); ++d) {
    checkDevice(s, static_cast<int>(d), &deviceIds, &hostPorts);
  }
}

void Validator::checkDevice(int s, int d, std::map<int, const RawValue*>* deviceIds,
                            std::map<int, const RawValue*>* hostPorts) {
  const RawDevice& raw = table_.servers[s].devices[d];
  Device& device = devices_[s][d];
  if (raw.deviceId.present) {
    if (!parseBoundedInt(raw.deviceId.text, 0, INT_MAX, &device.deviceId)) {
      error(Rule::kBadDeviceId, raw.deviceId.location, quoteValue(raw.deviceId.text),
            "a non-negative integer such as \"0\"");
    } else if (!deviceIds->emplace(device.deviceId, &raw.deviceId).second) {
      error(Rule::kDuplicateDeviceId, raw.deviceId.location, quoteValue(raw.deviceId.text),
            alsoAt("a device_id used once per server", raw.deviceId,
                   (*deviceIds)[device.deviceId]->location));
    }
  }
  device.devicePort = readPort(raw.devicePort);
  device.hostPort = readPort(raw.hostPort);
  device.backupDevicePort = readPort(raw.backupDevicePort);
  if (device.hostPort > 0 && !hostPorts->emplace(device.hostPort, &raw.hostPort).second) {
    error(Rule::kDuplicatePort, raw.hostPort.location, quoteValue(raw.hostPort.text),
          alsoAt("a host_port used once per server", raw.hostPort,
                 (*hostPorts)[device.hostPort]->location));
  }
  if (raw.superDeviceId.present &&
      !parseBoundedInt(raw.superDeviceId.text, 0, INT_MAX, &device.superDeviceId)) {
    error(Rule::kBadSuperDeviceId, raw.superDeviceId.location, quoteValue(raw.superDeviceId.text),
          "a non-negative integer such as \"0\"");
  }
  checkIp(raw.deviceIp);
  checkIp(raw.backupDeviceIp);
}

// Ids are names people read and every format must carry: printable UTF-8.
void Validator::checkCharacters(const RawValue& id) {
  if (isPrintableText(id.text)) return;
  error(Rule::kBadCharacters, id.location, quoteValue(id.text),
        "printable UTF-8 text, without control characters");
}

int Validator::readPort(const RawValue& value) {
  int port = 0;
  if (!value.present) return 0;
  if (parseBoundedInt(value.text, 1, 65535, &port)) return port;
  error(Rule::kBadPort, value.location, quoteValue(value.text), "an integer port in 1..65535");
  return 0;
}

bool Validator::checkIp(const RawValue& value) {
  IpAddress address;
  if (!value.present || parseIp(value.text, &address)) return true;
  error(Rule::kBadIp, value.location, quoteValue(value.text), kAddressExample);
  return false;
}

// Every device NIC address is unique in the cluster (HCCL: "IP is repeated").
void Validator::checkDuplicateIps() {
  std::map<std::string, const RawValue*> seen;
  for (const auto& server : table_.servers) {
    for (const auto& device : server.devices) {
      IpAddress address;
      if (!device.deviceIp.present || !parseIp(device.deviceIp.text, &address)) continue;
      const auto [it, inserted] = seen.emplace(address.bytes, &device.deviceIp);
      if (inserted) continue;
      error(Rule::kDuplicateIp, device.deviceIp.location, quoteValue(device.deviceIp.text),
            alsoAt("a device_ip used once in the cluster", device.deviceIp, it->second->location));
    }
  }
}

// All addresses of a kind are of one family, like the first one.
void Validator::checkIpFamily(const std::vector<const RawValue*>& addresses, const char* kind) {
  const RawValue* first = nullptr;
  IpFamily family = IpFamily::kNone;
  for (const RawValue* value : addresses) {
    IpAddress address;
    if (!value->present || !parseIp(value->text, &address)) continue;
    if (first == nullptr) {
      first = value;
      family = address.family;
    } else if (address.family != family) {
      error(Rule::kMixedIpFamily, value->location,
            fmt::format("{} ({})", quoteValue(value->text), familyName(address.family)),
            fmt::format("an {} address like the first {} address, at {}", familyName(family), kind,
                        first->location.toString()));
    }
  }
}

void Validator::checkDeviceCounts() {
  const RawServer* first = nullptr;
  for (const auto& server : table_.servers) {
    const std::size_t n = server.devices.size();
    if (n == 0) continue;
    if (first == nullptr) {
      first = &server;
    } else if (n != first->devices.size()) {
      error(Rule::kUnevenDevices, server.devicesLocation, countOf(n, "device", "devices"),
            fmt::format("{}, like the first server, at {}",
                        countOf(first->devices.size(), "device", "devices"),
                        first->devicesLocation.toString()));
    }
    if (options_.profile == Profile::k910 && n != 1 && n != 2 && n != 4 && n != 8 && n != 16) {
      error(Rule::kBadDevicesPerServer, server.devicesLocation, countOf(n, "device", "devices"),
            "1, 2, 4, 8 or 16 devices per server (profile 910)");
    }
  }
}

}  // namespace cohort::ranktable
