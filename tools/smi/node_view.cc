// Reading the node registry and showing it. Memory is shown in MiB in the text
// form and in bytes in the JSON form.
#include "tools/smi/node_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>

#include "cohort/version.h"
#include "common/config.h"

namespace cohort::smi {

namespace {

using runtime::RegistryEntry;

std::uint64_t mib(std::uint64_t bytes) { return bytes >> 20; }

std::int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Milliseconds since the communicator's last operation (-1 before the first).
std::int64_t idleMs(const RegistryEntry& c) {
  return c.lastOpUnixMs == 0 ? -1 : std::max<std::int64_t>(0, nowMs() - c.lastOpUnixMs);
}

// Physical id -> the processes holding it.
std::map<int, std::vector<const RegistryEntry*>> holders(const NodeView& view) {
  std::map<int, std::vector<const RegistryEntry*>> out;
  for (int d = 0; d < view.deviceCount; ++d) out[d];
  for (const auto& e : view.devices) out[e.physicalDevice].push_back(&e);
  return out;
}

std::uint64_t deviceTotal(const NodeView& view, const std::vector<const RegistryEntry*>& held) {
  return held.empty() ? view.deviceMemory : held.front()->memoryTotal;
}

std::uint64_t deviceUsed(const std::vector<const RegistryEntry*>& held) {
  std::uint64_t used = 0;
  for (const auto* e : held) used += e->memoryUsed;
  return used;
}

}  // namespace

std::string processName(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!std::getline(in, name)) return "?";
  return name;
}

Status readNode(const std::string& registryPath, NodeView* out) {
  NodeView view;
  view.registryPath = registryPath;
  const Config config = Config::parse(environmentMap());
  view.deviceCount = config.deviceCount;
  view.deviceMemory = config.deviceMemory;
  std::unique_ptr<runtime::NodeRegistry> registry;
  const Status s = runtime::NodeRegistry::open(registryPath, false, &registry);
  if (!s.ok() && s.code() != ErrorCode::kUnavailable) return s;
  if (registry) {
    view.registryPresent = true;
    for (auto& e : registry->liveEntries()) {
      if (e.kind == RegistryEntry::Kind::kDevice) {
        view.deviceCount = std::max(view.deviceCount, e.physicalDevice + 1);
        view.devices.push_back(std::move(e));
      } else {
        view.communicators.push_back(std::move(e));
      }
    }
  }
  std::sort(view.devices.begin(), view.devices.end(), [](const auto& a, const auto& b) {
    return std::tie(a.physicalDevice, a.pid) < std::tie(b.physicalDevice, b.pid);
  });
  std::sort(view.communicators.begin(), view.communicators.end(), [](const auto& a, const auto& b) {
    return std::tie(a.pid, a.name, a.rank) < std::tie(b.pid, b.name, b.rank);
  });
  *out = std::move(view);
  return Status::Ok();
}

nlohmann::json nodeJson(const NodeView& view) {
  const VersionInfo v = loadedVersion();
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& [id, held] : holders(view)) {
    nlohmann::json pids = nlohmann::json::array();
    for (const auto* e : held) pids.push_back(e->pid);
    devices.push_back({{"id", id},
                       {"memory_total", deviceTotal(view, held)},
                       {"memory_used", deviceUsed(held)},
                       {"processes", pids}});
  }
  nlohmann::json processes = nlohmann::json::array();
  for (const auto& e : view.devices) {
    processes.push_back({{"pid", e.pid},
                         {"command", processName(e.pid)},
                         {"device", e.physicalDevice},
                         {"logical_device", e.logicalDevice},
                         {"memory_used", e.memoryUsed},
                         {"memory_total", e.memoryTotal}});
  }
  nlohmann::json comms = nlohmann::json::array();
  for (const auto& c : view.communicators) {
    comms.push_back({{"pid", c.pid},
                     {"command", processName(c.pid)},
                     {"device", c.physicalDevice},
                     {"name", c.name},
                     {"rank", c.rank},
                     {"size", c.size},
                     {"last_seq", c.lastSeq},
                     {"last_op", c.lastOp},
                     {"idle_ms", idleMs(c)}});
  }
  return {{"library_version", v.library},
          {"protocol_version", v.protocolVersion},
          {"registry", view.registryPath},
          {"registry_present", view.registryPresent},
          {"devices", devices},
          {"processes", processes},
          {"communicators", comms}};
}

std::string nodeText(const NodeView& view) {
  const VersionInfo v = loadedVersion();
  std::string out = fmt::format("cohort-smi {}   protocol {}   registry {}{}\n", v.library,
                                v.protocolVersion, view.registryPath,
                                view.registryPresent ? "" : " (absent: no Cohort process yet)");
  const std::string rule = "+--------+-----------+--------------------------------+\n";
  out += rule + "| device | processes | memory used / total (MiB)      |\n" + rule;
  for (const auto& [id, held] : holders(view)) {
    out += fmt::format("| {:<6} | {:>9} | {:>14} / {:<13} |\n", id, held.size(),
                       mib(deviceUsed(held)), mib(deviceTotal(view, held)));
  }
  out += rule;
  out += "\nProcesses\n";
  const std::string prule = "+--------+----------+------------------+--------------------+\n";
  out += prule + "| device | pid      | command          | memory used (MiB)  |\n" + prule;
  if (view.devices.empty()) out += "| no process holds a device" + std::string(33, ' ') + "|\n";
  for (const auto& e : view.devices) {
    out += fmt::format("| {:<6} | {:<8} | {:<16.16} | {:>18} |\n", e.physicalDevice, e.pid,
                       processName(e.pid), mib(e.memoryUsed));
  }
  out += prule;
  out += "\nCommunicators\n";
  const std::string crule =
      "+----------+--------+------------------+------+------+----------+---------------+---------+"
      "\n";
  out +=
      crule +
      "| pid      | device | name             | rank | size | last seq | last op       | idle s  "
      "|\n" +
      crule;
  if (view.communicators.empty()) out += "| none" + std::string(85, ' ') + "|\n";
  for (const auto& c : view.communicators) {
    const std::int64_t idle = idleMs(c);
    out += fmt::format(
        "| {:<8} | {:<6} | {:<16.16} | {:>4} | {:>4} | {:>8} | {:<13.13} | {:>7} |\n", c.pid,
        c.physicalDevice, c.name, c.rank, c.size, c.lastSeq, c.lastOp.empty() ? "-" : c.lastOp,
        idle < 0 ? std::string("-") : fmt::format("{:.1f}", idle / 1000.0));
  }
  out += crule;
  return out;
}

}  // namespace cohort::smi
