// Why the port moves: Communicator::initRank keys its rendezvous by fixed names in
// the store, so a store serves one communicator. A process that makes a second
// communicator from the same table (after destroying the first, or a second one
// beside it) meets a fresh store on the next port; HCCL likewise reserves 32
// ports from HCCL_IF_BASE_PORT.
#include "hccl/cluster_join.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cohort/ranktable.h"
#include "cohort/runtime.h"
#include "cohort/version.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/jobenv/job_env.h"
#include "transport/root_info.h"
#include "transport/tcp_store.h"

namespace cohort::hccl {

namespace {

namespace rt = cohort::runtime;
using ranktable::ClusterSpec;

constexpr int kPortsPerTable = 32;

std::mutex gMu;
std::map<std::string, int> gJoins;  // "token@addr:port#rank" -> communicators made so far
std::vector<std::shared_ptr<transport::TcpStoreServer>> gServers;  // served until exit

Outcome loadTable(const char* path, ClusterSpec* spec) {
  if (!std::ifstream(path).good()) {
    return Outcome(HCCL_E_OPEN_FILE_FAILURE,
                   makeError(ErrorCode::kInvalidArgument,
                             "EI0004: Failed to parse the ranktable file {}. Reason: the file "
                             "cannot be opened ({})",
                             path, std::strerror(errno)));
  }
  ranktable::Diagnostics diagnostics;
  Status s = ranktable::loadClusterFile(path, ranktable::LoadOptions(), spec, &diagnostics);
  if (s.ok()) return s;
  if (s.code() == ErrorCode::kInvalidArgument) {  // unreadable (a directory, say)
    return Outcome(
        HCCL_E_OPEN_FILE_FAILURE,
        makeError(ErrorCode::kInvalidArgument,
                  "EI0004: Failed to parse the ranktable file {}. Reason: {}", path, s.message()));
  }
  if (s.code() == ErrorCode::kParseError) {
    return Outcome(
        HCCL_E_PARA,
        makeError(ErrorCode::kParseError,
                  "EI0004: Failed to parse the ranktable file {}. Reason: {}", path, s.message()));
  }
  const auto errors = diagnostics.errors();
  if (s.code() == ErrorCode::kValidationError && !errors.empty()) {
    const auto& first = errors.front();
    return Outcome(HCCL_E_PARA,
                   makeError(ErrorCode::kValidationError,
                             "EI0014: Value {} for ranktable variable {} is invalid. Expected "
                             "value: {}. ({})",
                             first.found, first.location.toString(), first.expected, s.message()));
  }
  return s;  // kTimeout: still "initializing"
}

Outcome checkRankAndDevice(const char* function, const char* path, std::uint32_t rank,
                           const ClusterSpec& spec) {
  if (rank >= static_cast<std::uint32_t>(spec.rankCount())) {
    return Outcome(HCCL_E_PARA,
                   makeError(ErrorCode::kInvalidArgument,
                             "EI0014: Value {} for ranktable variable rank_id is invalid. "
                             "Expected value: is less than the communication size {} of {}.",
                             rank, spec.rankCount(), path));
  }
  const int wanted = spec.ranks[rank].deviceId;
  int device = -1;
  rt::DeviceInfo info;
  if (!rt::getDevice(&device).ok() || !rt::getDeviceInfo(device, &info).ok()) {
    return Outcome(HCCL_E_RUNTIME,
                   makeError(ErrorCode::kInvalidDevice,
                             "{}: the calling thread has no device; call aclrtSetDevice first "
                             "(rank {} has device_id {} in {})",
                             function, rank, wanted, path));
  }
  if (info.physicalId != wanted) {
    return Outcome(HCCL_E_UNAVAIL,
                   makeError(ErrorCode::kUnavailable,
                             "EI0014: Value {} for ranktable variable device_id (rank {}) is "
                             "invalid. Expected value: {}, the device this thread set. "
                             "ranktable config devId[{}], but local devId[{}]",
                             wanted, rank, info.physicalId, wanted, info.physicalId));
  }
  return Status::Ok();
}

// Rank 0's address and the first port of the table's range.
Outcome storeAddress(const char* path, const ClusterSpec& spec, std::string* host, int* port) {
  const ranktable::RankInfo& root = spec.ranks.front();
  *host = !root.hostIp.empty() ? root.hostIp : root.deviceIp;
  if (host->empty()) {
    return Outcome(HCCL_E_PARA,
                   makeError(ErrorCode::kValidationError,
                             "EI0014: Value (missing) for ranktable variable host_ip of rank 0 "
                             "is invalid. Expected value: the address where rank 0 serves the "
                             "rendezvous store (host_ip, else device_ip) in {}.",
                             path));
  }
  *port = root.hostPort > 0 ? root.hostPort : Config::global().ifBasePort;
  return Status::Ok();
}

// The port of this rank's next communicator of the table.
Outcome nextPort(const std::string& key, int basePort, int* port) {
  std::lock_guard<std::mutex> lock(gMu);
  int& made = gJoins[key];
  if (made >= kPortsPerTable || basePort + made > 65535) {
    return Outcome(HCCL_E_UNAVAIL,
                   makeError(ErrorCode::kUnavailable,
                             "this process already made {} communicators from this rank table "
                             "(ports {}..{}); no port is left for another",
                             made, basePort, basePort + made - 1));
  }
  *port = basePort + made++;
  return Status::Ok();
}

Status serveStore(const transport::RootInfo& info) {
  std::shared_ptr<transport::TcpStoreServer> server;
  COHORT_RETURN_IF_ERROR(transport::startMasterStore(info.host, info.port, info.token, &server));
  std::lock_guard<std::mutex> lock(gMu);
  gServers.push_back(std::move(server));
  return Status::Ok();
}

}  // namespace

Outcome prepareClusterJoin(const char* function, const char* path, std::uint32_t rank,
                           ClusterJoin* out) {
  ClusterSpec spec;
  HCCL_RETURN_IF_FAILED(loadTable(path, &spec));
  HCCL_RETURN_IF_FAILED(checkRankAndDevice(function, path, rank, spec));
  transport::RootInfo info;
  int basePort = 0;
  HCCL_RETURN_IF_FAILED(storeAddress(path, spec, &info.host, &basePort));
  const std::string& tokenText = Config::global().jobToken;
  info.token = transport::JobToken::fromText(
      !tokenText.empty() ? tokenText : "ranktable:" + ranktable::toJson(spec));
  info.protocolVersion = COHORT_PROTOCOL_VERSION;
  int port = 0;
  HCCL_RETURN_IF_FAILED(nextPort(
      fmt::format("{}@{}:{}#{}", info.token.hex(), info.host, basePort, rank), basePort, &port));
  info.port = static_cast<std::uint16_t>(port);
  if (rank == 0) {
    Status s = serveStore(info);
    if (!s.ok()) return makeError(s.code(), "{}: rank 0 of {}: {}", function, path, s.message());
  }
  info.toBytes(out->id.bytes);
  out->rankCount = spec.rankCount();
  out->store = fmt::format("{}:{}", info.host, port);
  COHORT_LOG(kInfo, "hccl", "{}: rank {} of {} ({}): store at {} ({})", function, rank,
             spec.rankCount(), path, out->store, rank == 0 ? "served here" : "served by rank 0");
  return Status::Ok();
}

}  // namespace cohort::hccl
