#include "transport/tcp/tcp_dialer.h"

#include <algorithm>
#include <array>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>

#include "common/error.h"
#include "transport/tcp/socket_util.h"

namespace cohort::transport::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

struct Dialer::State {
  struct Channel {
    explicit Channel(asio::io_context& io) : socket(io), retry(io) {}
    tcp::socket socket;
    asio::steady_timer retry;
    std::array<std::uint8_t, Handshake::kWireSize> out{};
    std::array<std::uint8_t, Handshake::kWireSize> in{};
    int attempts = 0;
    error_code lastError;
    bool connected = false;
    bool ready = false;
  };

  State(asio::io_context& io, const TcpOptions& o, const Handshake& h, tcp::endpoint t,
        std::string w, std::uint64_t base)
      : io(io), options(o), hello(h), target(std::move(t)), where(std::move(w)), channelBase(base) {}

  asio::io_context& io;
  const TcpOptions options;
  const Handshake hello;
  const tcp::endpoint target;
  const std::string where;
  const std::uint64_t channelBase;
  bool turnedAway = false;
  std::vector<std::unique_ptr<Channel>> channels;
  Status failure;
  bool abandoned = false;
};

namespace {

using State = std::shared_ptr<Dialer::State>;

void connectOnce(const State& st, std::size_t i);

// Refused connects are retried: the peer's listener may not be up yet.
void retryLater(const State& st, std::size_t i, const error_code& ec) {
  auto& ch = *st->channels[i];
  ch.lastError = ec;
  ++ch.attempts;
  const int ms = std::min(200, 10 << std::min(ch.attempts, 5));
  ch.retry.expires_after(std::chrono::milliseconds(ms));
  ch.retry.async_wait([st, i](const error_code& e) {
    if (!e && !st->abandoned) connectOnce(st, i);
  });
}

void fail(const State& st, Status s) {
  if (st->failure.ok()) st->failure = std::move(s);
}

void checkAnswer(const State& st, std::size_t i) {
  auto& ch = *st->channels[i];
  Handshake ack;
  Status s = Handshake::decode(ch.in.data(), &ack);
  Handshake expected = Handshake::local(st->hello.kind, st->hello.token);
  expected.toRank = st->hello.fromRank;
  expected.worldSize = st->hello.worldSize;
  if (s.ok()) s = ack.verify(expected, st->where);
  if (s.ok() && (ack.fromRank != st->hello.toRank || ack.channel != st->channelBase + i)) {
    s = makeError(ErrorCode::kConnectionError,
                  "answered as rank {} socket {}, expected rank {} "
                  "socket {}",
                  ack.fromRank, ack.channel, st->hello.toRank, st->channelBase + i);
  }
  if (!s.ok()) return fail(st, makeError(s.code(), "{}: {}", st->where, s.message()));
  ch.ready = true;
}

void handshake(const State& st, std::size_t i) {
  auto& ch = *st->channels[i];
  Handshake hello = st->hello;
  hello.channel = st->channelBase + i;
  hello.encode(ch.out.data());
  asio::async_write(ch.socket, asio::buffer(ch.out), [st, i](const error_code& e, std::size_t) {
    if (st->abandoned) return;
    if (e)
      return fail(st, makeError(ErrorCode::kConnectionError,
                                "{}: sending the handshake "
                                "failed: {}",
                                st->where, e.message()));
    auto& c = *st->channels[i];
    asio::async_read(c.socket, asio::buffer(c.in), [st, i](const error_code& e2, std::size_t) {
      if (st->abandoned) return;
      if (!e2) return checkAnswer(st, i);
      st->turnedAway = true;
      fail(st, makeError(ErrorCode::kConnectionError,
                         "{}: the peer closed the connection during the handshake ({}): it "
                         "refused this rank (token mismatch, wrong rank or world size; see the "
                         "peer's log)",
                         st->where, e2.message()));
    });
  });
}

void connectOnce(const State& st, std::size_t i) {
  auto& ch = *st->channels[i];
  error_code ec;
  ch.socket.close(ec);
  ch.socket.open(st->target.protocol(), ec);
  if (ec)
    return fail(st, makeError(ErrorCode::kSystemError, "{}: socket: {}", st->where, ec.message()));
  setBufferSizes(ch.socket, st->options);
  ch.socket.async_connect(st->target, [st, i](const error_code& e) {
    if (st->abandoned) return;
    if (e) return retryLater(st, i, e);
    auto& c = *st->channels[i];
    c.connected = true;
    tuneConnected(c.socket, st->options);
    handshake(st, i);
  });
}

}  // namespace

Dialer::Dialer(asio::io_context& io, const TcpOptions& options, const Handshake& hello,
               const tcp::endpoint& target, int channels, std::string where,
               std::uint64_t channelBase)
    : state_(std::make_shared<State>(io, options, hello, target, std::move(where), channelBase)) {
  for (int i = 0; i < channels; ++i)
    state_->channels.push_back(std::make_unique<State::Channel>(io));
}

Dialer::~Dialer() {
  state_->abandoned = true;
  for (auto& ch : state_->channels) {
    error_code ignored;
    ch->retry.cancel();
    if (ch->socket.is_open()) ch->socket.close(ignored);
  }
}

void Dialer::start() {
  for (std::size_t i = 0; i < state_->channels.size(); ++i) connectOnce(state_, i);
}

bool Dialer::finished() const {
  if (!state_->failure.ok()) return true;
  return std::all_of(state_->channels.begin(), state_->channels.end(),
                     [](const auto& ch) { return ch->ready; });
}

Status Dialer::error() const { return state_->failure; }

Status Dialer::expired(double seconds) const {
  int connected = 0, refused = 0;
  error_code last;
  for (const auto& ch : state_->channels) {
    connected += ch->connected;
    refused += !ch->connected && ch->lastError == asio::error::connection_refused;
    if (!ch->connected && ch->lastError) last = ch->lastError;
  }
  const int n = static_cast<int>(state_->channels.size());
  if (refused > 0 && refused == n - connected) {
    return makeError(ErrorCode::kConnectionError,
                     "{}: connection refused (retried for {:.1f} s; "
                     "is the peer alive and listening?)",
                     state_->where, seconds);
  }
  if (last && connected == 0) {
    return makeError(ErrorCode::kConnectionError, "{}: connect failed: {} (retried for {:.1f} s)",
                     state_->where, last.message(), seconds);
  }
  return makeError(ErrorCode::kTimeout,
                   "{}: timed out after {:.1f} s ({} of {} sockets "
                   "connected, handshakes unanswered)",
                   state_->where, seconds, connected, n);
}

bool Dialer::turnedAway() const { return state_->turnedAway; }

bool Dialer::refused() const {
  bool any = false;
  for (const auto& ch : state_->channels) {
    if (ch->connected) continue;
    if (ch->lastError != asio::error::connection_refused) return false;
    any = true;
  }
  return any;
}

std::vector<int> Dialer::take() {
  std::vector<int> fds;
  for (auto& ch : state_->channels) fds.push_back(ch->socket.release());
  return fds;
}

}  // namespace cohort::transport::tcp
