// The YAML cluster file (schema in ranktable/README.md). Every value is read as
// text, so `rank: 0` and `rank: "0"` are the same; locations carry the line and
// column yaml-cpp records for each node. Unknown keys are warned about, since a
// hand-written file with a misspelt key would otherwise lose that value silently.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <initializer_list>

#include "ranktable/raw_table.h"
#include "ranktable/text_util.h"

namespace cohort::ranktable {

namespace {

const char* yamlTypeName(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "an unknown node";
}

Location yamlAt(const YAML::Node& node, std::string pointer) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return Location{std::move(pointer), 0, 0};
  return Location{std::move(pointer), mark.line + 1, mark.column + 1};
}

bool given(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

class YamlReader {
 public:
  YamlReader(Diagnostics* diagnostics, RawTable* table)
      : diagnostics_(diagnostics), table_(table) {}

  ReadResult read(const YAML::Node& root);

 private:
  RawValue scalar(const YAML::Node& map, const std::string& pointer, const char* key, bool required,
                  const char* expected);
  void warnUnknownKeys(const YAML::Node& map, const std::string& pointer,
                       std::initializer_list<const char*> known);
  bool isMap(const YAML::Node& node, const std::string& pointer, const char* expected);
  void readServer(const YAML::Node& node, const std::string& pointer);
  void readDevice(const YAML::Node& node, const std::string& pointer, RawServer* server);
  void assignRanks();
  void settleVersion(const RawValue& version);

  Diagnostics* diagnostics_;
  RawTable* table_;
};

RawValue YamlReader::scalar(const YAML::Node& map, const std::string& pointer, const char* key,
                            bool required, const char* expected) {
  RawValue out;
  out.location = yamlAt(map, pointer + "/" + key);
  const YAML::Node value = map[key];
  if (!given(value)) {
    if (required) diagnostics_->error(Rule::kMissingKey, out.location, "(missing)", expected);
    return out;
  }
  out.keyFound = true;
  out.location = yamlAt(value, pointer + "/" + key);
  if (!value.IsScalar()) {
    diagnostics_->error(Rule::kWrongType, out.location, yamlTypeName(value),
                        fmt::format("a scalar: {}", expected));
    return out;
  }
  out.present = true;
  out.text = value.Scalar();
  return out;
}

void YamlReader::warnUnknownKeys(const YAML::Node& map, const std::string& pointer,
                                 std::initializer_list<const char*> known) {
  std::string list;
  for (const char* k : known) list += list.empty() ? k : fmt::format(", {}", k);
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string();
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (ok) continue;
    diagnostics_->warning(Rule::kUnknownKey, yamlAt(it->first, pointer + "/" + key),
                          it->first.IsScalar() ? quoteValue(key) : yamlTypeName(it->first),
                          "one of " + list);
  }
}

bool YamlReader::isMap(const YAML::Node& node, const std::string& pointer, const char* expected) {
  if (node.IsMap()) return true;
  diagnostics_->error(Rule::kWrongType, yamlAt(node, pointer), yamlTypeName(node),
                      fmt::format("a map: {}", expected));
  return false;
}

void YamlReader::readDevice(const YAML::Node& node, const std::string& pointer, RawServer* server) {
  if (!isMap(node, pointer, "a device {id: ..., ip: ..., rank: ...}")) return;
  warnUnknownKeys(
      node, pointer,
      {"id", "ip", "port", "host_port", "rank", "super_device_id", "backup_ip", "backup_port"});
  RawDevice device;
  device.location = yamlAt(node, pointer);
  device.deviceId = scalar(node, pointer, "id", true, "the device id, such as 0");
  device.deviceIp = scalar(node, pointer, "ip", false, "an IPv4 or IPv6 address");
  device.devicePort = scalar(node, pointer, "port", false, "a port in 1..65535");
  device.hostPort = scalar(node, pointer, "host_port", false, "a port in 1..65535");
  device.rankId = scalar(node, pointer, "rank", false, "a rank id such as 0");
  device.superDeviceId = scalar(node, pointer, "super_device_id", false, "a non-negative integer");
  device.backupDeviceIp = scalar(node, pointer, "backup_ip", false, "an IPv4 or IPv6 address");
  device.backupDevicePort = scalar(node, pointer, "backup_port", false, "a port in 1..65535");
  server->devices.push_back(std::move(device));
}

void YamlReader::readServer(const YAML::Node& node, const std::string& pointer) {
  if (!isMap(node, pointer, "a server {id: ..., devices: [...]}")) return;
  warnUnknownKeys(node, pointer, {"id", "host_ip", "transport", "super_pod", "devices"});
  RawServer server;
  server.location = yamlAt(node, pointer);
  server.serverId = scalar(node, pointer, "id", true, "a unique id of 1..64 characters");
  server.hostIp = scalar(node, pointer, "host_ip", false, "an IPv4 or IPv6 address");
  server.transport = scalar(node, pointer, "transport", false, "tcp or rdma");
  server.superPodId = scalar(node, pointer, "super_pod", false, "a super pod id");
  const YAML::Node devices = node["devices"];
  server.devicesLocation = yamlAt(given(devices) ? devices : node, pointer + "/devices");
  if (!given(devices)) {
    diagnostics_->error(Rule::kMissingKey, server.devicesLocation, "(missing)",
                        "the devices of this server");
  } else if (!devices.IsSequence()) {
    diagnostics_->error(Rule::kWrongType, server.devicesLocation, yamlTypeName(devices),
                        "a sequence: the devices of this server");
  } else {
    server.hasDeviceList = true;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      readDevice(devices[i], fmt::format("{}/devices/{}", pointer, i), &server);
    }
  }
  table_->servers.push_back(std::move(server));
}

// Ranks are given on every device or on none (then they follow the file order).
void YamlReader::assignRanks() {
  bool anyGiven = false;
  for (const auto& server : table_->servers) {
    for (const auto& device : server.devices) anyGiven = anyGiven || device.rankId.keyFound;
  }
  std::size_t index = 0;
  for (auto& server : table_->servers) {
    for (auto& device : server.devices) {
      if (!anyGiven) {
        device.rankId.present = true;
        device.rankId.text = std::to_string(index);
        device.rankId.location = device.location;
      } else if (!device.rankId.keyFound) {
        diagnostics_->error(Rule::kMissingKey, device.rankId.location, "(missing)",
                            "a rank: give every device a rank, or none");
      }
      ++index;
    }
  }
}

// Without `version` the file is "1.2" when it uses a 1.2 field. With "1.0",
// 1.2 fields are dropped with a warning.
void YamlReader::settleVersion(const RawValue& version) {
  bool uses12 = false;
  const char* why = "no 1.2 field in a version 1.0 file (or version: \"1.2\")";
  auto drop = [&](RawValue* value) {
    if (!value->present) return;
    uses12 = true;
    if (!version.present) return;
    if (version.text == "1.2") return;
    diagnostics_->warning(Rule::kIgnoredKey, value->location, quoteValue(value->text), why);
    value->present = false;
  };
  for (auto& server : table_->servers) {
    drop(&server.superPodId);
    for (auto& device : server.devices) {
      drop(&device.superDeviceId);
      drop(&device.backupDeviceIp);
      drop(&device.backupDevicePort);
    }
  }
  table_->version = version.present ? version.text : (uses12 ? "1.2" : "1.0");
}

ReadResult YamlReader::read(const YAML::Node& root) {
  if (!isMap(root, "", "a cluster file {servers: [...]}")) return ReadResult::kUnusable;
  warnUnknownKeys(root, "", {"version", "status", "servers"});
  const RawValue status = scalar(root, "", "status", false, "completed");
  if (checkStatus(status, diagnostics_) == ReadResult::kInitializing) {
    return ReadResult::kInitializing;
  }
  const char* versions = "\"1.0\" or \"1.2\"";
  const RawValue version = scalar(root, "", "version", false, versions);
  if (version.present && version.text != "1.0" && version.text != "1.2") {
    diagnostics_->error(Rule::kUnknownVersion, version.location, quoteValue(version.text),
                        versions);
    return ReadResult::kUnusable;
  }
  const YAML::Node servers = root["servers"];
  table_->serversLocation = yamlAt(given(servers) ? servers : root, "/servers");
  if (!given(servers)) {
    diagnostics_->error(Rule::kMissingKey, table_->serversLocation, "(missing)",
                        "the list of servers");
  } else if (!servers.IsSequence()) {
    diagnostics_->error(Rule::kWrongType, table_->serversLocation, yamlTypeName(servers),
                        "a sequence: the list of servers");
  } else {
    table_->hasServerList = true;
    table_->serverListSize = static_cast<int>(servers.size());
    for (std::size_t i = 0; i < servers.size(); ++i) {
      readServer(servers[i], fmt::format("/servers/{}", i));
    }
  }
  assignRanks();
  settleVersion(version);
  return ReadResult::kRead;
}

Location textLocation(std::string_view text, std::size_t offset) {
  Location location{"", 1, 1};
  for (std::size_t i = 0; i < offset; ++i) {
    location.column = text[i] == '\n' ? 1 : location.column + 1;
    if (text[i] == '\n') ++location.line;
  }
  return location;
}

// A YAML stream is printable Unicode. yaml-cpp passes stray bytes and control
// characters through (and garbles some), so a table could not be written back;
// reject them where JSON rejects its own: at parse time.
bool checkStreamCharacters(std::string_view text, Diagnostics* diagnostics) {
  const std::size_t bad = invalidUtf8Offset(text);
  if (bad != std::string_view::npos) {
    diagnostics->error(Rule::kSyntax, textLocation(text, bad),
                       fmt::format("byte 0x{:02x}", static_cast<unsigned char>(text[bad])),
                       "UTF-8 text");
    return false;
  }
  std::uint32_t codePoint = 0;
  const std::size_t control = nonPrintableOffset(text, true, &codePoint);
  if (control == std::string_view::npos) return true;
  diagnostics->error(Rule::kSyntax, textLocation(text, control),
                     fmt::format("character U+{:04X}", codePoint),
                     "printable characters (in double quotes, write \\x01 and the like)");
  return false;
}

}  // namespace

ReadResult readYamlTable(std::string_view text, Diagnostics* diagnostics, RawTable* table) {
  if (!checkStreamCharacters(text, diagnostics)) return ReadResult::kUnusable;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    Location location;
    if (!e.mark.is_null()) location = Location{"", e.mark.line + 1, e.mark.column + 1};
    diagnostics->error(Rule::kSyntax, location, e.msg, "valid YAML");
    return ReadResult::kUnusable;
  }
  return YamlReader(diagnostics, table).read(root);
}

}  // namespace cohort::ranktable
