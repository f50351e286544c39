#include "transport/tcp/tcp_acceptor.h"

#include <array>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/tcp/socket_util.h"

namespace cohort::transport::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {
// A silent or slow client is dropped after this long (or the connect timeout).
std::chrono::seconds handshakeTimeout() {
  return std::chrono::seconds(std::max(1, std::min(10, Config::global().connectTimeoutS)));
}
}  // namespace

struct Acceptor::Pending {
  explicit Pending(asio::io_context& io) : socket(io), timer(io) {}
  tcp::socket socket;
  asio::steady_timer timer;
  std::array<std::uint8_t, Handshake::kWireSize> in{};
  std::array<std::uint8_t, Handshake::kWireSize> out{};
  std::string from;
  Handshake hello;
};

Acceptor::Acceptor(asio::io_context& io, const TcpOptions& options, const Handshake& expected)
    : io_(io), options_(options), expected_(expected), acceptor_(io), retry_(io) {}

Acceptor::~Acceptor() {
  error_code ignored;
  acceptor_.close(ignored);
}

Status Acceptor::listen(const std::string& address, int* port) {
  error_code ec;
  const asio::ip::address ip = asio::ip::make_address(address, ec);
  if (ec) {
    return makeError(ErrorCode::kInvalidArgument, "tcp transport: bad listen address '{}': {}",
                     address, ec.message());
  }
  const tcp::endpoint endpoint(ip, 0);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) setBufferSizes(acceptor_, options_);  // accepted sockets inherit them
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return makeError(ErrorCode::kUnavailable, "rank {}: cannot listen on {}: {}", expected_.toRank,
                     hostPort(address, 0), ec.message());
  }
  *port = acceptor_.local_endpoint().port();
  acceptNext();
  return Status::Ok();
}

void Acceptor::acceptNext() {
  auto p = std::make_shared<Pending>(io_);
  acceptor_.async_accept(p->socket, [this, p](const error_code& ec) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      readHandshake(p);
      return acceptNext();
    }
    // Out of descriptors or memory: retry later instead of spinning.
    COHORT_LOG(kWarn, "transport", "rank {}: accept failed: {}", expected_.toRank, ec.message());
    retry_.expires_after(std::chrono::milliseconds(100));
    retry_.async_wait([this](const error_code& e) {
      if (!e) acceptNext();
    });
  });
}

void Acceptor::readHandshake(const std::shared_ptr<Pending>& p) {
  error_code ec;
  p->from = endpointText(p->socket.remote_endpoint(ec));
  p->timer.expires_after(handshakeTimeout());
  p->timer.async_wait([p](const error_code& e) {
    error_code ignored;
    if (!e) p->socket.close(ignored);
  });
  asio::async_read(p->socket, asio::buffer(p->in), [this, p](const error_code& e, std::size_t) {
    p->timer.cancel();
    if (e) {
      refuse(e == asio::error::operation_aborted
                 ? fmt::format("{}: no handshake within {} s", p->from, handshakeTimeout().count())
                 : fmt::format("{}: closed before its handshake ({})", p->from, e.message()));
      return;
    }
    Status s = Handshake::decode(p->in.data(), &p->hello);
    const std::string why =
        s.ok() ? refuseReason(p->hello, p->from) : fmt::format("{}: {}", p->from, s.message());
    if (!why.empty()) {
      refuse(why);
      error_code ignored;
      p->socket.close(ignored);
      return;
    }
    answer(p);
  });
}

void Acceptor::answer(const std::shared_ptr<Pending>& p) {
  Handshake ack = expected_;
  ack.fromRank = expected_.toRank;
  ack.toRank = p->hello.fromRank;
  ack.channel = p->hello.channel;
  ack.encode(p->out.data());
  asio::async_write(p->socket, asio::buffer(p->out), [this, p](const error_code& e, std::size_t) {
    if (e) {
      refuse(fmt::format("{} (rank {}) went away during the handshake ({})", p->from,
                         p->hello.fromRank, e.message()));
      return;
    }
    tuneConnected(p->socket, options_);
    ready_[p->hello.fromRank].emplace(p->hello.channel, std::move(p->socket));
  });
}

std::string Acceptor::refuseReason(const Handshake& h, const std::string& from) {
  Status s = h.verify(expected_, from);
  if (!s.ok()) return s.message();
  if (h.fromRank < 0 || h.fromRank >= expected_.toRank) {
    return fmt::format(
        "handshake from {}: rank {} may not dial rank {} (the lower rank of a "
        "pair dials)",
        from, h.fromRank, expected_.toRank);
  }
  if (h.channel >= static_cast<std::uint64_t>(kMaxSocketsPerPeer)) {
    return fmt::format("handshake from {} (rank {}): socket {} of at most {}", from, h.fromRank,
                       h.channel, kMaxSocketsPerPeer);
  }
  const auto peer = ready_.find(h.fromRank);
  if (peer != ready_.end() && peer->second.count(h.channel) != 0) {
    return fmt::format("handshake from {} (rank {}): socket {} is already connected", from,
                       h.fromRank, h.channel);
  }
  return "";
}

void Acceptor::refuse(const std::string& reason) {
  COHORT_LOG(kWarn, "transport", "rank {}: refused a data connection: {}", expected_.toRank,
             reason);
  refusals_.push_back(reason);
}

int Acceptor::readyCount(int peer, int channels) const {
  const auto it = ready_.find(peer);
  if (it == ready_.end()) return 0;
  int n = 0;
  for (const auto& entry : it->second) n += entry.first < static_cast<std::uint64_t>(channels);
  return n;
}

std::vector<int> Acceptor::take(int peer, int channels) {
  std::vector<int> fds;
  auto& sockets = ready_[peer];
  for (int c = 0; c < channels; ++c) {
    fds.push_back(sockets.at(static_cast<std::uint64_t>(c)).release());
    sockets.erase(static_cast<std::uint64_t>(c));
  }
  return fds;
}

}  // namespace cohort::transport::tcp
