// A Connection over one or more TCP sockets to one peer. Every message is a
// 24-byte header on socket 0 (sequence number, byte count) and a payload cut into
// chunks spread over the sockets (tcp_frame.h). The receiver checks each header
// against the posted receive; a mismatch fails both ends (an error frame tells
// the peer). Everything moves in progress() on the caller's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/connection.h"
#include "transport/tcp/socket_stream.h"
#include "transport/tcp/tcp_frame.h"

namespace cohort::transport::tcp {

/// Who is at each end of a link (for describe() and error messages).
struct LinkEnds {
  int selfRank = -1;
  std::string selfAddress;  // "10.0.0.1:60001"
  int peerRank = -1;
  std::string peerAddress;
};

/// Owns its sockets. Not thread-safe: one thread posts and progresses. Lifetime:
/// independent of the transport that made it; destruction closes the sockets,
/// which the peer sees as an error at its next progress().
class TcpConnection : public Connection {
 public:
  /// `fds`: connected sockets in channel order (taken over, made non-blocking).
  TcpConnection(const LinkEnds& ends, std::vector<int> fds, std::size_t chunkBytes);
  ~TcpConnection() override;

  int peer() const override { return ends_.peerRank; }
  const char* kind() const override { return "tcp"; }
  std::string describe() const override { return ends_.peerAddress; }
  Status postSend(const void* data, std::size_t bytes) override;
  Status postRecv(void* dst, std::size_t bytes, const Reduction* reduce = nullptr,
                  const void* accumulate = nullptr) override;
  Status progress() override;
  void abort(const Status& why) override;
  std::uint64_t sendsPosted() const override { return sendsPosted_; }
  std::uint64_t sendsCompleted() const override { return sendsCompleted_; }
  std::uint64_t recvsPosted() const override { return recvsPosted_; }
  std::uint64_t recvsCompleted() const override { return recvsCompleted_; }
  /// An epoll descriptor over every socket, readable when a socket can move
  /// what this connection waited for at the last progress() (data in, or room
  /// for a blocked send).
  WaitHint waitHint() override;

  int socketCount() const { return static_cast<int>(streams_.size()); }

 private:
  struct SendOp {
    std::uint8_t header[FrameHeader::kWireSize];
    std::size_t remaining;  // header + payload bytes not yet written
  };
  struct RecvOp {
    std::uint8_t* dst;
    std::size_t bytes;
    Reduction reduce;
    bool hasReduce;
    const std::uint8_t* accumulate;
    std::size_t remaining;  // payload bytes not yet received (and reduced)
  };

  bool nothingToDo();
  Status receiveFrames();
  Status onErrorFrame(const FrameHeader& header);
  Status match(const FrameHeader& header);
  /// Makes `s` this connection's sticky error; with `peerText`, tells the peer.
  Status fail(Status s, const std::string& peerText = "");
  /// Sends the peer an error frame with `text` if socket 0 is between frames,
  /// waiting at most `patience` for room in the socket.
  void tellPeer(ErrorCode code, const std::string& text, std::chrono::milliseconds patience);
  void retire();
  void updateInterest();

  const LinkEnds ends_;
  const std::string where_;  // "rank 0: connection to rank 1 (10.0.0.2:60001)"
  const std::size_t chunkBytes_;
  std::vector<std::unique_ptr<SocketStream>> streams_;
  std::deque<SendOp> sends_;  // posted, not yet retired (stable addresses)
  std::deque<RecvOp> recvs_;
  std::uint64_t sendsPosted_ = 0, sendsCompleted_ = 0;
  std::uint64_t recvsPosted_ = 0, recvsCompleted_ = 0, recvsMatched_ = 0;
  bool havePending_ = false;
  FrameHeader pending_;  // a header that arrived before its receive was posted
  Status error_;
  Status peerGone_;  // socket 0 ended between frames: fatal only to receives still unmatched
  int epollFd_ = -1;
  std::vector<std::uint32_t> interest_;  // epoll events registered per socket
  bool interestValid_ = false;           // interest_ set by a progress() (not only the constructor)
};

}  // namespace cohort::transport::tcp
