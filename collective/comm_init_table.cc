// Communicators from an HCCL rank table or YAML cluster file
// (Communicator::initFromRankTable): the table's rank 0 serves the rendezvous, or
// the launcher's store is used, and a timeout names the ranks that never came.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "cohort/ranktable.h"
#include "collective/comm_impl.h"
#include "common/config.h"
#include "common/error.h"
#include "transport/jobenv/job_env.h"
#include "transport/tcp_store.h"

namespace cohort {

namespace {

// Rank-table jobs: each rank marks that it joined the store, so that a timeout can
// say which ranks never came and where the table expects them.
std::string joinedKey(int rank) { return fmt::format("table-joined/{}", rank); }

std::string expectedAt(const ranktable::ClusterSpec& spec, int rank) {
  const ranktable::RankInfo& r = spec.ranks[static_cast<std::size_t>(rank)];
  const std::string server =
      r.serverIndex >= 0 ? spec.servers[static_cast<std::size_t>(r.serverIndex)].serverId : "?";
  return fmt::format("server '{}', host_ip {}, device {}, device_ip {}", server,
                     r.hostIp.empty() ? "-" : r.hostIp, r.deviceId,
                     r.deviceIp.empty() ? "-" : r.deviceIp);
}

std::string neverJoined(const ranktable::ClusterSpec& spec, transport::Store& store) {
  std::string text;
  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    bool joined = true;
    if (!store.check(joinedKey(static_cast<int>(r)), &joined).ok() || joined) continue;
    text += fmt::format("; rank {} never joined (the rank table expects it on {})", r,
                        expectedAt(spec, static_cast<int>(r)));
  }
  return text;
}

}  // namespace

Status Communicator::initFromRankTable(const std::string& path, int rank,
                                       std::unique_ptr<Communicator>* out,
                                       const CommOptions& commOptions) {
  if (out == nullptr) return recordError(Status(ErrorCode::kInvalidArgument, "initFromRankTable: out is null"));
  ranktable::LoadOptions options;
  options.ownRank = rank;
  ranktable::ClusterSpec spec;
  ranktable::Diagnostics diagnostics;
  Status s = ranktable::loadClusterFile(path, options, &spec, &diagnostics);
  COHORT_RETURN_IF_ERROR(recordError(s));
  const ranktable::RankInfo& root = spec.ranks[0];
  const std::string address = !root.hostIp.empty() ? root.hostIp : root.deviceIp;
  if (address.empty()) {
    return recordError(makeError(ErrorCode::kValidationError, "{}: rank 0 has neither host_ip "
                                 "nor device_ip: no address to rendezvous at", path));
  }
  // Under a launcher (cohortrun sets COHORT_ROOT_INFO) the job's store is used;
  // otherwise the table's rank 0 serves one at its address.
  std::shared_ptr<transport::Store> store;
  transport::JobToken token;
  transport::JobEnvironment job;
  if (transport::detectJobEnvironment(&job).ok() && job.rootInfo.has_value()) {
    token = job.rootInfo->token;
    COHORT_RETURN_IF_ERROR(recordError(
        transport::connectStore(*job.rootInfo, rank, connectDeadline(), &store)));
  } else {
    const int port = Config::global().ifBasePort;
    if (!Config::global().jobToken.empty()) {
      token = transport::JobToken::fromText(Config::global().jobToken);
    } else {
      std::ifstream in(path, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      token = transport::JobToken::fromText("ranktable:" + text.str());
    }
    if (rank == 0) {
      transport::StoreServerOptions so;
      so.bindAddress = address;
      so.port = port;
      so.token = token;
      std::shared_ptr<transport::TcpStoreServer> server;
      s = transport::TcpStoreServer::start(so, &server);
      if (!s.ok()) {
        return recordError(makeError(s.code(), "rank 0 of {} serves the rendezvous at {}:{} (its "
                                     "host_ip or device_ip): {}", path, address, port, s.message()));
      }
      keepStoreServer(server);
    }
    COHORT_RETURN_IF_ERROR(recordError(
        transport::connectTcpStore(address, port, token, rank, connectDeadline(), &store)));
  }
  // Marked before the wait for the others, so that their timeout does not list this
  // rank among those that never came.
  COHORT_RETURN_IF_ERROR(recordError(store->set(joinedKey(rank), transport::Bytes{1})));
  int device = -1;
  if (!runtime::getDevice(&device).ok()) {
    device = spec.ranks[static_cast<std::size_t>(rank)].deviceId;
    COHORT_RETURN_IF_ERROR(recordError(runtime::setDevice(device)));
  }
  std::unique_ptr<Impl> impl;
  s = Impl::create(store, "table", token, rank, static_cast<int>(spec.rankCount()), device,
                   commOptions, &impl);
  if (s.code() == ErrorCode::kTimeout) {
    s = Status(s.code(), s.message() + neverJoined(spec, *store));
  }
  COHORT_RETURN_IF_ERROR(recordError(s));
  out->reset(new Communicator(std::move(impl)));
  return Status::Ok();
}

}  // namespace cohort
