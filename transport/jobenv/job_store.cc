// Joining the job's store: the root info names a running server; a master
// address (torchrun's contract) means rank 0 serves the store itself.
#include <netdb.h>
#include <sys/socket.h>

#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "transport/jobenv/job_env.h"

namespace cohort::transport {

namespace {

// The server binds to an IP literal: a host name (torchrun's MASTER_ADDR often
// is one) is resolved first, IPv4 preferred.
Status resolveBindAddress(const std::string& host, std::string* literal) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0) {
    return makeError(ErrorCode::kConfigError, "host '{}' cannot be resolved: {}", host,
                     ::gai_strerror(rc));
  }
  const addrinfo* pick = found;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
  }
  char text[NI_MAXHOST] = {};
  const int nrc = ::getnameinfo(pick->ai_addr, pick->ai_addrlen, text, sizeof(text), nullptr, 0,
                                NI_NUMERICHOST);
  ::freeaddrinfo(found);
  if (nrc != 0) {
    return makeError(ErrorCode::kSystemError, "host '{}': getnameinfo: {}", host,
                     ::gai_strerror(nrc));
  }
  *literal = text;
  return Status::Ok();
}

}  // namespace

Status startMasterStore(const std::string& masterAddr, int masterPort, const JobToken& token,
                        std::shared_ptr<TcpStoreServer>* server) {
  StoreServerOptions options;
  COHORT_RETURN_IF_ERROR(resolveBindAddress(masterAddr, &options.bindAddress));
  options.port = masterPort;
  options.token = token;
  const Status s = TcpStoreServer::start(options, server);
  if (!s.ok()) {
    return Status(s.code(), fmt::format("cannot serve the job store at {}:{}: {}", masterAddr,
                                        masterPort, s.message()));
  }
  COHORT_LOG(kInfo, "bootstrap", "serving the job store at {}:{}", options.bindAddress, masterPort);
  return Status::Ok();
}

JobToken masterJobToken(const std::string& jobTokenText, const std::string& masterAddr,
                        int masterPort, int worldSize, bool* hashed) {
  *hashed = jobTokenText.empty();
  if (!*hashed) return JobToken::fromText(jobTokenText);
  return JobToken::fromText(fmt::format("{}:{}/{}", masterAddr, masterPort, worldSize));
}

Status connectJobStore(const JobEnvironment& job, Deadline deadline, std::shared_ptr<Store>* store,
                       JobToken* token, std::shared_ptr<TcpStoreServer>* server) {
  if (job.rootInfo) {
    *token = job.rootInfo->token;
    return connectStore(*job.rootInfo, job.rank, deadline, store);
  }
  if (job.masterAddr.empty()) {
    return makeError(ErrorCode::kUnavailable,
                     "rank {} of {} ({}): no store to join: neither COHORT_ROOT_INFO nor "
                     "MASTER_ADDR/MASTER_PORT is set",
                     job.rank, job.size, job.source);
  }
  bool hashed = false;
  const JobToken jobToken =
      masterJobToken(job.jobToken, job.masterAddr, job.masterPort, job.size, &hashed);
  if (hashed) {
    COHORT_LOG(kWarn, "bootstrap",
               "COHORT_JOB_TOKEN is not set: the job token is a hash of {}:{}/{}, which anyone "
               "who knows the address can compute; set COHORT_JOB_TOKEN to a secret",
               job.masterAddr, job.masterPort, job.size);
  }
  if (job.rank == 0) {
    const Status s = startMasterStore(job.masterAddr, job.masterPort, jobToken, server);
    if (!s.ok()) {
      return Status(s.code(), fmt::format("rank 0 of {} ({}, MASTER_ADDR/MASTER_PORT): {}",
                                          job.size, job.source, s.message()));
    }
  }
  *token = jobToken;
  return connectTcpStore(job.masterAddr, job.masterPort, jobToken, job.rank, deadline, store);
}

}  // namespace cohort::transport
