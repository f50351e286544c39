#include "transport/control/store_session.h"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "common/error.h"
#include "common/log.h"

namespace cohort::transport::control {

namespace asio = boost::asio;
using boost::system::error_code;

StoreSession::StoreSession(ServerState& state, asio::ip::tcp::socket socket, std::uint64_t id,
                           std::string peer)
    : state_(state),
      socket_(std::move(socket)),
      timer_(socket_.get_executor()),
      id_(id),
      peer_(std::move(peer)) {}

void StoreSession::start() {
  armTimer();
  asio::async_read(socket_, asio::buffer(handshake_),
                   [self = shared_from_this()](const error_code& ec, std::size_t n) {
                     self->onHandshake(ec, n);
                   });
}

void StoreSession::refuse(ErrorCode code, const std::string& reason) {
  reject(reason, encodeServerGreeting(Status(code, reason), state_.maxValueBytes));
}

void StoreSession::armTimer() {
  timer_.expires_after(phase_ == Phase::kClosing ? std::chrono::seconds(1) : state_.timeout);
  timer_.async_wait([self = shared_from_this()](const error_code& ec) {
    if (!ec) self->onTimeout();
  });
}

void StoreSession::onTimeout() {
  if (phase_ == Phase::kHandshake) {
    reject(fmt::format("no handshake within {} s", state_.timeout.count()),
           encodeServerGreeting(
               makeError(ErrorCode::kTimeout, "no handshake within {} s", state_.timeout.count()),
               state_.maxValueBytes));
  } else if (phase_ == Phase::kFrame) {
    reject(fmt::format("a frame was not complete within {} s", state_.timeout.count()), {});
  } else if (phase_ == Phase::kClosing) {
    close();  // the farewell could not be delivered in time
  }
}

void StoreSession::onHandshake(const error_code& ec, std::size_t n) {
  if (phase_ != Phase::kHandshake) return;
  if (ec) return onReadError(ec, n, Handshake::kWireSize);
  timer_.cancel();
  Handshake peer;
  const Status verdict = checkClientHandshake(handshake_, state_.token, peer_, &peer);
  if (!verdict.ok()) {
    reject(verdict.message(), encodeServerGreeting(verdict, state_.maxValueBytes));
    return;
  }
  rank_ = peer.fromRank;
  COHORT_LOG(kInfo, "store", "rank {} connected from {}", rank_, peer_);
  send(encodeServerGreeting(Status::Ok(), state_.maxValueBytes));
  phase_ = Phase::kIdle;
  readFrame();
}

void StoreSession::readFrame() {
  // The first byte may take forever (an idle rank); the rest is under the timer.
  asio::async_read(socket_, asio::buffer(header_, 1),
                   [self = shared_from_this()](const error_code& ec, std::size_t n) {
                     if (self->phase_ != Phase::kIdle) return;
                     if (ec) return self->onReadError(ec, n, 1);
                     self->phase_ = Phase::kFrame;
                     self->armTimer();
                     asio::async_read(
                         self->socket_, asio::buffer(self->header_ + 1, kFrameHeaderSize - 1),
                         [self](const error_code& e, std::size_t m) { self->onHeader(e, m); });
                   });
}

void StoreSession::onHeader(const error_code& ec, std::size_t n) {
  if (phase_ != Phase::kFrame) return;
  if (ec) return onReadError(ec, n + 1, kFrameHeaderSize);
  const Status s = FrameHeader::decode(header_, kRequestMagic, state_.maxValueBytes, &frame_);
  if (!s.ok()) {
    reject(s.message(),
           encodeReply(Op::kHello, 0, s.code(), 0, Bytes(s.message().begin(), s.message().end())));
    return;
  }
  body_.resize(frame_.bodySize());
  asio::async_read(
      socket_, asio::buffer(body_),
      [self = shared_from_this()](const error_code& e, std::size_t m) { self->onBody(e, m); });
}

void StoreSession::onBody(const error_code& ec, std::size_t n) {
  if (phase_ != Phase::kFrame) return;
  if (ec) return onReadError(ec, kFrameHeaderSize + n, kFrameHeaderSize + frame_.bodySize());
  timer_.cancel();
  Request request;
  const Status s = decodeRequest(frame_, body_.data(), &request);
  if (!s.ok()) {
    const std::string text = s.message();
    reject(text, encodeReply(frame_.op, frame_.seq, s.code(), 0, Bytes(text.begin(), text.end())));
    return;
  }
  body_ = Bytes();
  phase_ = Phase::kIdle;
  handle(std::move(request));
  if (phase_ == Phase::kIdle) readFrame();
}

void StoreSession::onReadError(const error_code& ec, std::size_t n, std::size_t expected) {
  if (ec == asio::error::operation_aborted) return;
  const bool clean = phase_ == Phase::kIdle && n == 0;
  if (clean || (ec != asio::error::eof && ec != asio::error::connection_reset)) {
    COHORT_LOG(kInfo, "store", "rank {} at {} disconnected ({})", rank_, peer_, ec.message());
    close();
    return;
  }
  const char* what = phase_ == Phase::kHandshake ? "handshake" : "frame";
  reject(fmt::format("truncated {}: the peer closed after {} of {} bytes", what, n, expected), {});
}

void StoreSession::handle(Request r) {
  switch (r.op) {
    case Op::kSet:
      (void)state_.store.set(r.key, r.value);
      state_.waits.keySet(r.key);
      return reply(r.op, r.seq, Status::Ok(), 0, {});
    case Op::kAdd: {
      std::int64_t value = 0;
      (void)state_.store.add(r.key, r.arg, &value);
      state_.waits.keySet(r.key);
      return reply(r.op, r.seq, Status::Ok(), value, {});
    }
    case Op::kCheck: {
      bool exists = false;
      (void)state_.store.check(r.key, &exists);
      return reply(r.op, r.seq, Status::Ok(), exists ? 1 : 0, {});
    }
    case Op::kGet:
    case Op::kWait: {
      std::weak_ptr<StoreSession> weak = weak_from_this();
      const std::int64_t timeoutMs = r.arg;
      std::vector<std::string> keys = r.keys;
      state_.waits.add(id_, std::move(keys), timeoutMs,
                       [weak, r = std::move(r)](const Status& status) {
                         if (auto self = weak.lock()) self->answerWait(r, status);
                       });
      return;
    }
    case Op::kHello:
      break;
  }
}

void StoreSession::answerWait(const Request& r, const Status& status) {
  Bytes value;
  if (status.ok() && r.op == Op::kGet) {
    (void)state_.store.get(r.key, &value, Deadline::afterMs(0));
  }
  reply(r.op, r.seq, status, 0, value);
}

void StoreSession::reply(Op op, std::uint64_t seq, const Status& status, std::int64_t arg,
                         const Bytes& value) {
  if (phase_ == Phase::kClosing || phase_ == Phase::kClosed) return;
  if (status.ok()) return send(encodeReply(op, seq, ErrorCode::kSuccess, arg, value));
  const std::string& text = status.message();
  send(encodeReply(op, seq, status.code(), arg, Bytes(text.begin(), text.end())));
}

void StoreSession::reject(const std::string& reason, Bytes farewell) {
  if (phase_ == Phase::kClosing || phase_ == Phase::kClosed) return;
  state_.refused.fetch_add(1);
  COHORT_LOG(kWarn, "store", "refused {}{}: {}", peer_,
             rank_ >= 0 ? fmt::format(" (rank {})", rank_) : std::string(), reason);
  state_.waits.dropOwner(id_);
  phase_ = Phase::kClosing;
  if (farewell.empty() && !writing_) return close();
  if (!farewell.empty()) send(std::move(farewell));
  armTimer();  // a peer that does not read must not keep the connection open
}

void StoreSession::send(Bytes bytes) {
  outbox_.push_back(std::move(bytes));
  if (!writing_) flush();
}

void StoreSession::flush() {
  writing_ = true;
  asio::async_write(socket_, asio::buffer(outbox_.front()),
                    [self = shared_from_this()](const error_code& ec, std::size_t) {
                      self->writing_ = false;
                      if (self->phase_ == Phase::kClosed) return;
                      if (ec) {
                        COHORT_LOG(kInfo, "store", "rank {} at {}: write failed ({})", self->rank_,
                                   self->peer_, ec.message());
                        return self->close();
                      }
                      self->outbox_.pop_front();
                      if (!self->outbox_.empty()) return self->flush();
                      if (self->phase_ == Phase::kClosing) self->close();
                    });
}

void StoreSession::close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  timer_.cancel();
  state_.waits.dropOwner(id_);
  // outbox_ stays: an aborted write's buffer must outlive its handler.
  if (state_.onClosed) state_.onClosed(id_);
}

}  // namespace cohort::transport::control
