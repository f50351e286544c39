// The communicator's state made and torn down: create, connect, finalize, split.
// The public calls that make one (root info, environment, all-in-one) are in
// comm_public.cc.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>

#include "collective/comm_impl.h"
#include "collective/mesh_layout.h"
#include "common/config.h"
#include "common/process.h"
#include "common/error.h"
#include "common/log.h"
#include "common/trace.h"
#include "kernels/simd.h"
#include "runtime/node_registry.h"
#include "transport/jobenv/job_env.h"
#include "transport/netif.h"
#include "transport/peer_info.h"
#include "transport/root_info.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp_store.h"

namespace cohort {

using transport::PeerInfo;

namespace {

std::uint32_t libraryVersionNumber() {
  return COHORT_VERSION_MAJOR * 10000 + COHORT_VERSION_MINOR * 100 + COHORT_VERSION_PATCH;
}

Status checkVersions(const std::vector<PeerInfo>& peers, int rank) {
  const PeerInfo& me = peers[static_cast<std::size_t>(rank)];
  for (const auto& p : peers) {
    if (p.protocolVersion != me.protocolVersion || p.libraryVersion != me.libraryVersion) {
      return makeError(ErrorCode::kVersionMismatch,
                       "rank {} runs Cohort {} (protocol {}) but rank {} runs Cohort {} "
                       "(protocol {}): every rank of a job must use the same version",
                       rank, transport::libraryVersionString(me.libraryVersion),
                       me.protocolVersion, p.rank, transport::libraryVersionString(p.libraryVersion),
                       p.protocolVersion);
    }
  }
  return Status::Ok();
}

// A communicator's own link retry settings (CommOptions), over the environment's.
Status linkRetry(const CommOptions& options,
                 std::optional<transport::TransportContext::Retry>* out) {
  if (options.retryEnable.empty() && options.retryParams.empty()) return Status::Ok();
  std::map<std::string, std::string> vars;
  if (!options.retryEnable.empty()) vars["HCCL_OP_RETRY_ENABLE"] = options.retryEnable;
  if (!options.retryParams.empty()) vars["HCCL_OP_RETRY_PARAMS"] = options.retryParams;
  const Config parsed = Config::parse(vars);
  const Status valid = parsed.status();
  if (!valid.ok()) {
    return makeError(ErrorCode::kInvalidArgument, "the communicator's retry settings: {}",
                     valid.message());
  }
  const Config& env = Config::global();
  *out = transport::TransportContext::Retry::from(options.retryEnable.empty() ? env : parsed,
                                                  options.retryParams.empty() ? env : parsed);
  return Status::Ok();
}

// Processes that made a root info keep its store server alive until they exit.
std::mutex gServersMu;
std::vector<std::shared_ptr<transport::TcpStoreServer>> gServers;

}  // namespace

void keepStoreServer(std::shared_ptr<transport::TcpStoreServer> server) {
  std::lock_guard<std::mutex> lock(gServersMu);
  gServers.push_back(std::move(server));
}

Status Communicator::Impl::create(std::shared_ptr<transport::Store> store,
                                  const std::string& prefix, const transport::JobToken& token,
                                  int rank, int size, int device, const CommOptions& options,
                                  std::unique_ptr<Impl>* out) {
  // A COHORT_SIMD the processor cannot run: refuse here rather than run other kernels.
  COHORT_RETURN_IF_ERROR(kernels::simdStatus());
  std::unique_ptr<Impl> impl(new Impl());
  impl->rank = rank;
  impl->size = size;
  impl->device = device;
  impl->prefix = prefix;
  impl->options = options;
  impl->token_ = token;
  impl->store_ = std::move(store);
  impl->history_ = std::make_unique<collective::OpHistory>(
      fmt::format("rank {} of {}, communicator '{}' (device {})", rank, size, prefix, device));
  impl->bootstrap_ = std::make_unique<transport::Bootstrap>(
      std::make_shared<transport::PrefixStore>(impl->store_, prefix), rank, size);
  std::string algo = Config::global().algo;
  if (algo.empty() && !Config::global().hcclAlgo.empty()) {
    COHORT_RETURN_IF_ERROR(collective::translateHcclAlgo(Config::global().hcclAlgo, &algo));
  }
  COHORT_RETURN_IF_ERROR(collective::AlgoOverrides::parse(algo, &impl->overrides_));
  COHORT_RETURN_IF_ERROR(runtime::eventCreate(&impl->launch_.chain));
  Status s = impl->connect();
  if (!s.ok()) {
    return makeError(s.code(), "communicator init, rank {} of {} (device {}): {}", rank, size,
                     device, s.message());
  }
  log::setRank(rank);
  log::claimDeviceRank(device, rank, impl.get());
  trace::nameProcess(fmt::format("rank {}", rank));
  COHORT_LOG(kInfo, "collective", "communicator '{}' ready: rank {} of {}, {} node(s), {}", prefix,
             rank, size, impl->nodes,
             impl->topo_.meshAvailable ? "mesh" : impl->topo_.hierarchical ? "hierarchical" : "schedules");
  *out = std::move(impl);
  return Status::Ok();
}

Status Communicator::Impl::connect() {
  PeerInfo self;
  self.rank = rank;
  self.hostId = transport::localHostId();
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  self.hostname = host;
  self.pid = static_cast<std::int32_t>(getpid());
  self.device = device;
  runtime::DeviceInfo info;
  COHORT_RETURN_IF_ERROR(runtime::getDeviceInfo(device, &info));
  self.physicalDevice = info.physicalId;
  transport::NetInterface nic;
  if (transport::selectInterface(&nic).ok()) self.address = nic.address;
  self.libraryVersion = libraryVersionNumber();
  self.protocolVersion = COHORT_PROTOCOL_VERSION;
  // A store in another process may die with a failed rank; each rank offers a
  // standby for the survivors' agreement (comm_shrink.cc).
  if (!store_->inProcess()) {
    COHORT_RETURN_IF_ERROR(startStandby(standbyAddress(self), &self.standbyPort));
  }
  const Deadline deadline = connectDeadline();
  std::vector<transport::Bytes> blobs;
  COHORT_RETURN_IF_ERROR(bootstrap_->allgather(self.encode(), &blobs, deadline));
  peers_.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    COHORT_RETURN_IF_ERROR(PeerInfo::decode(blobs[static_cast<std::size_t>(r)], &peers_[static_cast<std::size_t>(r)]));
  }
  COHORT_RETURN_IF_ERROR(checkVersions(peers_, rank));
  // Local indices: order among the ranks of the same node.
  std::map<std::string, int> perNode;
  for (auto& p : peers_) p.localIndex = perNode[p.hostId]++;
  nodes = static_cast<int>(perNode.size());
  const PeerInfo& me = peers_[static_cast<std::size_t>(rank)];
  localRank = me.localIndex;
  localSize = perNode[me.hostId];
  transport::TransportContext ctx;
  ctx.rank = rank;
  ctx.size = size;
  ctx.self = me;
  ctx.token = token_;
  ctx.connectDeadline = deadline;
  ctx.shmRegionBytes = sizeof(collective::MeshRegion);
  ctx.operations = &operationsRun_;
  COHORT_RETURN_IF_ERROR(linkRetry(options, &ctx.retry));
  std::vector<int> others;
  for (int r = 0; r < size; ++r) {
    if (r != rank) others.push_back(r);
  }
  COHORT_RETURN_IF_ERROR(transport::connectPeers(ctx, *bootstrap_, peers_, others, &conns_,
                                                 &report_, &transports_));
  connPtrs_.clear();
  for (auto& c : conns_) connPtrs_.push_back(c.get());
  topo_.size = size;
  topo_.nodes = nodes;
  topo_.tuning = collective::Tuning::forThisNode(localSize);
  waits_ = collective::waitControl(&aborted_, topo_.tuning.crowded,
                                   [this] { return nodePeerGone(); });
  if (transports_.shm != nullptr) buildGroups(transports_.shm);
  return bootstrap_->barrier(deadline);
}

bool Communicator::Impl::nodePeerEnded(int q) const {
  const transport::PeerInfo& self = peers_[static_cast<std::size_t>(rank)];
  const transport::PeerInfo& peer = peers_[static_cast<std::size_t>(q)];
  if (q == rank || !peer.sameNode(self) || peer.pid <= 0 || peer.pid == self.pid) return false;
  return processEnded(peer.pid);
}

Status Communicator::Impl::nodePeerGone() const {
  for (int q = 0; q < size; ++q) {
    if (nodePeerEnded(q)) {
      return makeError(ErrorCode::kRemoteError, "remote rank {} died (process {} is gone)", q,
                       peers_[static_cast<std::size_t>(q)].pid);
    }
  }
  return Status::Ok();
}

Status Communicator::Impl::scratch(std::size_t bytes, void** out) {
  if (bytes > Config::global().buffSize) {  // planStaging keeps every algorithm within it
    return makeError(ErrorCode::kInternal, "communicator scratch of {} bytes exceeds COHORT_BUFFSIZE ({} bytes)",
                     bytes, Config::global().buffSize);
  }
  return scratch_.get(bytes, out);
}

bool Communicator::Impl::lastStreamLives() const {
  runtime::StreamDescription d;
  return launch_.lastStream != nullptr && runtime::streamDescribe(launch_.lastStream, &d).ok() &&
         d.device == launch_.last.device && d.id == launch_.last.streamId;
}

Status Communicator::Impl::waitForOperations() {
  // Operations run in call order: the last one's stream finishes last. A stream
  // destroyed since has drained.
  if (!lastStreamLives()) return Status::Ok();
  Status s = runtime::streamSynchronize(launch_.lastStream);
  return s.code() == ErrorCode::kInvalidHandle ? Status::Ok() : s;
}

Status Communicator::Impl::finalize() {
  if (finalStatus_) return *finalStatus_;
  finalStatus_ = Status::Ok();
  if (captureLink_ != nullptr) {  // launches of captured calls now fail, naming why
    std::lock_guard<std::mutex> lock(captureLink_->mu);
    captureLink_->impl = nullptr;
  }
  log::RankScope logAs(rank);
  // A failed operation was reported where it ran: this rank has left its peers already.
  (void)waitForOperations();
  if (mesh_ != nullptr && aborted_.load()) {
    mesh_->abortNow();  // the peers' errors say so
  } else if (mesh_ != nullptr && asyncError().ok()) {
    Status drained = mesh_->drain(execDeadline(), aborted_);
    if (!drained.ok()) COHORT_LOG(kError, "collective", "{}", drained.toString());
    finalStatus_ = std::move(drained);
  }
  return *finalStatus_;
}

Communicator::Impl::~Impl() {
  log::RankScope logAs(rank);
  (void)finalize();
  log::releaseDeviceRank(device, this);
  runtime::registryForgetComm(this);
  // Connections before transports (they use the transports' shared state).
  conns_.clear();
  mesh_.reset();
  transports_.shm = nullptr;
  transports_.all.clear();
  scratch_.release();
  stage_.release();
  if (launch_.chain != nullptr) (void)runtime::eventDestroy(launch_.chain);
}

Status Communicator::Impl::split(int color, int key, std::unique_ptr<Impl>* out) {
  // Everyone learns everyone's (color, key) through the parent's bootstrap.
  transport::Bytes mine = transport::encodeInt(color);
  auto k = transport::encodeInt(key);
  mine.insert(mine.end(), k.begin(), k.end());
  std::vector<transport::Bytes> all;
  COHORT_RETURN_IF_ERROR(bootstrap_->allgather(mine, &all, connectDeadline()));
  const int splitId = splits_++;
  out->reset();
  if (color < 0) return Status::Ok();
  std::vector<std::pair<std::int64_t, int>> members;  // (key, parent rank)
  for (int r = 0; r < size; ++r) {
    const auto& b = all[static_cast<std::size_t>(r)];
    const transport::Bytes c(b.begin(), b.begin() + 8), kk(b.begin() + 8, b.end());
    if (transport::decodeInt(c) == color) members.emplace_back(transport::decodeInt(kk), r);
  }
  std::sort(members.begin(), members.end());
  int newRank = -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].second == rank) newRank = static_cast<int>(i);
  }
  COHORT_RETURN_IF_ERROR(create(store_, fmt::format("{}/split{}/color{}", prefix, splitId, color),
                                token_, newRank, static_cast<int>(members.size()), device, options,
                                out));
  return Status::Ok();
}

void Communicator::Impl::abort() {
  if (!aborted_.exchange(true)) noteAbort();
}

Status Communicator::Impl::asyncError() const {
  if (!firstError_.failed.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lock(firstError_.mu);
  return firstError_.error;
}

void Communicator::Impl::setAsyncError(const Status& s) {
  std::lock_guard<std::mutex> lock(firstError_.mu);
  if (firstError_.error.ok() && !s.ok()) {
    firstError_.error = s;
    firstError_.failed.store(true, std::memory_order_release);
  }
}

long Communicator::Impl::execTimeoutMs() const {
  return options.execTimeoutMs >= 0 ? options.execTimeoutMs : 1000L * Config::global().execTimeoutS;
}

// The caller's stream waits for the operation's completion event under a
// watchdog of the same COHORT_EXEC_TIMEOUT (runtime), started a moment before the
// operation itself. The operation gives up a little earlier (a tenth, at most
// 1 s), so that its own error, naming the step and the late peer, is what the
// caller sees rather than the watchdog's.
Deadline Communicator::Impl::execDeadline() const {
  const long ms = execTimeoutMs();
  if (ms == 0) return Deadline::never();
  const std::chrono::milliseconds limit(ms);
  return Deadline::afterCoarse(limit - std::min<std::chrono::milliseconds>(
                                            limit / 10, std::chrono::seconds(1)));
}

}  // namespace cohort
