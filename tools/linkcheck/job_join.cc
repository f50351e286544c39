#include "tools/linkcheck/job_join.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cohort/ranktable.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/jobenv/job_env.h"

namespace cohort::linkcheck {

namespace {

Status readFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  if (!in) return makeError(ErrorCode::kInvalidArgument, "cannot read the rank table {}", path);
  *text = all.str();
  return Status::Ok();
}

// COHORT_JOB_TOKEN, else a hash of the table (the rule of
// Communicator::initFromRankTable): every rank started from the same file agrees
// on it, but so can anyone who can read the file.
Status tableToken(const std::string& path, transport::JobToken* token) {
  const std::string& text = Config::global().jobToken;
  if (!text.empty()) {
    *token = transport::JobToken::fromText(text);
    return Status::Ok();
  }
  std::string contents;
  COHORT_RETURN_IF_ERROR(readFile(path, &contents));
  *token = transport::JobToken::fromText("ranktable:" + contents);
  COHORT_LOG(kWarn, "linkcheck",
             "COHORT_JOB_TOKEN is not set: the job token is a hash of {}, which anyone who can "
             "read the file can compute; set COHORT_JOB_TOKEN to a secret",
             path);
  return Status::Ok();
}

std::vector<TableRank> tableRanks(const ranktable::ClusterSpec& spec) {
  std::vector<TableRank> out;
  for (const ranktable::RankInfo& r : spec.ranks) {
    const std::string& serverId = spec.servers.at(static_cast<std::size_t>(r.serverIndex)).serverId;
    out.push_back({r.deviceIp, r.hostIp, serverId});
  }
  return out;
}

// A launcher that started the job from a rank table (cohortrun --ranktable)
// says so in COHORT_RANKTABLE: the links are then named as that table names
// them. Naming is all it is for, so a table that does not fit is only logged.
void tableOfLauncher(int size, JobMembership* out) {
  const char* path = std::getenv("COHORT_RANKTABLE");
  if (path == nullptr || *path == '\0') return;
  ranktable::ClusterSpec spec;
  ranktable::LoadOptions options;
  options.timeoutMs = 0;
  options.logWarnings = false;
  const Status s = ranktable::loadClusterFile(path, options, &spec);
  if (s.ok() && spec.rankCount() == size) {
    out->table = tableRanks(spec);
    return;
  }
  COHORT_LOG(kInfo, "linkcheck", "COHORT_RANKTABLE={} does not name this job's {} ranks ({})", path,
             size, s.ok() ? fmt::format("it has {}", spec.rankCount()) : s.message());
}

Status joinFromTable(const JoinRequest& req, Deadline deadline, JobMembership* out) {
  ranktable::ClusterSpec spec;
  ranktable::LoadOptions options;
  options.ownRank = req.rank;
  if (req.rank < 0) {
    return makeError(ErrorCode::kInvalidArgument,
                     "--ranktable {} needs --rank N (this process's "
                     "rank in the table)",
                     req.ranktable);
  }
  COHORT_RETURN_IF_ERROR(ranktable::loadClusterFile(req.ranktable, options, &spec));
  out->table = tableRanks(spec);
  const TableRank& zero = out->table.at(0);
  const std::string host = !zero.hostIp.empty() ? zero.hostIp : zero.deviceIp;
  if (host.empty()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "rank table {}: rank 0 has neither host_ip nor device_ip, so the job store "
                     "(served by rank 0) has no address",
                     req.ranktable);
  }
  const int port = Config::global().ifBasePort;
  out->rank = req.rank;
  out->size = spec.rankCount();
  out->source = "rank table " + req.ranktable;
  COHORT_RETURN_IF_ERROR(tableToken(req.ranktable, &out->token));
  if (req.rank == 0) {
    Status s = transport::startMasterStore(host, port, out->token, &out->server);
    if (!s.ok()) return makeError(s.code(), "rank 0 of {}: {}", req.ranktable, s.message());
  }
  Status s = transport::connectTcpStore(host, port, out->token, req.rank, deadline, &out->store);
  if (!s.ok()) {
    return makeError(s.code(),
                     "rank {} cannot reach the job store at {}:{} (served by rank 0 of {}): {}",
                     req.rank, host, port, req.ranktable, s.message());
  }
  return Status::Ok();
}

}  // namespace

Status joinJob(const JoinRequest& req, Deadline deadline, JobMembership* out) {
  if (!req.ranktable.empty()) return joinFromTable(req, deadline, out);
  if (req.rank >= 0) {
    return makeError(ErrorCode::kInvalidArgument, "--rank {} needs --ranktable FILE", req.rank);
  }
  transport::JobEnvironment job;
  Status s = transport::detectJobEnvironment(&job);
  if (s.code() == ErrorCode::kUnavailable) {
    return makeError(ErrorCode::kUnavailable,
                     "not started as a job: none of RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK, "
                     "PMIX_RANK or SLURM_PROCID is set; run it under cohortrun or mpirun, or "
                     "pass --ranktable FILE --rank N ({})",
                     s.message());
  }
  COHORT_RETURN_IF_ERROR(s);
  out->rank = job.rank;
  out->size = job.size;
  out->source = job.source;
  tableOfLauncher(job.size, out);
  s = transport::connectJobStore(job, deadline, &out->store, &out->token, &out->server);
  if (!s.ok()) {
    return makeError(s.code(), "rank {} of {} ({}) cannot reach the job store: {}", job.rank,
                     job.size, job.source, s.message());
  }
  return Status::Ok();
}

}  // namespace cohort::linkcheck
