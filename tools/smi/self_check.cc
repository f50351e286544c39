// The job-level items of `cohort-smi check` (launcher variables, devices, the
// node registry, the rank table), the order of the report and its two forms.
#include "tools/smi/self_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cohort/ranktable.h"
#include "cohort/runtime.h"
#include "common/config.h"
#include "runtime/node_registry.h"
#include "transport/jobenv/job_env.h"
#include "transport/netif.h"

namespace cohort::smi {

namespace {

bool isLocal(const std::string& address, const std::set<std::string>& local) {
  return !address.empty() && (local.count(address) != 0 || address.rfind("127.", 0) == 0);
}

// The servers of the table that name this machine (by host_ip or a device_ip).
std::vector<int> localServers(const ranktable::ClusterSpec& spec,
                              const std::set<std::string>& local) {
  std::vector<int> out;
  for (int s = 0; s < spec.serverCount(); ++s) {
    bool mine = isLocal(spec.servers[static_cast<std::size_t>(s)].hostIp, local);
    for (int r : spec.localRanks(s)) mine = mine || isLocal(spec.ranks[r].deviceIp, local);
    if (mine) out.push_back(s);
  }
  return out;
}

std::string tableAddresses(const ranktable::ClusterSpec& spec) {
  std::set<std::string> all;
  for (const auto& s : spec.servers) {
    if (!s.hostIp.empty()) all.insert(s.hostIp);
  }
  for (const auto& r : spec.ranks) {
    if (!r.deviceIp.empty()) all.insert(r.deviceIp);
  }
  return fmt::format("{}", fmt::join(all, ", "));
}

// A server's own checks: its device ids exist here.
CheckItem checkServer(const ranktable::ClusterSpec& spec, int server, int deviceCount) {
  const auto& info = spec.servers[static_cast<std::size_t>(server)];
  const auto& ranks = spec.localRanks(server);
  std::vector<int> devices, missing;
  for (int r : ranks) {
    devices.push_back(spec.ranks[r].deviceId);
    if (spec.ranks[r].deviceId >= deviceCount) missing.push_back(spec.ranks[r].deviceId);
  }
  const std::string detail =
      fmt::format("this host is server '{}' (host_ip {}): ranks {}-{} on devices {}", info.serverId,
                  info.hostIp.empty() ? "-" : info.hostIp, ranks.front(), ranks.back(),
                  fmt::join(devices, ","));
  if (!missing.empty()) {
    return fail("rank table",
                fmt::format("{}; device_id {} not on this node (COHORT_DEVICE_COUNT={})", detail,
                            fmt::join(missing, ","), deviceCount),
                "raise COHORT_DEVICE_COUNT or correct the table's device_id values");
  }
  return ok("rank table", detail);
}

CheckItem checkJob(const transport::EnvMap& vars) {
  transport::JobEnvironment job;
  const Status s = transport::detectJobEnvironment(vars, &job);
  if (s.code() == ErrorCode::kUnavailable) {
    return CheckItem{"job", CheckStatus::kWarn,
                     "launcher variables set, but no rank: " + s.message(), ""};
  }
  if (!s.ok()) {
    return fail("job", s.message(),
                "start the program with its launcher (cohortrun, mpirun, srun) or correct the "
                "variable named");
  }
  return ok("job", fmt::format("rank {} of {} (from {})", job.rank, job.size, job.source));
}

CheckItem checkDevices(int* count) {
  const Status s = runtime::getDeviceCount(count);
  if (!s.ok()) {
    return fail("devices", "the runtime refuses to start: " + s.message(),
                "correct the variables reported under configuration");
  }
  std::vector<int> physical;
  for (int d = 0; d < *count; ++d) {
    runtime::DeviceInfo info;
    if (runtime::getDeviceInfo(d, &info).ok()) physical.push_back(info.physicalId);
  }
  if (*count == 0) return fail("devices", "no device visible", "check COHORT_VISIBLE_DEVICES");
  return ok("devices", fmt::format("{} visible (physical ids {}), {} MiB each", *count,
                                   fmt::join(physical, ","), Config::global().deviceMemory >> 20));
}

CheckItem checkRegistry() {
  std::unique_ptr<runtime::NodeRegistry> registry;
  const std::string path = runtime::NodeRegistry::defaultPath();
  const Status s = runtime::NodeRegistry::open(path, true, &registry);
  if (!s.ok()) {
    return fail("registry", s.message(),
                "remove " + path + " when no Cohort process runs, or make /dev/shm writable");
  }
  const auto live = registry->liveEntries();
  std::set<int> pids;
  for (const auto& e : live) pids.insert(e.pid);
  return ok("registry", fmt::format("{}: {} Cohort process(es) running here", path, pids.size()));
}

// Ranks of the job and of this machine: the options, else the table, else the
// launcher's variables, else one rank per visible device.
void jobSize(const CheckOptions& o, const ranktable::ClusterSpec* spec, int devices, int* ranks,
             int* localRanks) {
  transport::JobEnvironment job;
  const bool launched = transport::detectJobEnvironment(&job).ok();
  *ranks = o.ranks > 0 ? o.ranks
           : spec      ? spec->rankCount()
           : launched  ? job.size
                       : std::max(devices, 1);
  *localRanks = spec && spec->ranksPerServer() > 0 ? spec->ranksPerServer()
                : launched && job.localSize > 0    ? job.localSize
                                                   : std::min(*ranks, std::max(devices, 1));
}

}  // namespace

std::vector<CheckItem> checkRankTable(const std::string& path,
                                      const std::vector<std::string>& localAddresses,
                                      int deviceCount) {
  ranktable::LoadOptions options;
  options.timeoutMs = 0;
  options.logWarnings = false;
  ranktable::ClusterSpec spec;
  ranktable::Diagnostics diagnostics;
  const Status s = ranktable::loadClusterFile(path, options, &spec, &diagnostics);
  if (!s.ok()) {
    return {fail("rank table", s.message(),
                 "correct the table (cohort-ranktable validate " + path + " lists every error)")};
  }
  const std::set<std::string> local(localAddresses.begin(), localAddresses.end());
  const std::vector<int> mine = localServers(spec, local);
  if (mine.empty()) {
    return {fail("rank table",
                 fmt::format("{}: no server names this host: the table's addresses are {}; "
                             "this host's are {}",
                             path, tableAddresses(spec), fmt::join(localAddresses, ", ")),
                 "run on a server of the table, or correct its host_ip/device_ip")};
  }
  std::vector<CheckItem> items = {
      ok("rank table", fmt::format("{}: valid, {} ranks on {} server(s)", path, spec.rankCount(),
                                   spec.serverCount()))};
  for (int server : mine) items.push_back(checkServer(spec, server, deviceCount));
  return items;
}

std::vector<CheckItem> runSelfCheck(const CheckOptions& o) {
  const auto env = environmentMap();
  std::vector<CheckItem> items = {checkVersions()};
  for (auto& item : checkConfiguration(env)) items.push_back(std::move(item));
  const transport::EnvMap jobVars = transport::jobVariables();
  if (jobVars.size() > (jobVars.count("COHORT_JOB_TOKEN") != 0 ? 1u : 0u)) {
    items.push_back(checkJob(jobVars));
  }
  int devices = 0;
  items.push_back(checkDevices(&devices));
  items.push_back(checkRegistry());
  items.push_back(checkShm(o.shmDir, o.jobMemory));
  const Config config = Config::parse(env);
  ranktable::ClusterSpec spec;
  ranktable::LoadOptions quiet;
  quiet.timeoutMs = 0;
  quiet.logWarnings = false;
  const bool haveSpec =
      !o.ranktable.empty() && ranktable::loadClusterFile(o.ranktable, quiet, &spec).ok();
  int ranks = 0, localRanks = 0;
  jobSize(o, haveSpec ? &spec : nullptr, devices, &ranks, &localRanks);
  for (auto& item : checkLimits(ranks, localRanks, config.nsocksPerPeer)) {
    items.push_back(std::move(item));
  }
  items.push_back(checkPorts(config.ifBasePort));
  if (!o.ranktable.empty()) {
    std::vector<transport::NetInterface> nics;
    std::vector<std::string> addresses;
    if (transport::listInterfaces(&nics).ok()) {
      for (const auto& nic : nics) addresses.push_back(nic.address);
    }
    for (auto& item : checkRankTable(o.ranktable, addresses, config.deviceCount)) {
      items.push_back(std::move(item));
    }
  }
  return items;
}

bool anyFailed(const std::vector<CheckItem>& items) {
  return std::any_of(items.begin(), items.end(),
                     [](const CheckItem& i) { return i.status == CheckStatus::kFail; });
}

std::string checkText(const std::vector<CheckItem>& items) {
  static const char* kWords[] = {"OK", "WARN", "FAIL"};
  std::string out = "cohort-smi check\n";
  int failed = 0;
  for (const auto& item : items) {
    out += fmt::format("{:<5} {:<14} {}\n", kWords[static_cast<int>(item.status)], item.name,
                       item.detail);
    if (!item.fix.empty()) out += fmt::format("{:<20} fix: {}\n", "", item.fix);
    failed += item.status == CheckStatus::kFail ? 1 : 0;
  }
  out += failed == 0 ? "all checks passed\n" : fmt::format("{} check(s) FAILED\n", failed);
  return out;
}

nlohmann::json checkJson(const std::vector<CheckItem>& items) {
  static const char* kWords[] = {"OK", "WARN", "FAIL"};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& item : items) {
    list.push_back({{"name", item.name},
                    {"status", kWords[static_cast<int>(item.status)]},
                    {"detail", item.detail},
                    {"fix", item.fix}});
  }
  return {{"ok", !anyFailed(items)}, {"items", list}};
}

}  // namespace cohort::smi
