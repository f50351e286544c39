// Rank table JSON: dispatch on `version`, then the "1.0"/"1.2" reader. The
// legacy template (no version) is in json_legacy_reader.cc.
#include <fmt/format.h>

#include <algorithm>

#include "ranktable/json_fields.h"
#include "ranktable/text_util.h"

namespace cohort::ranktable {

namespace {

constexpr std::size_t kMaxSyntaxText = 200;

// nlohmann reports the byte offset of the last character read; lines and columns
// are what people look for in an editor.
Location syntaxLocation(std::string_view text, std::size_t byte) {
  const std::size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
  Location location;
  location.line = 1;
  location.column = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++location.line;
      location.column = 1;
    } else {
      ++location.column;
    }
  }
  return location;
}

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error
// while parsing value - ..." -> "syntax error while parsing value - ...".
std::string syntaxText(const std::string& what) {
  std::size_t start = what.find(": ");
  std::string out = start == std::string::npos ? what : what.substr(start + 2);
  if (out.size() > kMaxSyntaxText) out = out.substr(0, kMaxSyntaxText) + "...";
  return out;
}

void reportSyntax(std::string_view text, const Json::exception& e, Diagnostics* diagnostics) {
  const auto* parseError = dynamic_cast<const Json::parse_error*>(&e);
  Location location = parseError != nullptr ? syntaxLocation(text, parseError->byte) : Location{};
  // "...unexpected ']'; expected '[', '{', or a literal": split at "; expected ".
  std::string found = syntaxText(e.what());
  std::string expected = "valid JSON (no comments, no trailing commas)";
  const std::size_t split = found.find("; expected ");
  if (split != std::string::npos) {
    expected = found.substr(split + 11) + "; JSON allows no comments or trailing commas";
    found.resize(split);
  }
  diagnostics->error(Rule::kSyntax, location, found, expected);
}

void readDevice(const Json& device, const std::string& pointer, bool v12, const JsonFields& f,
                RawServer* server) {
  if (!f.isObject(device, pointer, "a device {\"device_id\": ..., \"rank_id\": ...}")) return;
  RawDevice out;
  out.location = at(pointer);
  out.deviceId = f.scalar(device, pointer, "device_id", true, "the device id, such as \"0\"");
  out.deviceIp = f.scalar(device, pointer, "device_ip", false, "an IPv4 or IPv6 address");
  out.devicePort = f.scalar(device, pointer, "device_port", false, "a port in 1..65535");
  out.hostPort = f.scalar(device, pointer, "host_port", false, "a port in 1..65535");
  out.rankId = f.scalar(device, pointer, "rank_id", true, "a rank id such as \"0\"");
  if (v12) {
    out.superDeviceId =
        f.scalar(device, pointer, "super_device_id", false, "a non-negative integer");
    out.backupDeviceIp =
        f.scalar(device, pointer, "backup_device_ip", false, "an IPv4 or IPv6 address");
    out.backupDevicePort =
        f.scalar(device, pointer, "backup_device_port", false, "a port in 1..65535");
  }
  server->devices.push_back(std::move(out));
}

void readServer(const Json& server, const std::string& pointer, bool v12, const JsonFields& f,
                RawTable* table) {
  if (!f.isObject(server, pointer, "a server {\"server_id\": ..., \"device\": [...]}")) return;
  RawServer out;
  out.location = at(pointer);
  out.serverId = f.scalar(server, pointer, "server_id", true, "a unique id of 1..64 characters");
  out.hostIp = f.scalar(server, pointer, "host_ip", false, "an IPv4 or IPv6 address");
  out.transport = f.scalar(server, pointer, "net_protocol", false, "\"tcp\" or \"rdma\"");
  out.devicesLocation = at(pointer + "/device");
  const Json* devices = f.array(server, pointer, "device", true, "the devices of this server");
  if (devices != nullptr) {
    out.hasDeviceList = true;
    for (std::size_t i = 0; i < devices->size(); ++i) {
      readDevice((*devices)[i], fmt::format("{}/device/{}", pointer, i), v12, f, &out);
    }
  }
  table->servers.push_back(std::move(out));
}

void readSuperPod(const Json& pod, const std::string& pointer, const JsonFields& f,
                  RawTable* table) {
  if (!f.isObject(pod, pointer, "a super pod {\"super_pod_id\": ..., \"server_list\": [...]}")) {
    return;
  }
  RawSuperPod out;
  out.location = at(pointer);
  out.superPodId = f.scalar(pod, pointer, "super_pod_id", true, "a unique super pod id");
  out.serversLocation = at(pointer + "/server_list");
  const Json* servers = f.array(pod, pointer, "server_list", true, "the servers of the pod");
  if (servers != nullptr) {
    out.hasServerList = true;
    for (std::size_t i = 0; i < servers->size(); ++i) {
      const std::string entry = fmt::format("{}/server_list/{}", pointer, i);
      if (!f.isObject((*servers)[i], entry, "{\"server_id\": ...}")) continue;
      RawValue id = f.scalar((*servers)[i], entry, "server_id", true, "a server_id of server_list");
      if (id.present) out.serverIds.push_back(std::move(id));
    }
  }
  table->superPods.push_back(std::move(out));
}

}  // namespace

void readConciseTable(const Json& root, const std::string& version, const JsonFields& f,
                      RawTable* table) {
  table->version = version;
  const bool v12 = version == "1.2";
  // HCCL requires server_count in 1.0; 1.2 takes it from server_list when absent.
  table->serverCount = f.scalar(root, "", "server_count", !v12, "the number of servers");
  if (v12 && root.find("server_count") == root.end()) {
    f.diagnostics()->warning(Rule::kMissingKey, at("/server_count"), "(missing)",
                             "the number of servers (taken from server_list)");
  }
  table->serversLocation = at("/server_list");
  const Json* servers = f.array(root, "", "server_list", true, "the list of servers");
  if (servers != nullptr) {
    table->hasServerList = true;
    table->serverListSize = static_cast<int>(servers->size());
    for (std::size_t i = 0; i < servers->size(); ++i) {
      readServer((*servers)[i], fmt::format("/server_list/{}", i), v12, f, table);
    }
  }
  if (!v12) return;
  const Json* pods = f.array(root, "", "super_pod_list", false, "the list of super pods");
  if (pods == nullptr) return;
  for (std::size_t i = 0; i < pods->size(); ++i) {
    readSuperPod((*pods)[i], fmt::format("/super_pod_list/{}", i), f, table);
  }
}

ReadResult readJsonTable(std::string_view text, Diagnostics* diagnostics, RawTable* table) {
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    reportSyntax(text, e, diagnostics);
    return ReadResult::kUnusable;
  }
  const JsonFields f(diagnostics);
  if (!f.isObject(root, "", "a rank table {\"status\": ..., \"version\": ..., ...}")) {
    return ReadResult::kUnusable;
  }
  const RawValue status = f.scalar(root, "", "status", true, "\"completed\" (or \"initializing\")");
  if (checkStatus(status, diagnostics) == ReadResult::kInitializing) {
    return ReadResult::kInitializing;
  }
  const char* versions = "\"1.0\" or \"1.2\" (or no version for the template with group_list)";
  if (root.find("version") != root.end()) {
    const RawValue version = f.scalar(root, "", "version", true, versions);
    if (!version.present) return ReadResult::kUnusable;
    if (version.text != "1.0" && version.text != "1.2") {
      diagnostics->error(Rule::kUnknownVersion, version.location, quoteValue(version.text),
                         versions);
      return ReadResult::kUnusable;
    }
    readConciseTable(root, version.text, f, table);
    return ReadResult::kRead;
  }
  if (root.find("group_list") != root.end() || root.find("group_count") != root.end()) {
    readLegacyTemplate(root, f, table);
    return ReadResult::kRead;
  }
  diagnostics->error(Rule::kMissingKey, at("/version"), "(missing)", versions);
  if (root.find("server_list") == root.end()) return ReadResult::kUnusable;
  readConciseTable(root, "1.0", f, table);  // most likely meant: report its problems too
  return ReadResult::kRead;
}

ReadResult checkStatus(const RawValue& status, Diagnostics* diagnostics) {
  if (!status.present || status.text == "completed") return ReadResult::kRead;
  if (status.text == "initializing") {
    diagnostics->error(Rule::kStatusInitializing, status.location, quoteValue(status.text),
                       "\"completed\" (the table is still being written)");
    return ReadResult::kInitializing;
  }
  diagnostics->error(Rule::kBadStatus, status.location, quoteValue(status.text),
                     "\"completed\" or \"initializing\"");
  return ReadResult::kRead;
}

}  // namespace cohort::ranktable
