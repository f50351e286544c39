// A Connection over one or more TCP sockets to one peer. Every message is a
// 24-byte header on socket 0 (sequence number, byte count) and a payload cut into
// chunks spread over the sockets (tcp_frame.h). The receiver checks each header
// against the posted receive; a mismatch fails both ends (an error frame tells
// the peer). Everything moves in progress() on the caller's thread. With a
// retry policy (tcp_retry.h) a broken link is re-established instead of failing.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/connection.h"
#include "transport/tcp/socket_stream.h"
#include "transport/tcp/tcp_frame.h"
#include "transport/tcp/tcp_retry.h"

namespace cohort::transport::tcp {

/// Who is at each end of a link (for describe() and error messages).
struct LinkEnds {
  int selfRank = -1;
  std::string selfAddress;  // "10.0.0.1:60001"
  int peerRank = -1;
  std::string peerAddress;
};

/// How a connection re-establishes its link (HCCL_OP_RETRY_ENABLE).
struct Resilience {
  RetryPolicy policy;
  std::shared_ptr<ReconnectHub> hub;  // this rank's, where the peer dials in
  bool dials = false;                 // this rank is the lower: it dials the peer's hub
  boost::asio::ip::tcp::endpoint peerHub;
  Handshake hello;  // kReconnect, fromRank = this rank, toRank = the peer
  TcpOptions options;
  /// Operations the communicator started (MaxCnt counts breaks per operation);
  /// outlives the connection. Null: all of its life is one operation.
  const std::atomic<std::uint64_t>* operations = nullptr;
};

/// Owns its sockets. Not thread-safe: one thread posts and progresses. Lifetime:
/// independent of the transport that made it; destruction closes the sockets,
/// which the peer sees as an error at its next progress().
class TcpConnection : public Connection {
 public:
  /// `fds`: connected sockets in channel order (taken over, made non-blocking);
  /// with `resilience`, the last one carries the reader's acks, not data.
  TcpConnection(const LinkEnds& ends, std::vector<int> fds, std::size_t chunkBytes,
                std::unique_ptr<Resilience> resilience = nullptr);
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
  /// The descriptor socket `i` uses now (tests break links through it).
  int socketFd(int i) const { return streams_[static_cast<std::size_t>(i)]->fd(); }
  /// The ack socket's descriptor (retry mode), else -1.
  int ackSocketFd() const { return ackFd_; }
  /// Bytes read from the peer so far, over every socket (retry mode keeps counting
  /// across reconnections).
  std::uint64_t bytesRead() const {
    std::uint64_t n = 0;
    for (const auto& s : streams_) n += s->readTotal();
    return n;
  }
  /// Retry mode's state in words (for hang reports and tests).
  std::string retryState() const;
  /// How many times the link was re-established (retry mode).
  std::uint32_t reconnections() const { return reconnections_; }

 private:
  struct SendOp {
    std::uint8_t header[FrameHeader::kWireSize];
    std::size_t remaining;  // header + payload bytes not yet written
    std::vector<std::uint64_t> ends;  // retry mode: each stream's queued total at its end
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
  void watchSockets();
  /// Retry mode: the peer read all of `op` (its bytes may be reused).
  bool delivered(const SendOp& op) const;
  /// Retry mode: this end's lock (the hub reads an idle connection's state).
  std::unique_lock<std::mutex> guard();
  /// The hub's question (another thread): if this end is idle, what it has
  /// read of each stream. False when it is busy (its owner answers itself).
  bool idleReads(std::vector<std::uint64_t>* reads);
  // Retry mode (tcp_retry.h).
  enum class Link { kUp, kBroken, kResuming };
  /// Takes the peer's new sockets, re-establishes a broken link, reads the
  /// peer's resume record and acks: not ok when the link is lost for good.
  Status keepLinkUp();
  Status onBreak(const Status& cause);
  Status tryReestablish();
  void adopt(std::vector<int> fds, std::uint32_t generation);
  /// Reads the ack socket into ackIn_; false at a break (handled).
  Status readAckSocket();
  Status applyRecords();
  void sendAck();
  void tuneRetrySocket(int fd) const;
  bool anyBroken() const;

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

  std::unique_ptr<Resilience> retry_;
  std::mutex mu_;  // retry mode only: the owner's calls against the hub's questions
  Link link_ = Link::kUp;
  int ackFd_ = -1;
  std::uint32_t ackInterest_ = 0;  // epoll events registered for ackFd_
  std::uint32_t generation_ = 0;      // of the sockets in use
  std::uint32_t dialGeneration_ = 0;  // of the last dial attempt (the lower rank's)
  std::uint32_t reconnections_ = 0;
  Clock::time_point brokenAt_{}, nextTry_{};
  Status breakCause_;
  std::string lastTry_;  // why the last attempt to re-establish failed
  int tries_ = 0;
  std::uint64_t opAtBreak_ = ~std::uint64_t{0};
  int breaksInOp_ = 0;
  std::uint64_t hubSeen_ = 0;
  std::vector<std::uint8_t> ackIn_;   // read from the ack socket, not yet parsed
  std::vector<std::uint8_t> ackOut_;  // a record not yet fully written
  std::size_t ackOutSent_ = 0;
  std::vector<std::uint64_t> ackedReads_;  // what the last record sent said
};

}  // namespace cohort::transport::tcp
