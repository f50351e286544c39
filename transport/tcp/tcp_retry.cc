#include "transport/tcp/tcp_retry.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wait.h"
#include "transport/little_endian.h"
#include "transport/tcp/socket_util.h"
#include "transport/tcp/tcp_dialer.h"

namespace cohort::transport::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {
// A dialer that connected but sent no handshake is dropped after this long.
constexpr auto kHelloLimit = std::chrono::seconds(2);
}  // namespace

RetryPolicy RetryPolicy::forLink(bool sameNode,
                                 const std::optional<TransportContext::Retry>& own) {
  const TransportContext::Retry r =
      own ? *own : TransportContext::Retry::from(Config::global(), Config::global());
  RetryPolicy p;
  p.enabled = sameNode ? r.l0 : r.l1;
  p.maxCnt = r.maxCnt;
  p.hold = std::chrono::milliseconds(r.holdMs);
  p.interval = std::chrono::milliseconds(r.intervalMs);
  return p;
}

bool RetryPolicy::anyEnabled(const std::optional<TransportContext::Retry>& own) {
  const TransportContext::Retry r =
      own ? *own : TransportContext::Retry::from(Config::global(), Config::global());
  return r.l0 || r.l1;
}

Clock::time_point RetryPolicy::nextAttempt(Clock::time_point now) const {
  return now + std::max(interval, std::chrono::milliseconds(50));
}

std::chrono::milliseconds RetryPolicy::attemptLimit(Clock::duration held) const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(hold - held);
  return std::max(std::chrono::milliseconds(1), std::min(left, std::chrono::milliseconds(1000)));
}

Status RetryPolicy::disagreement(int rank, int peer) {
  return makeError(ErrorCode::kInvalidUsage,
                   "rank {} and rank {} disagree on retrying their link: set "
                   "HCCL_OP_RETRY_ENABLE (or the communicator's hcclRetryEnable) alike on "
                   "every rank",
                   rank, peer);
}

std::vector<std::uint8_t> ProbeAnswer::encode() const {
  std::vector<std::uint8_t> out;
  appendLe(out, kMagic, 4);
  appendLe(out, idle ? 1 : 0, 4);
  appendLe(out, reads.size(), 4);
  for (std::uint64_t r : reads) appendLe(out, r, 8);
  return out;
}

Status ProbeAnswer::read(int fd, std::chrono::milliseconds limit, ProbeAnswer* out) {
  const auto until = Clock::now() + limit;
  std::vector<std::uint8_t> in;
  std::size_t want = 12;
  auto get = [&](std::size_t at, int bytes) { return loadLe(in.data() + at, bytes); };
  while (in.size() < want) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      return Status(ErrorCode::kTimeout, "no answer to the probe");
    }
    std::uint8_t buf[1024];
    const ssize_t k = ::recv(fd, buf, std::min(sizeof(buf), want - in.size()), MSG_DONTWAIT);
    if (k == 0) return Status(ErrorCode::kConnectionError, "the probe's answer ended early");
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return Status(ErrorCode::kConnectionError, std::strerror(errno));
    }
    in.insert(in.end(), buf, buf + k);
    if (in.size() == 12) {
      if (get(0, 4) != kMagic || get(8, 4) > kMaxSocketsPerPeer) {
        return Status(ErrorCode::kConnectionError, "a corrupt answer to the probe");
      }
      want = 12 + 8 * get(8, 4);
    }
  }
  out->idle = get(4, 4) == 1;
  out->reads.clear();
  for (std::size_t i = 12; i < in.size(); i += 8) out->reads.push_back(get(i, 8));
  return Status::Ok();
}

struct ReconnectHub::Pending {
  explicit Pending(asio::io_context& io) : socket(io), timer(io) {}
  tcp::socket socket;
  asio::steady_timer timer;
  std::array<std::uint8_t, Handshake::kWireSize> in{};
  std::vector<std::uint8_t> out;
  Handshake hello;
};

ReconnectHub::ReconnectHub(const TcpOptions& options, const Handshake& expected)
    : options_(options), expected_(expected), acceptor_(io_) {}

ReconnectHub::~ReconnectHub() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
  error_code ignored;
  acceptor_.close(ignored);
}

Status ReconnectHub::listen(const std::string& address, int* port) {
  error_code ec;
  const asio::ip::address ip = asio::ip::make_address(address, ec);
  if (ec) {
    return makeError(ErrorCode::kInvalidArgument, "tcp reconnect listener: bad address '{}': {}",
                     address, ec.message());
  }
  const tcp::endpoint endpoint(ip, 0);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) setBufferSizes(acceptor_, options_);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return makeError(ErrorCode::kUnavailable, "rank {}: cannot listen for reconnections on {}: {}",
                     expected_.toRank, hostPort(address, 0), ec.message());
  }
  *port = acceptor_.local_endpoint().port();
  acceptNext();
  thread_ = std::thread([this] {
    auto guard = asio::make_work_guard(io_);
    io_.run();
  });
  return Status::Ok();
}

void ReconnectHub::acceptNext() {
  auto p = std::make_shared<Pending>(io_);
  acceptor_.async_accept(p->socket, [this, p](const error_code& ec) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {  // out of descriptors: the dialer retries
      COHORT_LOG(kWarn, "transport", "rank {}: accepting a reconnection failed: {}",
                 expected_.toRank, ec.message());
    } else {
      p->timer.expires_after(kHelloLimit);
      p->timer.async_wait([p](const error_code& e) {
        error_code ignored;
        if (!e) p->socket.close(ignored);
      });
      asio::async_read(p->socket, asio::buffer(p->in), [this, p](const error_code& e, std::size_t) {
        p->timer.cancel();
        if (!e) onHello(p);
      });
    }
    acceptNext();
  });
}

void ReconnectHub::onHello(const std::shared_ptr<Pending>& p) {
  error_code ignored;
  Status s = Handshake::decode(p->in.data(), &p->hello);
  if (s.ok()) s = p->hello.verify(expected_, endpointText(p->socket.remote_endpoint(ignored)));
  const Handshake& h = p->hello;
  const bool probe = h.channel == kProbeChannel;
  if (s.ok() && (h.fromRank < 0 || h.fromRank >= expected_.worldSize || h.fromRank == expected_.toRank ||
                 (!probe && (h.fromRank > expected_.toRank || (h.channel & 0xff) >= kMaxSocketsPerPeer)))) {
    s = makeError(ErrorCode::kConnectionError, "rank {} may not reconnect socket {}", h.fromRank,
                  h.channel & 0xff);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (s.ok() && failed_.count(h.fromRank) != 0) {
      s = makeError(ErrorCode::kConnectionError, "the link to rank {} failed here", h.fromRank);
    }
  }
  if (!s.ok()) {
    COHORT_LOG(kInfo, "transport", "rank {}: refused a reconnection: {}", expected_.toRank,
               s.message());
    p->socket.close(ignored);
    return;
  }
  Handshake ack = expected_;
  ack.fromRank = expected_.toRank;
  ack.toRank = h.fromRank;
  ack.channel = h.channel;
  p->out.resize(Handshake::kWireSize);
  ack.encode(p->out.data());
  if (probe) {
    ProbeAnswer answer;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto end = ends_.find(h.fromRank);
      answer.idle = end != ends_.end() && end->second(&answer.reads);
    }
    const auto more = answer.encode();
    p->out.insert(p->out.end(), more.begin(), more.end());
  }
  asio::async_write(p->socket, asio::buffer(p->out), [this, p, probe](const error_code& e, std::size_t) {
    if (e || probe) {
      error_code ignored;
      p->socket.close(ignored);
      return;
    }
    tuneConnected(p->socket, options_);
    const auto generation = static_cast<std::uint32_t>(p->hello.channel >> 8);
    const int index = static_cast<int>(p->hello.channel & 0xff);
    std::lock_guard<std::mutex> lock(mu_);
    auto& byGeneration = ready_[p->hello.fromRank];
    // An older generation's sockets will never be completed: the dialer moved on.
    while (!byGeneration.empty() && byGeneration.begin()->first < generation) {
      byGeneration.erase(byGeneration.begin());
    }
    byGeneration[generation].erase(index);
    byGeneration[generation].emplace(index, std::move(p->socket));
    arrivals_.fetch_add(1, std::memory_order_release);
  });
}

bool ReconnectHub::take(int peer, int sockets, std::uint32_t after, std::uint32_t* generation,
                        std::vector<int>* fds) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = ready_.find(peer);
  if (it == ready_.end()) return false;
  for (auto g = it->second.rbegin(); g != it->second.rend(); ++g) {
    if (g->first <= after) break;
    bool complete = true;
    for (int i = 0; i < sockets; ++i) complete = complete && g->second.count(i) != 0;
    if (!complete) continue;
    fds->clear();
    for (int i = 0; i < sockets; ++i) fds->push_back(g->second.at(i).release());
    *generation = g->first;
    it->second.erase(it->second.begin(), std::next(g).base());
    return true;
  }
  return false;
}

void ReconnectHub::attach(int peer, IdleReads idleReads) {
  std::lock_guard<std::mutex> lock(mu_);
  ends_[peer] = std::move(idleReads);
}

void ReconnectHub::detach(int peer) {
  std::lock_guard<std::mutex> lock(mu_);
  ends_.erase(peer);
}

void ReconnectHub::markFailed(int peer) {
  std::lock_guard<std::mutex> lock(mu_);
  failed_.insert(peer);
  ready_.erase(peer);
}

Status dialHub(const TcpOptions& options, const Handshake& hello, const tcp::endpoint& hub,
               int sockets, std::uint64_t channelBase, std::chrono::milliseconds limit,
               const std::string& where, HubRefusal* refusal, std::vector<int>* fds) {
  asio::io_context io;
  Dialer dialer(io, options, hello, hub, sockets, where, channelBase);
  const auto start = Clock::now();
  const auto until = start + limit;
  dialer.start();
  while (!dialer.finished() && Clock::now() < until) {
    io.run_one_until(until);
    // A refused connect means nothing listens: retrying it would only wait.
    if (dialer.refused()) break;
  }
  *refusal = !dialer.finished() && dialer.refused() ? HubRefusal::kNothingListens
             : dialer.finished() && dialer.turnedAway() ? HubRefusal::kLinkFailedThere
                                                        : HubRefusal::kNone;
  if (!dialer.finished()) {
    return dialer.expired(std::chrono::duration<double>(Clock::now() - start).count());
  }
  COHORT_RETURN_IF_ERROR(dialer.error());
  *fds = dialer.take();
  return Status::Ok();
}

}  // namespace cohort::transport::tcp
