// Options -> plan. Ranks are numbered node by node (RANK = node * N + local), as
// torchrun does; with a rank table the table's numbering and devices win.
#include "launcher/launch_plan.h"

#include <sched.h>

#include <algorithm>
#include <filesystem>

#include "cohort/ranktable.h"
#include "common/error.h"

namespace cohort::launcher {

namespace {

constexpr int kMaxRanksPerNode = 1024;

Status checkCommon(const LaunchOptions& o) {
  if (o.command.empty()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "no program to run (usage: cohortrun -n N [options] -- PROG ARGS...)");
  }
  if (o.graceS < 0) {
    return makeError(ErrorCode::kInvalidArgument, "--grace {} must not be negative", o.graceS);
  }
  if (o.timeoutS < 0) {
    return makeError(ErrorCode::kInvalidArgument, "--timeout {} must not be negative", o.timeoutS);
  }
  if (!o.serverId.empty() && o.ranktable.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "--server-id '{}' needs --ranktable FILE",
                     o.serverId);
  }
  if (o.nodeRank >= 0 && o.nnodes <= 0 && o.ranktable.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "--node-rank {} needs --nnodes K", o.nodeRank);
  }
  return Status::Ok();
}

Status setMaster(const LaunchOptions& o, int nodeCount, LaunchPlan* plan) {
  if (o.master.empty()) {
    if (nodeCount == 1) return Status::Ok();
    return makeError(ErrorCode::kInvalidArgument,
                     "a job of {} nodes needs --master ADDR:PORT (where the cohortrun of the "
                     "node holding rank 0 serves the job's store)",
                     nodeCount);
  }
  return parseHostPort(o.master, &plan->masterAddr, &plan->masterPort);
}

Status planFromCounts(const LaunchOptions& o, LaunchPlan* plan) {
  if (o.ranksPerNode < 1 || o.ranksPerNode > kMaxRanksPerNode) {
    return makeError(ErrorCode::kInvalidArgument, "-n {} must be in 1..{}", o.ranksPerNode,
                     kMaxRanksPerNode);
  }
  plan->nodeCount = o.nnodes > 0 ? o.nnodes : 1;
  plan->nodeRank = o.nodeRank >= 0 ? o.nodeRank : 0;
  if (plan->nodeRank >= plan->nodeCount) {
    return makeError(ErrorCode::kInvalidArgument, "--node-rank {} is not below --nnodes {}",
                     plan->nodeRank, plan->nodeCount);
  }
  COHORT_RETURN_IF_ERROR(setMaster(o, plan->nodeCount, plan));
  plan->localSize = o.ranksPerNode;
  plan->worldSize = o.ranksPerNode * plan->nodeCount;
  for (int i = 0; i < o.ranksPerNode; ++i) {
    plan->ranks.push_back({plan->nodeRank * o.ranksPerNode + i, i, i, {}});
  }
  plan->servesStore = plan->nodeRank == 0;
  return Status::Ok();
}

std::string serverIds(const ranktable::ClusterSpec& spec) {
  std::string ids;
  for (const auto& server : spec.servers)
    ids += (ids.empty() ? "'" : ", '") + server.serverId + "'";
  return ids;
}

Status findServer(const LaunchOptions& o, const ranktable::ClusterSpec& spec, int* index) {
  if (o.serverId.empty()) {
    if (spec.serverCount() == 1) {
      *index = 0;
      return Status::Ok();
    }
    return makeError(ErrorCode::kInvalidArgument,
                     "the rank table {} has {} servers ({}): choose this machine's with "
                     "--server-id ID",
                     o.ranktable, spec.serverCount(), serverIds(spec));
  }
  for (int i = 0; i < spec.serverCount(); ++i) {
    if (spec.servers[i].serverId != o.serverId) continue;
    *index = i;
    return Status::Ok();
  }
  return makeError(ErrorCode::kInvalidArgument,
                   "--server-id '{}' is not in the rank table {} (its servers: {})", o.serverId,
                   o.ranktable, serverIds(spec));
}

Status checkAgainstTable(const LaunchOptions& o, const ranktable::ClusterSpec& spec, int server) {
  const auto& info = spec.servers[server];
  const int count = static_cast<int>(info.ranks.size());
  if (o.ranksPerNode > 0 && o.ranksPerNode != count) {
    return makeError(ErrorCode::kInvalidArgument,
                     "-n {} contradicts the rank table {}: server '{}' has {} ranks",
                     o.ranksPerNode, o.ranktable, info.serverId, count);
  }
  if (o.nnodes > 0 && o.nnodes != spec.serverCount()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--nnodes {} contradicts the rank table {}, which has {} servers", o.nnodes,
                     o.ranktable, spec.serverCount());
  }
  if (o.nodeRank >= 0 && o.nodeRank != server) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--node-rank {} contradicts the rank table {}: server '{}' is server {}",
                     o.nodeRank, o.ranktable, info.serverId, server);
  }
  return Status::Ok();
}

Status planFromTable(const LaunchOptions& o, LaunchPlan* plan) {
  ranktable::ClusterSpec spec;
  COHORT_RETURN_IF_ERROR(ranktable::loadClusterFile(o.ranktable, {}, &spec));
  int server = -1;
  COHORT_RETURN_IF_ERROR(findServer(o, spec, &server));
  COHORT_RETURN_IF_ERROR(checkAgainstTable(o, spec, server));
  COHORT_RETURN_IF_ERROR(setMaster(o, spec.serverCount(), plan));
  const std::vector<int>& ranks = spec.servers[server].ranks;
  plan->worldSize = spec.rankCount();
  plan->localSize = static_cast<int>(ranks.size());
  plan->nodeCount = spec.serverCount();
  plan->nodeRank = server;
  for (int i = 0; i < plan->localSize; ++i) {
    plan->ranks.push_back({ranks[i], i, spec.ranks[ranks[i]].deviceId, {}});
  }
  plan->servesStore = spec.serverOf(0) == server;
  std::error_code ec;
  plan->ranktablePath = std::filesystem::absolute(o.ranktable, ec).string();
  if (ec) plan->ranktablePath = o.ranktable;
  return Status::Ok();
}

}  // namespace

Status parseHostPort(const std::string& text, std::string* host, int* port) {
  const std::size_t colon = text.rfind(':');
  std::string h = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string p = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  const bool portOk = !p.empty() && p.size() <= 5 &&
                      p.find_first_not_of("0123456789") == std::string::npos && std::stoi(p) >= 1 &&
                      std::stoi(p) <= 65535;
  if (h.empty() || !portOk || h.find_first_of("[]/ ") != std::string::npos) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--master '{}' is not ADDR:PORT (e.g. 10.0.0.1:29500 or [fe80::1]:29500, "
                     "port 1..65535)",
                     text);
  }
  *host = h;
  *port = std::stoi(p);
  return Status::Ok();
}

Status makeLaunchPlan(const LaunchOptions& options, LaunchPlan* plan) {
  COHORT_RETURN_IF_ERROR(checkCommon(options));
  LaunchPlan result;
  COHORT_RETURN_IF_ERROR(options.ranktable.empty() ? planFromCounts(options, &result)
                                                   : planFromTable(options, &result));
  if (options.bindCores) bindToCores(allowedCpus(), &result);
  *plan = std::move(result);
  return Status::Ok();
}

void bindToCores(const std::vector<int>& cpus, LaunchPlan* plan) {
  const std::size_t c = cpus.size();
  const std::size_t n = static_cast<std::size_t>(plan->localSize);
  if (c == 0 || n == 0) return;
  for (RankSlot& slot : plan->ranks) {
    const auto i = static_cast<std::size_t>(slot.localRank);
    slot.cpus.clear();
    if (n >= c) {
      slot.cpus.push_back(cpus[i % c]);
      continue;
    }
    // Shares of c / n processors, the first c % n ranks one more.
    const std::size_t share = c / n, extra = c % n;
    const std::size_t first = i * share + std::min(i, extra);
    const std::size_t count = share + (i < extra ? 1 : 0);
    slot.cpus.assign(cpus.begin() + static_cast<std::ptrdiff_t>(first),
                     cpus.begin() + static_cast<std::ptrdiff_t>(first + count));
  }
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace cohort::launcher
