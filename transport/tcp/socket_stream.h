// One socket of a TCP data connection: the byte ranges still to write, the byte
// ranges still to read (each straight into its destination, or into a bounce
// buffer and reduced as it fills), and a small staging area that catches what a
// read returns beyond the current range (typically the next frame header).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "transport/connection.h"

namespace cohort::transport::tcp {

/// Owns its socket (closed on destruction). Not thread-safe: the connection's
/// driving thread uses it.
class SocketStream {
 public:
  struct SendPiece {
    const std::uint8_t* data = nullptr;
    std::size_t bytes = 0;
    std::size_t* remaining = nullptr;  // the operation's count, lowered when the piece is written
    bool frameStart = false;           // the first piece of a frame (a header)
  };
  struct RecvPiece {
    std::uint8_t* dst = nullptr;
    std::size_t bytes = 0;
    std::size_t* remaining = nullptr;   // lowered when the piece is complete
    const Reduction* reduce = nullptr;  // with it: dst = accumulate (op) received bytes
    const std::uint8_t* accumulate = nullptr;
    std::size_t filled = 0;
    std::size_t reduced = 0;
  };

  static constexpr std::size_t kStagingBytes = 64 << 10;

  /// `fd` is a connected non-blocking socket; `where` names the link in errors
  /// ("rank 0: connection to rank 1 (10.0.0.2:60001)"); `bounceBytes` bounds
  /// every reduced receive piece.
  SocketStream(int fd, int index, int count, std::string where, std::size_t bounceBytes);
  ~SocketStream();
  SocketStream(const SocketStream&) = delete;
  SocketStream& operator=(const SocketStream&) = delete;

  int fd() const { return fd_; }

  // Retry mode (tcp_retry.h): the stream outlives its socket.
  /// Keeps every byte written until acked(), so that resumeOn() can write it again.
  void keepWritten() { keeping_ = true; }
  /// Bytes read from the stream so far (over every socket it had).
  std::uint64_t readTotal() const { return readTotal_; }
  /// The peer read the first `peerRead` bytes: they need not be kept.
  void acked(std::uint64_t peerRead);
  /// An I/O error or the peer's FIN ended the current socket.
  bool broken() const { return broken_; }
  /// Bytes written and not yet acked.
  bool keepsBytes() const { return writtenTotal_ > keptFrom_; }
  /// Goes on over `fd` (taken over; the old socket is closed); the owner
  /// writes nothing before replayFrom().
  void adopt(int fd);
  /// Writes again from byte `peerRead`, what the peer says it read, before
  /// anything new. kConnectionError when that is not a byte this stream keeps.
  Status replayFrom(std::uint64_t peerRead);
  /// Ends the current socket both ways (the peer notices the break at once).
  void shutdownBoth();
  void queueSend(const SendPiece& piece) {
    sends_.push_back(piece);
    queuedTotal_ += piece.bytes;
  }
  /// Bytes ever queued for sending (retry mode: a message is acked once
  /// ackedTotal() reaches what was queued up to its end).
  std::uint64_t queuedTotal() const { return queuedTotal_; }
  std::uint64_t ackedTotal() const { return keptFrom_; }
  void queueRecv(const RecvPiece& piece) { recvs_.push_back(piece); }
  /// Bytes wait to be written: queued ones, or kept ones a resumed socket writes again.
  bool sendQueued() const { return !sends_.empty() || replayAt_ < writtenTotal_; }
  bool recvQueued() const { return !recvs_.empty(); }
  /// No frame is partly written: a frame written now lands between frames.
  bool atSendFrameBoundary() const;

  /// Writes what the socket takes now (at most a budget, for fairness).
  Status pumpSend();
  /// Reads what has arrived into the queued pieces (at most a budget).
  Status pumpRecv();

  /// Makes the staging area hold at least `n` (<= kStagingBytes) bytes, reading
  /// if needed; *ready tells whether it does now.
  Status fillStaging(std::size_t n, bool* ready);
  const std::uint8_t* staged() const { return staging_.get() + head_; }
  std::size_t stagedBytes() const { return tail_ - head_; }
  void consume(std::size_t n);

  /// Best effort, for error frames: writes all of `data` within `patience`.
  bool writeUrgent(const std::uint8_t* data, std::size_t n, std::chrono::milliseconds patience);
  /// Sends FIN: the peer's reads end after what was written.
  void shutdownWrite();
  /// A read saw the peer's FIN (everything it sent has been read).
  bool peerClosed() const { return eof_; }

 private:
  Status ioError(int err, const char* op);
  Status closedError(const char* op);
  void keep(const std::uint8_t* data, std::size_t n);
  Status replay();
  std::uint8_t* target(const RecvPiece& piece);
  void advanceRecv(RecvPiece& piece, std::size_t n);
  void advanceSend(std::size_t n);

  int fd_;
  const int index_;
  const int count_;
  const std::string where_;
  const std::size_t bounceBytes_;
  std::deque<SendPiece> sends_;
  std::size_t sendOffset_ = 0;  // written bytes of sends_.front()
  std::deque<RecvPiece> recvs_;
  std::unique_ptr<std::uint8_t[]> staging_;
  std::size_t head_ = 0, tail_ = 0;
  std::unique_ptr<std::uint8_t[]> bounce_;  // allocated at the first reduced receive
  bool eof_ = false;
  // Retry mode: bytes [keptFrom_, writtenTotal_) of the stream, in a ring
  // (kept_, capacity a power of two, keptFrom_ at keptHead_), and the point a
  // resumed socket writes again from (replayAt_ < writtenTotal_ while it does).
  bool keeping_ = false;
  bool broken_ = false;
  std::uint64_t readTotal_ = 0, writtenTotal_ = 0, keptFrom_ = 0, replayAt_ = 0;
  std::uint64_t queuedTotal_ = 0;
  std::vector<std::uint8_t> kept_;
  std::size_t keptHead_ = 0;
};

}  // namespace cohort::transport::tcp
