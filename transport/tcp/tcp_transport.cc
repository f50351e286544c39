#include "transport/tcp/tcp_transport.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/log.h"
#include "transport/netif.h"
#include "transport/tcp/socket_util.h"
#include "transport/tcp/tcp_acceptor.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_dialer.h"
#include "transport/tcp/tcp_retry.h"

namespace cohort::transport {

namespace tcp {

namespace asio = boost::asio;

namespace {

// What a rank's blob says: where it listens and how it dials.
struct ListenBlob {
  std::string address;
  int port = 0;
  int sockets = 1;
  std::size_t chunkBytes = 0;
  int hubPort = 0;  // the reconnect listener's (tcp_retry.h); 0 = links are not retried

  Bytes encode() const {
    std::string text = fmt::format("tcp1 {} {} {} {}", address, port, sockets, chunkBytes);
    if (hubPort > 0) text += fmt::format(" {}", hubPort);
    return Bytes(text.begin(), text.end());
  }
  static bool decode(const Bytes& blob, ListenBlob* out) {
    std::istringstream in(std::string(blob.begin(), blob.end()));
    std::string tag;
    in >> tag >> out->address >> out->port >> out->sockets >> out->chunkBytes;
    const bool fields = static_cast<bool>(in);
    if (fields && !(in >> out->hubPort)) out->hubPort = 0;  // optional
    return fields && tag == "tcp1" && out->port > 0 && out->port < 65536 && out->sockets > 0 &&
           out->sockets < kMaxSocketsPerPeer && out->chunkBytes > 0 && out->hubPort >= 0 &&
           out->hubPort < 65536;
  }
};

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// One per communicator rank. Not thread-safe. Connections it makes own their
/// sockets and outlive it safely.
class TcpTransport : public Transport {
 public:
  TcpTransport(const TransportContext& context, const TcpOptions& options)
      : context_(context), options_(options), acceptor_(io_, options, expectedHello()) {}

  const char* name() const override { return "tcp"; }
  std::string rejectReason(const PeerInfo&) const override { return ""; }
  Status setup(Bytes* blob) override;
  Status connect(const PeerInfo& peer, const Bytes& peerBlob,
                 std::unique_ptr<Connection>* out) override;

 private:
  Handshake expectedHello() const {
    Handshake h = Handshake::local(ChannelKind::kData, context_.token);
    h.fromRank = context_.rank;
    h.toRank = context_.rank;
    h.worldSize = context_.size;
    h.fromDevice = context_.self.device;
    return h;
  }
  template <typename Done>
  bool drive(Done&& done, Deadline deadline);
  Status dial(int peer, const ListenBlob& blob, int sockets, std::vector<int>* fds);
  Status await(int peer, const ListenBlob& blob, int sockets, std::vector<int>* fds);

  const TransportContext context_;
  const TcpOptions options_;
  asio::io_context io_;  // declared before everything that uses it
  Acceptor acceptor_;
  ListenBlob mine_;
  std::shared_ptr<ReconnectHub> hub_;  // with HCCL_OP_RETRY_ENABLE
};

Status TcpTransport::setup(Bytes* blob) {
  if (mine_.port == 0) {
    NetInterface nif;
    COHORT_RETURN_IF_ERROR(selectInterface(&nif));
    mine_.address = nif.address;
    mine_.sockets = options_.socketsPerPeer;
    mine_.chunkBytes = options_.chunkBytes;
    COHORT_RETURN_IF_ERROR(acceptor_.listen(nif.address, &mine_.port));
    if (RetryPolicy::anyEnabled(context_.retry)) {
      Handshake expected = expectedHello();
      expected.kind = ChannelKind::kReconnect;
      hub_ = std::make_shared<ReconnectHub>(options_, expected);
      COHORT_RETURN_IF_ERROR(hub_->listen(nif.address, &mine_.hubPort));
    }
    COHORT_LOG(kInfo, "transport", "rank {}: tcp listening on {} ({}), {} socket(s) per peer",
               context_.rank, hostPort(mine_.address, mine_.port), nif.name, mine_.sockets);
  }
  *blob = mine_.encode();
  return Status::Ok();
}

// Runs the io_context (which also serves our listener, so two ranks dialing
// each other's neighbours never wait on each other in a cycle) until done().
template <typename Done>
bool TcpTransport::drive(Done&& done, Deadline deadline) {
  io_.restart();
  while (!done()) {
    if (deadline.expired()) return false;
    const auto slice = Clock::now() + std::chrono::milliseconds(100);
    const auto until = deadline.isNever() ? slice : std::min(slice, deadline.at());
    if (io_.run_one_until(until) == 0 && io_.stopped()) {
      io_.restart();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return true;
}

Status TcpTransport::dial(int peer, const ListenBlob& blob, int sockets, std::vector<int>* fds) {
  const std::string where =
      fmt::format("rank {} ({}) -> rank {} ({})", context_.rank,
                  hostPort(mine_.address, mine_.port), peer, hostPort(blob.address, blob.port));
  boost::system::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(blob.address, ec);
  if (ec) return makeError(ErrorCode::kInvalidArgument, "{}: bad address: {}", where, ec.message());
  Handshake hello = expectedHello();
  hello.toRank = peer;
  Dialer dialer(io_, options_, hello, asio::ip::tcp::endpoint(ip, blob.port), sockets, where);
  const auto start = Clock::now();
  dialer.start();
  if (!drive([&] { return dialer.finished(); }, context_.connectDeadline)) {
    return dialer.expired(secondsSince(start));
  }
  COHORT_RETURN_IF_ERROR(dialer.error());
  *fds = dialer.take();
  return Status::Ok();
}

Status TcpTransport::await(int peer, const ListenBlob& blob, int sockets, std::vector<int>* fds) {
  const auto start = Clock::now();
  const auto ready = [&] { return acceptor_.readyCount(peer, sockets) == sockets; };
  if (!drive(ready, context_.connectDeadline)) {
    std::string refused;
    for (const auto& r : acceptor_.refusals()) refused += "; refused " + r;
    return makeError(ErrorCode::kTimeout,
                     "rank {} ({}) <- rank {} ({}): timed out after {:.1f} s waiting for the "
                     "peer to connect ({} of {} sockets arrived){}",
                     context_.rank, hostPort(mine_.address, mine_.port), peer,
                     hostPort(blob.address, blob.port), secondsSince(start),
                     acceptor_.readyCount(peer, sockets), sockets, refused);
  }
  *fds = acceptor_.take(peer, sockets);
  return Status::Ok();
}

Status TcpTransport::connect(const PeerInfo& peer, const Bytes& peerBlob,
                             std::unique_ptr<Connection>* out) {
  ListenBlob theirs;
  if (!ListenBlob::decode(peerBlob, &theirs)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "rank {}: the tcp blob of rank {} is malformed "
                     "('{}')",
                     context_.rank, peer.rank, std::string(peerBlob.begin(), peerBlob.end()));
  }
  if (mine_.port == 0 || peer.rank == context_.rank || peer.rank < 0 ||
      peer.rank >= context_.size) {
    return makeError(ErrorCode::kInvalidUsage, "rank {}: tcp connect to rank {} (of {}) {}",
                     context_.rank, peer.rank, context_.size,
                     mine_.port == 0 ? "before setup()" : "is not a valid peer");
  }
  std::vector<int> fds;
  const bool dialing = context_.rank < peer.rank;
  const RetryPolicy policy = RetryPolicy::forLink(peer.sameNode(context_.self), context_.retry);
  if (policy.enabled && (hub_ == nullptr || theirs.hubPort == 0)) {
    return RetryPolicy::disagreement(context_.rank, peer.rank);
  }
  // A retried link has one more socket, for the reader's acks (tcp_retry.h).
  const int sockets = (dialing ? options_.socketsPerPeer : theirs.sockets) + (policy.enabled ? 1 : 0);
  COHORT_RETURN_IF_ERROR(dialing ? dial(peer.rank, theirs, sockets, &fds)
                                 : await(peer.rank, theirs, sockets, &fds));
  const LinkEnds ends{context_.rank, hostPort(mine_.address, mine_.port), peer.rank,
                      hostPort(theirs.address, theirs.port)};
  std::unique_ptr<Resilience> resilience;
  if (policy.enabled) {
    resilience = std::make_unique<Resilience>();
    resilience->policy = policy;
    resilience->hub = hub_;
    resilience->dials = dialing;
    boost::system::error_code ec;
    resilience->peerHub =
        asio::ip::tcp::endpoint(asio::ip::make_address(theirs.address, ec), theirs.hubPort);
    resilience->hello = expectedHello();
    resilience->hello.kind = ChannelKind::kReconnect;
    resilience->hello.toRank = peer.rank;
    resilience->options = options_;
    resilience->operations = context_.operations;
  }
  *out = std::make_unique<TcpConnection>(ends, std::move(fds),
                                         dialing ? options_.chunkBytes : theirs.chunkBytes,
                                         std::move(resilience));
  return Status::Ok();
}

}  // namespace

}  // namespace tcp

std::unique_ptr<Transport> makeTcpTransport(const TransportContext& context) {
  return makeTcpTransport(context, tcp::TcpOptions::fromConfig());
}

std::unique_ptr<Transport> makeTcpTransport(const TransportContext& context,
                                            const tcp::TcpOptions& options) {
  return std::make_unique<tcp::TcpTransport>(context, options);
}

}  // namespace cohort::transport
