#include "transport/tcp/tcp_connection.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <chrono>

#include "common/error.h"
#include "common/log.h"

namespace cohort::transport::tcp {

namespace {

constexpr std::size_t kHeaderBytes = FrameHeader::kWireSize;

ErrorCode codeFromWire(std::uint16_t code) {
  return code > 0 && code <= static_cast<std::uint16_t>(kLastErrorCode)
             ? static_cast<ErrorCode>(code)
             : ErrorCode::kRemoteError;
}

}  // namespace

TcpConnection::TcpConnection(const LinkEnds& ends, std::vector<int> fds, std::size_t chunkBytes,
                             std::unique_ptr<Resilience> resilience)
    : ends_(ends),
      where_(fmt::format("rank {}: connection to rank {} ({})", ends.selfRank, ends.peerRank,
                         ends.peerAddress)),
      chunkBytes_(chunkBytes),
      epollFd_(::epoll_create1(EPOLL_CLOEXEC)),
      retry_(std::move(resilience)) {
  if (retry_ != nullptr) {
    ackFd_ = fds.back();
    fds.pop_back();
    tuneRetrySocket(ackFd_);
  }
  const int count = static_cast<int>(fds.size());
  for (int i = 0; i < count; ++i) {
    const int fd = fds[static_cast<std::size_t>(i)];
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    streams_.push_back(std::make_unique<SocketStream>(fd, i, count, where_, chunkBytes));
    if (retry_ != nullptr) {
      streams_.back()->keepWritten();
      tuneRetrySocket(fd);
    }
  }
  ackedReads_.assign(streams_.size(), 0);
  watchSockets();
  if (retry_ != nullptr) {
    retry_->hub->attach(ends_.peerRank,
                        [this](std::vector<std::uint64_t>* reads) { return idleReads(reads); });
  }
}

TcpConnection::~TcpConnection() {
  if (retry_ != nullptr) retry_->hub->detach(ends_.peerRank);
  if (epollFd_ >= 0) ::close(epollFd_);
  if (ackFd_ >= 0) ::close(ackFd_);
}

// Registers the current sockets with epoll, no interest yet (updateInterest).
void TcpConnection::watchSockets() {
  interest_.assign(streams_.size(), 0);
  interestValid_ = false;
  if (epollFd_ < 0) return;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    epoll_event ev{};
    ev.data.u32 = static_cast<std::uint32_t>(i);
    ::epoll_ctl(epollFd_, EPOLL_CTL_ADD, streams_[i]->fd(), &ev);
  }
  ackInterest_ = 0;
  if (ackFd_ >= 0) {
    epoll_event ev{};
    ev.data.u32 = static_cast<std::uint32_t>(streams_.size());
    ::epoll_ctl(epollFd_, EPOLL_CTL_ADD, ackFd_, &ev);
  }
}

Status TcpConnection::postSend(const void* data, std::size_t bytes) {
  auto lock = guard();
  if (!error_.ok()) return error_;
  if (data == nullptr && bytes > 0) {
    return makeError(ErrorCode::kInvalidArgument, "{}: send of {} bytes from a null pointer",
                     where_, bytes);
  }
  sends_.emplace_back();
  SendOp& op = sends_.back();
  ++sendsPosted_;
  FrameHeader{FrameType::kData, 0, sendsPosted_, bytes}.encode(op.header);
  op.remaining = kHeaderBytes + bytes;
  streams_[0]->queueSend({op.header, kHeaderBytes, &op.remaining, true});
  const auto* base = static_cast<const std::uint8_t*>(data);
  forEachChunk(bytes, chunkBytes_, socketCount(), [&](const Chunk& c) {
    streams_[static_cast<std::size_t>(c.socket)]->queueSend(
        {base + c.offset, c.bytes, &op.remaining, false});
  });
  if (retry_ != nullptr) {
    for (const auto& stream : streams_) op.ends.push_back(stream->queuedTotal());
  }
  return Status::Ok();
}

Status TcpConnection::postRecv(void* dst, std::size_t bytes, const Reduction* reduce,
                               const void* accumulate) {
  auto lock = guard();
  if (!error_.ok()) return error_;
  if (dst == nullptr && bytes > 0) {
    return makeError(ErrorCode::kInvalidArgument, "{}: receive of {} bytes into a null pointer",
                     where_, bytes);
  }
  if (reduce != nullptr) {
    const std::size_t e = reduce->elementSize;
    if (reduce->fn == nullptr || e == 0 || bytes % e != 0 || chunkBytes_ % e != 0) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: reduced receive of {} bytes with element size {} (must divide the "
                       "size and the {}-byte chunk)",
                       where_, bytes, e, chunkBytes_);
    }
  }
  RecvOp op{static_cast<std::uint8_t*>(dst),
            bytes,
            {},
            reduce != nullptr,
            static_cast<const std::uint8_t*>(accumulate != nullptr ? accumulate : dst),
            bytes};
  if (reduce != nullptr) op.reduce = *reduce;
  recvs_.push_back(op);
  ++recvsPosted_;
  return Status::Ok();
}

Status TcpConnection::progress() {
  auto lock = guard();
  if (!error_.ok()) return error_;
  if (retry_ != nullptr) {
    Status up = keepLinkUp();
    if (!up.ok()) return fail(up);
    retire();  // acks read, or learned from a probe, complete sends
    if (link_ != Link::kUp) return Status::Ok();
  }
  if (nothingToDo()) return Status::Ok();
  Status sent;
  for (auto& s : streams_) {
    sent = s->pumpSend();
    if (!sent.ok()) break;
  }
  // Even after a failure, what the peer sent before it is read and counted
  // (the kernel keeps it past a reset): a collective's argument check among it
  // explains the failure better than the transport can.
  retire();  // receiveFrames() reads ahead only while a send is queued
  Status st = receiveFrames();
  for (std::size_t i = 1; i < streams_.size() && st.ok(); ++i) st = streams_[i]->pumpRecv();
  retire();
  if (retry_ != nullptr && error_.ok() && anyBroken()) return onBreak(!sent.ok() ? sent : st);
  if (!sent.ok()) return fail(sent);
  if (!st.ok()) return fail(st);
  if (retry_ != nullptr) sendAck();
  updateInterest();
  return Status::Ok();
}

// Whether nothing can move: no send queued, nothing staged, no header held
// for a receive posted since, and epoll (whose level-triggered interest is
// what the last progress() waited for) reports no socket ready. epoll_wait
// takes no socket lock; a read() would, and a reader spinning on that lock
// delays the softirq that delivers the peer's message to the same socket.
bool TcpConnection::nothingToDo() {
  if (epollFd_ < 0 || !interestValid_ || !peerGone_.ok() ||
      (havePending_ && recvsMatched_ < recvsPosted_)) {
    return false;
  }
  for (const auto& s : streams_) {
    if (s->sendQueued() || s->stagedBytes() > 0) return false;
  }
  epoll_event ev[4];
  return ::epoll_wait(epollFd_, ev, 4, 0) == 0;
}

// Socket 0 alternates between a frame header and the pieces it announced.
Status TcpConnection::receiveFrames() {
  SocketStream& s0 = *streams_[0];
  for (;;) {
    COHORT_RETURN_IF_ERROR(s0.pumpRecv());
    if (s0.recvQueued()) return Status::Ok();
    if (havePending_) {
      if (recvsMatched_ == recvsPosted_) return Status::Ok();
      havePending_ = false;
      COHORT_RETURN_IF_ERROR(match(pending_));
      continue;
    }
    if (!peerGone_.ok()) return recvsMatched_ < recvsPosted_ ? peerGone_ : Status::Ok();
    // With every receive matched and every send gone, the next header can wait
    // for the next receive: reading ahead would cost a failing read() at the
    // end of every small operation. (While a send is queued the peer may have
    // failed: its error frame is read then.)
    if (recvsMatched_ == recvsPosted_ && s0.stagedBytes() == 0 && sends_.empty()) {
      return Status::Ok();
    }
    bool ready = false;
    Status st = s0.fillStaging(kHeaderBytes, &ready);
    if (!st.ok() && s0.peerClosed() && s0.stagedBytes() == 0 && retry_ == nullptr) {
      // The peer closed between frames: what it sent on the other sockets may
      // still complete its last messages, so only an unmatched receive fails.
      peerGone_ = st;
      continue;
    }
    COHORT_RETURN_IF_ERROR(st);
    if (!ready) return Status::Ok();
    FrameHeader h;
    st = FrameHeader::decode(s0.staged(), &h);
    if (!st.ok()) return fail(makeError(st.code(), "{}: {}", where_, st.message()), st.message());
    if (h.type == FrameType::kError) return onErrorFrame(h);
    s0.consume(kHeaderBytes);
    if (recvsMatched_ == recvsPosted_) {
      pending_ = h;
      havePending_ = true;
      return Status::Ok();
    }
    COHORT_RETURN_IF_ERROR(match(h));
  }
}

Status TcpConnection::onErrorFrame(const FrameHeader& h) {
  if (h.bytes > FrameHeader::kMaxErrorText) {
    return fail(makeError(ErrorCode::kConnectionError, "{}: corrupt stream: {}-byte error frame",
                          where_, h.bytes));
  }
  bool ready = false;
  COHORT_RETURN_IF_ERROR(streams_[0]->fillStaging(kHeaderBytes + h.bytes, &ready));
  if (!ready) return Status::Ok();
  const char* text = reinterpret_cast<const char*>(streams_[0]->staged() + kHeaderBytes);
  return fail(Status(
      codeFromWire(h.code),
      fmt::format("{}: rank {} reported: {}", where_, ends_.peerRank, std::string(text, h.bytes))));
}

Status TcpConnection::match(const FrameHeader& h) {
  if (h.seq != recvsMatched_ + 1) {
    const std::string what = fmt::format("protocol error: message {} arrived where {} was due",
                                         h.seq, recvsMatched_ + 1);
    return fail(makeError(ErrorCode::kConnectionError, "{}: {}", where_, what), what);
  }
  RecvOp& op = recvs_[static_cast<std::size_t>(recvsMatched_ - recvsCompleted_)];
  if (h.bytes != op.bytes) {
    const std::string what = fmt::format(
        "size mismatch: message {} from rank {} is {} bytes, but rank {} posted a receive of {} "
        "bytes",
        h.seq, ends_.peerRank, h.bytes, ends_.selfRank, op.bytes);
    return fail(makeError(ErrorCode::kMismatch, "{}: {}", where_, what), what);
  }
  ++recvsMatched_;
  forEachChunk(op.bytes, chunkBytes_, socketCount(), [&](const Chunk& c) {
    SocketStream::RecvPiece piece;
    piece.dst = op.dst + c.offset;
    piece.bytes = c.bytes;
    piece.remaining = &op.remaining;
    piece.reduce = op.hasReduce ? &op.reduce : nullptr;
    piece.accumulate = op.accumulate + c.offset;
    streams_[static_cast<std::size_t>(c.socket)]->queueRecv(piece);
  });
  return Status::Ok();
}

void TcpConnection::retire() {
  // In retry mode a send completes once the peer read it, not once the kernel
  // took it: its bytes are written again after a break until then.
  while (!sends_.empty() && sends_.front().remaining == 0 &&
         (retry_ == nullptr || delivered(sends_.front()))) {
    sends_.pop_front();
    ++sendsCompleted_;
  }
  while (recvsCompleted_ < recvsMatched_ && recvs_.front().remaining == 0) {
    recvs_.pop_front();
    ++recvsCompleted_;
  }
}

Status TcpConnection::fail(Status s, const std::string& peerText) {
  if (!error_.ok()) return error_;
  error_ = std::move(s);
  if (retry_ != nullptr) retry_->hub->markFailed(ends_.peerRank);
  COHORT_LOG(kInfo, "transport", "{}", error_.toString());
  if (!peerText.empty()) tellPeer(error_.code(), peerText, std::chrono::milliseconds(200));
  for (auto& stream : streams_) stream->shutdownWrite();
  return error_;
}

// An error frame, when socket 0 is between frames (mid-frame, the peer sees the
// stream end and nothing else). The text is cut to what a frame carries.
void TcpConnection::tellPeer(ErrorCode code, const std::string& text,
                             std::chrono::milliseconds patience) {
  if (!streams_[0]->atSendFrameBoundary()) return;
  const std::string cut = text.substr(0, FrameHeader::kMaxErrorText);
  std::vector<std::uint8_t> frame(kHeaderBytes + cut.size());
  FrameHeader{FrameType::kError, static_cast<std::uint16_t>(code), 0, cut.size()}.encode(
      frame.data());
  std::copy(cut.begin(), cut.end(), frame.begin() + kHeaderBytes);
  streams_[0]->writeUrgent(frame.data(), frame.size(), patience);
}

// The peer sees end-of-stream at once, and why in an error frame when one can
// be sent: the failure note the communicator leaves in the store before calling
// this is lost when the store's host is the rank that failed and it exits. A
// timeout there is one here too (the peer waited for the same late rank); any
// other cause is a remote error to the peer. A peer that does not read (it is
// stopped) gets 50 ms: the communicator aborts every connection within the
// margin its operation's deadline leaves.
void TcpConnection::abort(const Status& why) {
  auto lock = guard();
  if (!error_.ok()) return;
  error_ = why;
  if (retry_ != nullptr) retry_->hub->markFailed(ends_.peerRank);
  tellPeer(why.code() == ErrorCode::kTimeout ? ErrorCode::kTimeout : ErrorCode::kRemoteError,
           why.message(), std::chrono::milliseconds(50));
  for (auto& stream : streams_) stream->shutdownWrite();
}

// Level-triggered epoll interest as of the last progress(): it only changes
// when a send blocks or unblocks, so steady small-message traffic costs no
// epoll_ctl at all.
void TcpConnection::updateInterest() {
  if (epollFd_ < 0) return;
  bool sending = false;
  for (const auto& s : streams_) sending = sending || s->sendQueued();
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    const SocketStream& s = *streams_[i];
    std::uint32_t want = 0;
    // A header held for a receive not yet posted leaves its payload readable:
    // a wait for a blocked send would wake for it at once, so socket 0 is then
    // not watched. Without a send queued nothing waits on this connection, and
    // keeping the interest saves two epoll_ctl calls per message that arrives
    // early (a round's data before the round is posted).
    if (s.recvQueued() ||
        (i == 0 && peerGone_.ok() && (!havePending_ || !sending))) {
      want |= EPOLLIN;
    }
    if (s.sendQueued()) want |= EPOLLOUT;
    if (want == interest_[i]) continue;
    epoll_event ev{};
    ev.events = want;
    ev.data.u32 = static_cast<std::uint32_t>(i);
    ::epoll_ctl(epollFd_, EPOLL_CTL_MOD, s.fd(), &ev);
    interest_[i] = want;
  }
  interestValid_ = true;
}

WaitHint TcpConnection::waitHint() {
  auto lock = guard();
  WaitHint hint;
  if (retry_ != nullptr && link_ != Link::kUp) {
    // Resuming: the peer's record arrives on the ack socket. Broken: nothing to
    // sleep on but time (the waiter then naps briefly between progress calls).
    hint.fd = link_ == Link::kResuming ? ackFd_ : -1;
    return hint;
  }
  hint.fd = epollFd_ >= 0 ? epollFd_ : streams_[0]->fd();  // without epoll: messages still wake
  return hint;
}

}  // namespace cohort::transport::tcp
