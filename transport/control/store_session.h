// One client connection of the store server: reads the handshake under a
// timer, then request frames (a frame whose first byte has arrived must be
// complete within the timeout; an idle client may wait forever between
// frames), answers them in order of completion, and refuses anything that
// breaks the protocol with a logged reason naming the peer.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "transport/control/pending_waits.h"
#include "transport/control/store_protocol.h"
#include "transport/handshake.h"
#include "transport/store.h"

namespace cohort::transport::control {

/// What the sessions of one server share. Used from the server's I/O thread
/// only, except `refused`, which any thread may read.
struct ServerState {
  ServerState(boost::asio::io_context& io, JobToken token, std::size_t maxValueBytes,
              std::chrono::seconds timeout)
      : waits(io, store), token(token), maxValueBytes(maxValueBytes), timeout(timeout) {}

  MemoryStore store;
  PendingWaits waits;
  const JobToken token;
  const std::size_t maxValueBytes;
  const std::chrono::seconds timeout;  // handshake and frame completion
  std::atomic<int> refused{0};
  std::function<void(std::uint64_t)> onClosed;  // the server forgets the session
};

/// Owned by shared_ptr (the server's table and its own pending handlers); lives
/// until closed and its last handler has run. I/O thread only.
class StoreSession : public std::enable_shared_from_this<StoreSession> {
 public:
  StoreSession(ServerState& state, boost::asio::ip::tcp::socket socket, std::uint64_t id,
               std::string peer);
  /// Reads the handshake, then serves requests.
  void start();
  /// Refuses the connection before reading anything (e.g. not whitelisted).
  void refuse(ErrorCode code, const std::string& reason);
  /// Closes the socket and drops pending waits; idempotent.
  void close();

 private:
  enum class Phase { kHandshake, kIdle, kFrame, kClosing, kClosed };

  void armTimer();
  void onTimeout();
  void onHandshake(const boost::system::error_code& ec, std::size_t n);
  void readFrame();
  void onHeader(const boost::system::error_code& ec, std::size_t n);
  void onBody(const boost::system::error_code& ec, std::size_t n);
  void onReadError(const boost::system::error_code& ec, std::size_t n, std::size_t expected);
  void handle(Request request);
  void answerWait(const Request& request, const Status& status);
  void reply(Op op, std::uint64_t seq, const Status& status, std::int64_t arg, const Bytes& value);
  /// Logs, counts, sends `farewell` and closes once it is written (or 1 s later).
  void reject(const std::string& reason, Bytes farewell);
  void send(Bytes bytes);
  void flush();

  ServerState& state_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer timer_;
  const std::uint64_t id_;
  const std::string peer_;
  Phase phase_ = Phase::kHandshake;
  int rank_ = -1;
  std::uint8_t handshake_[Handshake::kWireSize] = {};
  std::uint8_t header_[kFrameHeaderSize] = {};
  FrameHeader frame_;
  Bytes body_;
  std::deque<Bytes> outbox_;
  bool writing_ = false;
};

}  // namespace cohort::transport::control
