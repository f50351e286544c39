// The table names no root info, so the ranks meet in a rendezvous store, where the
// table's rank 0 publishes a fresh root info (Communicator::getUniqueId) and the
// others read it. The store is the job's when a launcher provides one
// (COHORT_ROOT_INFO: cohortrun, which also holds HCCL_IF_BASE_PORT itself), else
// one that rank 0 serves at the table's address for the rest of the process. Keys
// carry the table's token and a count of the communicators this rank made from
// the table, so a process can make several in turn.
#include "hccl/cluster_join.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "cohort/ranktable.h"
#include "cohort/runtime.h"
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
using transport::Bytes;
using transport::JobToken;
using transport::Store;

std::mutex gMu;
std::map<std::string, int> gJoins;  // "token#rank" -> communicators made so far
std::map<std::string, std::shared_ptr<transport::TcpStoreServer>> gServers;  // by "addr:port"

Outcome unreadable(const char* path, const std::string& reason) {
  return Outcome(
      HCCL_E_OPEN_FILE_FAILURE,
      makeError(ErrorCode::kInvalidArgument,
                "EI0004: Failed to parse the ranktable file {}. Reason: {}", path, reason));
}

Outcome loadTable(const char* path, ClusterSpec* spec) {
  if (!std::ifstream(path).good()) {
    return unreadable(path, fmt::format("the file cannot be opened ({})", std::strerror(errno)));
  }
  ranktable::Diagnostics diagnostics;
  Status s = ranktable::loadClusterFile(path, ranktable::LoadOptions(), spec, &diagnostics);
  if (s.ok()) return s;
  if (s.code() == ErrorCode::kInvalidArgument) return unreadable(path, s.message());  // a folder
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

// The store rank 0 serves for the table: at its host_ip (else device_ip), on its
// host_port (else HCCL_IF_BASE_PORT); started once per process.
Outcome tableStore(const char* path, const ClusterSpec& spec, int rank, const JobToken& token,
                   std::shared_ptr<Store>* store, std::string* where) {
  const ranktable::RankInfo& root = spec.ranks.front();
  const std::string host = !root.hostIp.empty() ? root.hostIp : root.deviceIp;
  if (host.empty()) {
    return Outcome(HCCL_E_PARA,
                   makeError(ErrorCode::kValidationError,
                             "EI0014: Value (missing) for ranktable variable host_ip of rank 0 "
                             "is invalid. Expected value: the address where rank 0 serves the "
                             "rendezvous store (host_ip, else device_ip) in {}.",
                             path));
  }
  const int port = root.hostPort > 0 ? root.hostPort : Config::global().ifBasePort;
  *where = fmt::format("{}:{}", host, port);
  if (rank == 0) {
    std::lock_guard<std::mutex> lock(gMu);
    auto& server = gServers[*where];
    if (!server) {
      Status s = transport::startMasterStore(host, port, token, &server);
      if (!s.ok()) {
        gServers.erase(*where);
        return makeError(s.code(), "rank 0 of {}: {}", path, s.message());
      }
    }
  }
  return transport::connectTcpStore(host, port, token, rank, connectDeadline(), store);
}

// The launcher's store (COHORT_ROOT_INFO), when there is one.
bool jobStore(int rank, std::shared_ptr<Store>* store, std::string* where, Status* status) {
  transport::JobEnvironment job;
  if (!transport::detectJobEnvironment(&job).ok() || !job.rootInfo) return false;
  *where = fmt::format("{}:{} (the job's store)", job.rootInfo->host, job.rootInfo->port);
  *status = transport::connectStore(*job.rootInfo, rank, connectDeadline(), store);
  return true;
}

// Rank 0 publishes a fresh root info under `key`; the others wait for it.
Status exchangeRootInfo(Store& store, const std::string& key, int rank, UniqueId* id) {
  Bytes bytes;
  if (rank == 0) {
    COHORT_RETURN_IF_ERROR(Communicator::getUniqueId(id));
    bytes.assign(id->bytes, id->bytes + sizeof(id->bytes));
    return store.set(key, bytes);
  }
  COHORT_RETURN_IF_ERROR(store.get(key, &bytes, connectDeadline()));
  if (bytes.size() != sizeof(id->bytes)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "rendezvous key {} holds {} bytes, not a root info", key, bytes.size());
  }
  std::memcpy(id->bytes, bytes.data(), bytes.size());
  return Status::Ok();
}

}  // namespace

Outcome prepareClusterJoin(const char* function, const char* path, std::uint32_t rank,
                           ClusterJoin* out) {
  ClusterSpec spec;
  HCCL_RETURN_IF_FAILED(loadTable(path, &spec));
  HCCL_RETURN_IF_FAILED(checkRankAndDevice(function, path, rank, spec));
  const std::string& tokenText = Config::global().jobToken;
  const JobToken token =
      JobToken::fromText(!tokenText.empty() ? tokenText : "ranktable:" + ranktable::toJson(spec));
  const int r = static_cast<int>(rank);
  std::shared_ptr<Store> store;
  Status joined;
  if (!jobStore(r, &store, &out->store, &joined)) {
    HCCL_RETURN_IF_FAILED(tableStore(path, spec, r, token, &store, &out->store));
  }
  COHORT_RETURN_IF_ERROR(joined);
  int made = 0;
  {
    std::lock_guard<std::mutex> lock(gMu);
    made = gJoins[fmt::format("{}#{}", token.hex(), rank)]++;
  }
  const std::string key = fmt::format("hccl/ranktable/{}/{}", token.hex(), made);
  Status s = exchangeRootInfo(*store, key, r, &out->id);
  if (!s.ok()) {
    return makeError(s.code(), "{}: rank {} of {}: rendezvous at {}: {}", function, rank, path,
                     out->store, s.message());
  }
  out->rankCount = spec.rankCount();
  COHORT_LOG(kInfo, "hccl", "{}: rank {} of {} ({}): communicator {} of the table, met at {}",
             function, rank, spec.rankCount(), path, made, out->store);
  return Status::Ok();
}

}  // namespace cohort::hccl
