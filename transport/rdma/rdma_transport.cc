// setup() reserves, for every other rank, a queue pair (in INIT, receives
// posted) and a receive ring, and publishes them all in one blob; connect()
// reads the peer's entry for this rank, moves the queue pair to RTR and RTS and
// hands it to a connection. Queue pairs never connected are freed with the
// transport.
#include "transport/rdma/rdma_transport.h"

#include <map>
#include <random>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/rdma/rdma_connection.h"
#include "transport/rdma/rdma_device.h"
#include "transport/rdma/rdma_rejoin.h"
#include "transport/rdma/rdma_setup_blob.h"
#include "transport/tcp/tcp_retry.h"

namespace cohort::transport {

namespace rdma {
namespace {

/// Registrations of caller memory kept per transport.
constexpr std::size_t kCacheCapacity = 64;

std::uint32_t randomPsn() {
  std::random_device rd;
  return rd() & kImmValueMask;
}

/// The queue pairs that replace broken ones on a link to one peer (whose port
/// address is fixed for the job). Not thread-safe (the connection's thread).
class VerbsQpMaker : public QpMaker {
 public:
  VerbsQpMaker(std::shared_ptr<RdmaDevice> device, QpSettings settings, RemoteQp peer)
      : device_(std::move(device)), settings_(settings), peer_(peer) {}
  Status make(std::unique_ptr<QueuePair>* qp, std::uint32_t* psn) override {
    std::unique_ptr<VerbsQueuePair> made;
    COHORT_RETURN_IF_ERROR(VerbsQueuePair::create(device_, &made));
    COHORT_RETURN_IF_ERROR(postInitialReceives(*made));
    *psn = randomPsn();
    *qp = std::move(made);
    return Status::Ok();
  }
  Status connect(QueuePair& qp, std::uint32_t psn, std::uint32_t peerQpn,
                 std::uint32_t peerPsn) override {
    auto& verbs = static_cast<VerbsQueuePair&>(qp);  // made by make() above
    RemoteQp remote = peer_;
    remote.qpn = peerQpn;
    remote.psn = peerPsn;
    COHORT_RETURN_IF_ERROR(
        verbs.modify(rtrTransition(device_->localPort(), remote, settings_), "RTR"));
    return verbs.modify(rtsTransition(psn, settings_), "RTS");
  }

 private:
  std::shared_ptr<RdmaDevice> device_;
  QpSettings settings_;
  RemoteQp peer_;
};

/// Not thread-safe (one per communicator rank). Owns the queue pairs not yet
/// connected; shares the device and the registration cache with its connections,
/// which may outlive it.
class RdmaTransport : public Transport {
 public:
  RdmaTransport(const TransportContext& context, std::shared_ptr<RdmaDevice> device,
                QpSettings settings)
      : context_(context),
        device_(std::move(device)),
        registrar_(std::make_shared<VerbsRegistrar>(device_)),
        cache_(std::make_shared<RegistrationCache>(registrar_, kCacheCapacity)),
        settings_(settings) {}

  const char* name() const override { return "rdma"; }
  std::string rejectReason(const PeerInfo& peer) const override {
    return peer.rank == context_.rank ? "the peer is this rank" : "";
  }
  Status setup(Bytes* blob) override;
  Status connect(const PeerInfo& peer, const Bytes& peerBlob,
                 std::unique_ptr<Connection>* out) override;

 private:
  struct Reserved {
    RdmaBuffers buffers;
    std::unique_ptr<VerbsQueuePair> qp;  // after the buffers: destroyed first
    std::uint32_t psn = 0;
  };
  Status reserve(int peer, Reserved* out, RdmaQpEntry* entry);
  Status checkPeerBlob(const PeerInfo& peer, const RdmaSetupBlob& blob) const;
  std::string localName(std::uint32_t qpn) const;
  Status resilience(const PeerInfo& peer, const RdmaSetupBlob& blob, const RdmaQpEntry& entry,
                    const std::string& where, std::unique_ptr<RdmaResilience>* out) const;

  TransportContext context_;
  std::shared_ptr<RdmaDevice> device_;
  std::shared_ptr<Registrar> registrar_;
  std::shared_ptr<RegistrationCache> cache_;
  QpSettings settings_;
  std::map<int, Reserved> reserved_;
  std::shared_ptr<tcp::ReconnectHub> hub_;  // with HCCL_OP_RETRY_ENABLE
  int hubPort_ = 0;
  bool setUp_ = false;
};

Status RdmaTransport::reserve(int peer, Reserved* out, RdmaQpEntry* entry) {
  COHORT_RETURN_IF_ERROR(VerbsQueuePair::create(device_, &out->qp));
  COHORT_RETURN_IF_ERROR(RegisteredBuffer::create(registrar_, RdmaBuffers::ringBytes(), kQpAccess,
                                                  &out->buffers.ring));
  COHORT_RETURN_IF_ERROR(RegisteredBuffer::create(registrar_, RdmaBuffers::sendAreaBytes(),
                                                  IBV_ACCESS_LOCAL_WRITE, &out->buffers.sendArea));
  COHORT_RETURN_IF_ERROR(postInitialReceives(*out->qp));
  out->psn = randomPsn();
  const MemoryRegion& ring = out->buffers.ring->region();
  *entry = RdmaQpEntry{peer,
                       out->qp->qpNumber(),
                       out->psn,
                       reinterpret_cast<std::uintptr_t>(ring.addr),
                       ring.rkey,
                       kRingSlots,
                       static_cast<std::uint32_t>(kSlotStride),
                       static_cast<std::uint32_t>(hubPort_)};
  return Status::Ok();
}

Status RdmaTransport::setup(Bytes* blob) {
  if (setUp_) return Status(ErrorCode::kInvalidUsage, "rdma transport: setup() called twice");
  setUp_ = true;
  RdmaSetupBlob b;
  b.handshake = Handshake::local(ChannelKind::kData, context_.token);
  b.handshake.fromRank = context_.rank;
  b.handshake.worldSize = context_.size;
  b.handshake.fromDevice = context_.self.device;
  b.endpoint = device_->endpoint();
  if (tcp::RetryPolicy::anyEnabled(context_.retry)) {
    // The side channel a broken queue pair is replaced through (rdma_rejoin.h).
    Handshake expected = Handshake::local(ChannelKind::kReconnect, context_.token);
    expected.fromRank = expected.toRank = context_.rank;
    expected.worldSize = context_.size;
    expected.fromDevice = context_.self.device;
    hub_ = std::make_shared<tcp::ReconnectHub>(tcp::TcpOptions::fromConfig(), expected);
    COHORT_RETURN_IF_ERROR(hub_->listen(context_.self.address, &hubPort_));
  }
  for (int peer = 0; peer < context_.size; ++peer) {
    if (peer == context_.rank) continue;
    RdmaQpEntry entry;
    Status s = reserve(peer, &reserved_[peer], &entry);
    if (!s.ok()) {
      return makeError(s.code(), "rdma rank {}: reserving a queue pair for rank {} on {}: {}",
                       context_.rank, peer, device_->describe(), s.message());
    }
    b.entries.push_back(entry);
  }
  *blob = b.encode();
  COHORT_LOG(kDebug, "transport", "rdma rank {}: {} queue pairs reserved on {} ({} blob bytes)",
             context_.rank, b.entries.size(), device_->describe(), blob->size());
  return Status::Ok();
}

Status RdmaTransport::checkPeerBlob(const PeerInfo& peer, const RdmaSetupBlob& blob) const {
  Handshake expected = Handshake::local(ChannelKind::kData, context_.token);
  expected.worldSize = context_.size;
  const std::string where = fmt::format("rank {} ({})", peer.rank, peer.address);
  COHORT_RETURN_IF_ERROR(blob.handshake.verify(expected, where));
  if (blob.handshake.fromRank != peer.rank) {
    return makeError(ErrorCode::kMismatch, "rdma: the setup blob of {} says it is from rank {}",
                     where, blob.handshake.fromRank);
  }
  if (blob.endpoint.linkLayer != device_->endpoint().linkLayer) {
    return makeError(ErrorCode::kUnavailable,
                     "rdma: {} is on {} and rank {} on {}: link layers differ", where,
                     blob.endpoint.linkLayer == kLinkLayerEthernet ? "Ethernet" : "InfiniBand",
                     context_.rank, device_->describe());
  }
  const RdmaQpEntry* e = blob.entryFor(context_.rank);
  if (!e) {
    return makeError(ErrorCode::kConnectionError, "rdma: {} reserved no queue pair for rank {}",
                     where, context_.rank);
  }
  if (e->ringSlots > kRingSlots || e->slotBytes <= kSlotHeaderBytes ||
      (e->slotBytes - kSlotHeaderBytes) % 64 != 0) {
    return makeError(ErrorCode::kMismatch,
                     "rdma: {} offers a ring of {} slots of {} bytes; this rank needs at most {} "
                     "slots with a payload that is a multiple of 64",
                     where, e->ringSlots, e->slotBytes, kRingSlots);
  }
  return Status::Ok();
}

std::string RdmaTransport::localName(std::uint32_t qpn) const {
  return fmt::format("rank {} {} qpn 0x{:x}", context_.rank, device_->describe(), qpn);
}

Status RdmaTransport::connect(const PeerInfo& peer, const Bytes& peerBlob,
                              std::unique_ptr<Connection>* out) {
  auto it = reserved_.find(peer.rank);
  if (it == reserved_.end() || !it->second.qp) {
    return makeError(ErrorCode::kInvalidUsage,
                     "rdma rank {}: connect to rank {} without setup(), or twice", context_.rank,
                     peer.rank);
  }
  RdmaSetupBlob blob;
  COHORT_RETURN_IF_ERROR(RdmaSetupBlob::decode(peerBlob, &blob));
  COHORT_RETURN_IF_ERROR(checkPeerBlob(peer, blob));
  const RdmaQpEntry& e = *blob.entryFor(context_.rank);
  Reserved& mine = it->second;
  RemoteQp remote{e.qpn, e.psn, blob.endpoint.gid, blob.endpoint.lid,
                  static_cast<ibv_mtu>(blob.endpoint.mtu)};
  COHORT_RETURN_IF_ERROR(
      mine.qp->modify(rtrTransition(device_->localPort(), remote, settings_), "RTR"));
  COHORT_RETURN_IF_ERROR(mine.qp->modify(rtsTransition(mine.psn, settings_), "RTS"));
  RdmaLink link;
  link.rank = context_.rank;
  link.peer = peer.rank;
  link.local = localName(mine.qp->qpNumber());
  link.remote =
      fmt::format("rank {} ({}) {}:{} gid {} qpn 0x{:x}", peer.rank, peer.hostname,
                  blob.endpoint.device, blob.endpoint.port, gidToString(blob.endpoint.gid), e.qpn);
  link.ringAddr = e.ringAddr;
  link.ringRkey = e.ringRkey;
  link.ringSlots = e.ringSlots;
  link.slotBytes = e.slotBytes;
  std::unique_ptr<RdmaResilience> retry;
  COHORT_RETURN_IF_ERROR(resilience(peer, blob, e, link.local + " <-> " + link.remote, &retry));
  auto conn = std::make_unique<RdmaConnection>(link, std::move(mine.qp), std::move(mine.buffers),
                                               cache_, std::move(retry));
  reserved_.erase(it);
  COHORT_RETURN_IF_ERROR(conn->start());
  COHORT_LOG(kInfo, "transport",
             "rdma connected {} <-> {} (tc {}, sl {}, ack timeout {:.3g} s x {})", link.local,
             link.remote, settings_.trafficClass, settings_.serviceLevel,
             ackTimeoutSeconds(settings_.timeout), settings_.retryCount);
  *out = std::move(conn);
  return Status::Ok();
}

Status RdmaTransport::resilience(const PeerInfo& peer, const RdmaSetupBlob& blob,
                                 const RdmaQpEntry& entry, const std::string& where,
                                 std::unique_ptr<RdmaResilience>* out) const {
  const tcp::RetryPolicy policy =
      tcp::RetryPolicy::forLink(peer.sameNode(context_.self), context_.retry);
  if (!policy.enabled) return Status::Ok();
  if (hub_ == nullptr || entry.hubPort == 0) {
    return tcp::RetryPolicy::disagreement(context_.rank, peer.rank);
  }
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(peer.address, ec);
  if (ec) {
    return makeError(ErrorCode::kInvalidArgument, "rdma: rank {}'s address '{}': {}", peer.rank,
                     peer.address, ec.message());
  }
  HubRejoiner::Ends ends;
  ends.hub = hub_;
  ends.peerHub = boost::asio::ip::tcp::endpoint(ip, static_cast<unsigned short>(entry.hubPort));
  ends.hello = Handshake::local(ChannelKind::kReconnect, context_.token);
  ends.hello.fromRank = context_.rank;
  ends.hello.toRank = peer.rank;
  ends.hello.worldSize = context_.size;
  ends.hello.fromDevice = context_.self.device;
  ends.options = tcp::TcpOptions::fromConfig();
  ends.peerRank = peer.rank;
  ends.dials = context_.rank < peer.rank;
  ends.where = "rdma " + where;
  RemoteQp remote{0, 0, blob.endpoint.gid, blob.endpoint.lid,
                  static_cast<ibv_mtu>(blob.endpoint.mtu)};
  auto r = std::make_unique<RdmaResilience>();
  r->policy = policy;
  r->rejoiner = std::make_unique<HubRejoiner>(
      std::move(ends), std::make_unique<VerbsQpMaker>(device_, settings_, remote));
  r->operations = context_.operations;
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace
}  // namespace rdma

Status makeRdmaTransport(const TransportContext& context, std::unique_ptr<Transport>* out) {
  rdma::QpSettings settings;
  COHORT_RETURN_IF_ERROR(rdma::QpSettings::fromConfig(Config::global(), &settings));
  std::shared_ptr<rdma::RdmaDevice> device;
  COHORT_RETURN_IF_ERROR(rdma::RdmaDevice::open(context.self.address, &device));
  *out = std::make_unique<rdma::RdmaTransport>(context, std::move(device), settings);
  return Status::Ok();
}

}  // namespace cohort::transport
