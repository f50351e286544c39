// Reads and writes are plain non-blocking syscalls on the caller's thread: a
// hand-off to a progress thread costs about 10x for small messages. A read
// targets the current piece and the staging area together (readv), so a small
// message and the header after it cost one syscall.
#include "transport/tcp/socket_stream.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace cohort::transport::tcp {

namespace {

// Bytes one pump moves at most before it returns, so that a long receive does
// not starve the sends of the same step (and vice versa).
constexpr std::size_t kPumpBudget = 4 << 20;
// Received bytes reduced at once: small enough to stay in cache.
constexpr std::size_t kReduceStep = 64 << 10;
constexpr int kMaxIov = 16;
// The first ring of written bytes a retrying stream keeps (it doubles as needed).
constexpr std::size_t kMinKept = 1 << 20;

bool wouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace

SocketStream::SocketStream(int fd, int index, int count, std::string where, std::size_t bounceBytes)
    : fd_(fd),
      index_(index),
      count_(count),
      where_(std::move(where)),
      bounceBytes_(bounceBytes),
      staging_(new std::uint8_t[kStagingBytes]) {}

SocketStream::~SocketStream() { ::close(fd_); }

bool SocketStream::atSendFrameBoundary() const {
  return replayAt_ == writtenTotal_ &&
         (sends_.empty() || (sendOffset_ == 0 && sends_.front().frameStart));
}

Status SocketStream::closedError(const char* op) {
  broken_ = true;
  return makeError(ErrorCode::kRemoteError, "{} closed by the peer (socket {} of {}, while {})",
                   where_, index_, count_, op);
}

Status SocketStream::ioError(int err, const char* op) {
  broken_ = true;
  if (err == ECONNRESET || err == EPIPE) {
    return makeError(ErrorCode::kRemoteError,
                     "{} reset by the peer (socket {} of {}, while {}: {})", where_, index_, count_,
                     op, std::strerror(err));
  }
  return makeError(ErrorCode::kConnectionError, "{}: {} failed on socket {} of {}: {} (errno {})",
                   where_, op, index_, count_, std::strerror(err), err);
}

Status SocketStream::pumpSend() {
  if (replayAt_ < writtenTotal_) {
    COHORT_RETURN_IF_ERROR(replay());
    if (replayAt_ < writtenTotal_) return Status::Ok();
  }
  std::size_t moved = 0;
  while (!sends_.empty() && moved < kPumpBudget) {
    iovec iov[kMaxIov];
    int n = 0;
    std::size_t offset = sendOffset_;
    for (auto it = sends_.begin(); it != sends_.end() && n < kMaxIov; ++it, ++n) {
      iov[n].iov_base = const_cast<std::uint8_t*>(it->data) + offset;
      iov[n].iov_len = it->bytes - offset;
      offset = 0;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n);
    const ssize_t k = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (wouldBlock(errno)) return Status::Ok();
      return ioError(errno, "sending");
    }
    advanceSend(static_cast<std::size_t>(k));
    moved += static_cast<std::size_t>(k);
  }
  return Status::Ok();
}

void SocketStream::advanceSend(std::size_t n) {
  while (n > 0) {
    SendPiece& front = sends_.front();
    const std::size_t take = std::min(n, front.bytes - sendOffset_);
    if (keeping_) keep(front.data + sendOffset_, take);
    writtenTotal_ += take;
    replayAt_ = writtenTotal_;  // new bytes are written only once a replay is done
    sendOffset_ += take;
    n -= take;
    if (sendOffset_ == front.bytes) {
      *front.remaining -= front.bytes;
      sends_.pop_front();
      sendOffset_ = 0;
    }
  }
}

std::uint8_t* SocketStream::target(const RecvPiece& piece) {
  if (piece.reduce == nullptr) return piece.dst;
  if (!bounce_) bounce_.reset(new std::uint8_t[bounceBytes_]);
  return bounce_.get();
}

void SocketStream::advanceRecv(RecvPiece& piece, std::size_t n) {
  piece.filled += n;
  if (piece.reduce == nullptr) return;
  const std::size_t ready = piece.filled - piece.filled % piece.reduce->elementSize;
  if (ready - piece.reduced < kReduceStep && piece.filled < piece.bytes) return;
  piece.reduce->fn(piece.dst + piece.reduced, piece.accumulate + piece.reduced,
                   bounce_.get() + piece.reduced, ready - piece.reduced, piece.reduce->context);
  piece.reduced = ready;
}

Status SocketStream::pumpRecv() {
  std::size_t moved = 0;
  while (!recvs_.empty() && moved < kPumpBudget) {
    RecvPiece& piece = recvs_.front();
    std::uint8_t* dst = target(piece) + piece.filled;
    const std::size_t want = piece.bytes - piece.filled;
    std::size_t got = 0;
    if (stagedBytes() > 0) {
      got = std::min(want, stagedBytes());
      std::memcpy(dst, staged(), got);
      consume(got);
    } else if (want > 0) {
      iovec iov[2] = {{dst, want}, {staging_.get(), kStagingBytes}};
      const ssize_t k = ::readv(fd_, iov, 2);
      if (k < 0) {
        if (errno == EINTR) continue;
        if (wouldBlock(errno)) return Status::Ok();
        return ioError(errno, "receiving");
      }
      if (k == 0) {
        eof_ = true;
        return closedError("receiving");
      }
      readTotal_ += static_cast<std::size_t>(k);
      got = std::min(want, static_cast<std::size_t>(k));
      tail_ = static_cast<std::size_t>(k) - got;  // staging was empty: head_ == 0
    }
    advanceRecv(piece, got);
    moved += got;
    if (piece.filled == piece.bytes) {
      *piece.remaining -= piece.bytes;
      recvs_.pop_front();
    }
  }
  return Status::Ok();
}

void SocketStream::consume(std::size_t n) {
  head_ += n;
  if (head_ == tail_) head_ = tail_ = 0;
}

Status SocketStream::fillStaging(std::size_t n, bool* ready) {
  *ready = stagedBytes() >= n;
  if (*ready) return Status::Ok();
  if (head_ + n > kStagingBytes) {
    std::memmove(staging_.get(), staged(), stagedBytes());
    tail_ -= head_;
    head_ = 0;
  }
  for (;;) {
    const ssize_t k = ::read(fd_, staging_.get() + tail_, kStagingBytes - tail_);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (wouldBlock(errno)) return Status::Ok();
      return ioError(errno, "receiving");
    }
    if (k == 0) {
      eof_ = true;
      return closedError("waiting for a message");
    }
    readTotal_ += static_cast<std::size_t>(k);
    tail_ += static_cast<std::size_t>(k);
    *ready = stagedBytes() >= n;
    return Status::Ok();
  }
}

bool SocketStream::writeUrgent(const std::uint8_t* data, std::size_t n,
                               std::chrono::milliseconds patience) {
  const auto until = std::chrono::steady_clock::now() + patience;
  while (n > 0) {
    const ssize_t k = ::send(fd_, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      data += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno != EINTR && !wouldBlock(errno)) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
  return true;
}

void SocketStream::shutdownWrite() { ::shutdown(fd_, SHUT_WR); }

void SocketStream::shutdownBoth() { ::shutdown(fd_, SHUT_RDWR); }

void SocketStream::keep(const std::uint8_t* data, std::size_t n) {
  const std::size_t length = writtenTotal_ - keptFrom_;  // kept before these n
  if (length + n > kept_.size()) {
    std::size_t capacity = std::max<std::size_t>(kept_.size(), kMinKept);
    while (capacity < length + n) capacity *= 2;
    std::vector<std::uint8_t> grown(capacity);
    const std::size_t first = std::min(length, kept_.size() - keptHead_);
    if (length > 0) {
      std::memcpy(grown.data(), kept_.data() + keptHead_, first);
      std::memcpy(grown.data() + first, kept_.data(), length - first);
    }
    kept_.swap(grown);
    keptHead_ = 0;
  }
  const std::size_t mask = kept_.size() - 1;
  const std::size_t at = (keptHead_ + length) & mask;
  const std::size_t first = std::min(n, kept_.size() - at);
  std::memcpy(kept_.data() + at, data, first);
  std::memcpy(kept_.data(), data + first, n - first);
}

void SocketStream::acked(std::uint64_t peerRead) {
  if (peerRead <= keptFrom_ || peerRead > writtenTotal_) return;
  if (!kept_.empty()) keptHead_ = (keptHead_ + (peerRead - keptFrom_)) & (kept_.size() - 1);
  keptFrom_ = peerRead;
}

void SocketStream::adopt(int fd) {
  ::close(fd_);
  fd_ = fd;
  eof_ = false;
  broken_ = false;
}

Status SocketStream::replayFrom(std::uint64_t peerRead) {
  if (peerRead < keptFrom_ || peerRead > writtenTotal_) {
    return makeError(ErrorCode::kConnectionError,
                     "{}: the peer resumed socket {} of {} at byte {}, but this side wrote {} "
                     "and keeps them from byte {}",
                     where_, index_, count_, peerRead, writtenTotal_, keptFrom_);
  }
  acked(peerRead);
  replayAt_ = peerRead;
  return Status::Ok();
}

Status SocketStream::replay() {
  while (replayAt_ < writtenTotal_) {
    const std::size_t at = (keptHead_ + (replayAt_ - keptFrom_)) & (kept_.size() - 1);
    const std::size_t n =
        std::min<std::uint64_t>(writtenTotal_ - replayAt_, kept_.size() - at);
    const ssize_t k = ::send(fd_, kept_.data() + at, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (wouldBlock(errno)) return Status::Ok();
      return ioError(errno, "sending again after a reconnection");
    }
    replayAt_ += static_cast<std::uint64_t>(k);
  }
  return Status::Ok();
}

}  // namespace cohort::transport::tcp
