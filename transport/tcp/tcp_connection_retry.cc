// TcpConnection in retry mode (tcp_retry.h has the design): noticing a break,
// re-establishing the link within the policy's limits, and the ack socket's
// records.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "transport/little_endian.h"
#include "transport/tcp/tcp_connection.h"

namespace cohort::transport::tcp {

namespace {

constexpr std::uint32_t kRecordMagic = 0x4b434143;  // "CACK"
constexpr std::uint32_t kResumeRecord = 1, kAckRecord = 2;

long long msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace

// A silent link must end in an error the retry can act on: unacknowledged data
// (or, idle, unanswered keep-alive probes) for TcpOptions::retrySilenceMs.
void TcpConnection::tuneRetrySocket(int fd) const {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  const int silence = retry_->options.retrySilenceMs;
  const int idle = std::max(1, silence / 1000);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &silence, sizeof(silence));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle));
}

bool TcpConnection::anyBroken() const {
  for (const auto& s : streams_) {
    if (s->broken()) return true;
  }
  return false;
}

Status TcpConnection::onBreak(const Status& cause) {
  const std::uint64_t op = retry_->operations != nullptr ? retry_->operations->load() : 0;
  if (op != opAtBreak_) {
    opAtBreak_ = op;
    breaksInOp_ = 0;
  }
  // An idle end owes nothing: the link is mended when next used, and only a
  // break that holds up work counts against MaxCnt.
  const bool owing = !idle();
  if (owing && ++breaksInOp_ > retry_->policy.maxCnt) {
    return fail(makeError(ErrorCode::kConnectionError,
                          "{}; the link broke {} times in one operation, and "
                          "HCCL_OP_RETRY_PARAMS allows {} (MaxCnt)",
                          cause.message(), breaksInOp_, retry_->policy.maxCnt));
  }
  link_ = Link::kBroken;
  brokenAt_ = Clock::now();
  nextTry_ = brokenAt_;
  breakCause_ = cause;
  tries_ = 0;
  lastTry_.clear();
  for (auto& s : streams_) s->shutdownBoth();
  ::shutdown(ackFd_, SHUT_RDWR);
  if (owing) {
    COHORT_LOG(kWarn, "transport",
               "{}: the link broke ({}); re-establishing it (HCCL_OP_RETRY_ENABLE)", where_,
               cause.message());
  } else {
    COHORT_LOG(kInfo, "transport", "{}: the link ended ({}) with nothing owed", where_,
               cause.message());
  }
  return Status::Ok();
}

Status TcpConnection::keepLinkUp() {
  // The peer dialed new sockets: it saw the link break (this side may not have).
  if (!retry_->dials && retry_->hub->arrivals() != hubSeen_) {
    hubSeen_ = retry_->hub->arrivals();
    std::uint32_t generation = 0;
    std::vector<int> fds;
    if (retry_->hub->take(ends_.peerRank, socketCount() + 1, generation_, &generation, &fds)) {
      adopt(std::move(fds), generation);
    }
  }
  if (link_ == Link::kBroken) COHORT_RETURN_IF_ERROR(tryReestablish());
  if (link_ == Link::kBroken) return Status::Ok();
  bool keeps = link_ == Link::kResuming || !ackOut_.empty();
  for (const auto& s : streams_) keeps = keeps || s->keepsBytes();
  if (!keeps) return Status::Ok();
  if (!ackOut_.empty()) sendAck();  // this side's resume record first
  Status read = readAckSocket();
  // What arrived before an end of the stream counts (a peer's last ack, then
  // its close once it finished).
  COHORT_RETURN_IF_ERROR(applyRecords());
  if (read.ok()) return Status::Ok();
  retire();
  if (idle() && link_ == Link::kUp) return Status::Ok();  // nothing owed either way
  return onBreak(read);  // the ack socket broke
}

Status TcpConnection::tryReestablish() {
  const auto now = Clock::now();
  // An idle end waits for its next use: nothing of it is lost meanwhile.
  if (idle() && ackOut_.empty()) {
    brokenAt_ = nextTry_ = now;
    return Status::Ok();
  }
  if (now - brokenAt_ >= retry_->policy.hold) {
    return makeError(ErrorCode::kConnectionError,
                     "{}: the link broke ({}) and was not re-established within {} ms "
                     "(HCCL_OP_RETRY_PARAMS HoldTime; {} attempt(s){}{})",
                     where_, breakCause_.message(), retry_->policy.hold.count(), tries_,
                     lastTry_.empty() ? "" : ", the last: ", lastTry_);
  }
  if (now < nextTry_) return Status::Ok();
  ++tries_;
  nextTry_ = retry_->policy.nextAttempt(now);
  const auto limit = retry_->policy.attemptLimit(now - brokenAt_);
  // First a probe of the peer's hub: is it alive, is the link up, and what has
  // its end read if it is idle (an ack lost with the old sockets).
  HubRefusal refusal = HubRefusal::kNone;
  std::vector<int> fds;
  Status s = dialHub(retry_->options, retry_->hello, retry_->peerHub, 1, kProbeChannel, limit,
                     where_, &refusal, &fds);
  if (refusal == HubRefusal::kNothingListens) {
    return makeError(ErrorCode::kRemoteError,
                     "{}: the link broke ({}) and rank {} refuses to re-establish it: nothing "
                     "listens at its end (its process ended or it destroyed the communicator)",
                     where_, breakCause_.message(), ends_.peerRank);
  }
  if (refusal == HubRefusal::kLinkFailedThere) {
    return makeError(ErrorCode::kRemoteError,
                     "{}: the link broke ({}) and rank {} refuses to re-establish it: its side "
                     "of the link failed",
                     where_, breakCause_.message(), ends_.peerRank);
  }
  ProbeAnswer answer;
  if (s.ok()) {
    s = ProbeAnswer::read(fds[0], limit, &answer);
    ::close(fds[0]);
  }
  if (!s.ok()) {
    lastTry_ = s.message();
    COHORT_LOG(kInfo, "transport", "{}: probing the peer failed: {}", where_, lastTry_);
    return Status::Ok();
  }
  brokenAt_ = Clock::now();  // the link is up and the peer alive: the hold starts again
  if (answer.idle && answer.reads.size() == streams_.size()) {
    for (std::size_t i = 0; i < streams_.size(); ++i) streams_[i]->acked(answer.reads[i]);
    retire();
  }
  // The lower rank dials; the higher waits for it (its owner dials once it has
  // work on this link, as this end has). Idle now, the next try is the first
  // call with work.
  if (idle()) nextTry_ = brokenAt_;
  if (!retry_->dials || idle()) return Status::Ok();
  // A number of its own for every attempt: a set the other end may have taken
  // from an attempt that failed here must never pass for this one.
  dialGeneration_ = std::max(dialGeneration_, generation_) + 1;
  const std::uint32_t generation = dialGeneration_;
  s = dialHub(retry_->options, retry_->hello, retry_->peerHub, socketCount() + 1,
              reconnectChannel(generation, 0), limit, where_, &refusal, &fds);
  if (s.ok()) {
    adopt(std::move(fds), generation);
  } else {
    lastTry_ = s.message();
    COHORT_LOG(kInfo, "transport", "{}: re-establishing the link failed: {}", where_, lastTry_);
  }
  return Status::Ok();
}

std::string TcpConnection::retryState() const {
  std::string text = fmt::format(
      "link {} generation {} (dialed {}), {} reconnection(s), sends {}/{}, receives {}/{} "
      "(matched {}), ack in {} out {}",
      link_ == Link::kUp ? "up" : link_ == Link::kBroken ? "broken" : "resuming", generation_,
      dialGeneration_, reconnections_, sendsCompleted_, sendsPosted_, recvsCompleted_,
      recvsPosted_, recvsMatched_, ackIn_.size(), ackOut_.size() - ackOutSent_);
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    const SocketStream& st = *streams_[i];
    text += fmt::format("; socket {}: read {} queued {} acked {} send{} recv{}", i, st.readTotal(),
                        st.queuedTotal(), st.ackedTotal(), st.sendQueued() ? "s" : " none",
                        st.recvQueued() ? "s" : " none");
  }
  return text;
}

bool TcpConnection::delivered(const SendOp& op) const {
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i]->ackedTotal() < op.ends[i]) return false;
  }
  return true;
}

std::unique_lock<std::mutex> TcpConnection::guard() {
  return retry_ != nullptr ? std::unique_lock<std::mutex>(mu_) : std::unique_lock<std::mutex>();
}

bool TcpConnection::idleReads(std::vector<std::uint64_t>* reads) {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || !idle() || !error_.ok()) return false;
  reads->clear();
  for (const auto& s : streams_) reads->push_back(s->readTotal());
  return true;
}

void TcpConnection::adopt(std::vector<int> fds, std::uint32_t generation) {
  if (epollFd_ >= 0) ::close(epollFd_);
  epollFd_ = ::epoll_create1(EPOLL_CLOEXEC);
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    tuneRetrySocket(fds[i]);
    streams_[i]->adopt(fds[i]);
  }
  ::close(ackFd_);
  ackFd_ = fds.back();
  tuneRetrySocket(ackFd_);
  watchSockets();
  generation_ = generation;
  ++reconnections_;
  if (link_ == Link::kUp) brokenAt_ = Clock::now();  // this side had not noticed
  link_ = Link::kResuming;
  ackIn_.clear();
  ackOut_.clear();
  ackOutSent_ = 0;
  // Where each stream stands on this side: the peer writes again from there.
  appendLe(ackOut_, kRecordMagic, 4);
  appendLe(ackOut_, kResumeRecord, 4);
  for (auto& s : streams_) appendLe(ackOut_, s->readTotal(), 8);
  for (std::size_t i = 0; i < streams_.size(); ++i) ackedReads_[i] = streams_[i]->readTotal();
  sendAck();
  COHORT_LOG(kInfo, "transport", "{}: link re-established (sockets of generation {}), {} ms after it broke",
             where_, generation, msBetween(brokenAt_, Clock::now()));
}

Status TcpConnection::readAckSocket() {
  std::uint8_t buf[4096];
  for (;;) {
    const ssize_t k = ::recv(ackFd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (k > 0) {
      ackIn_.insert(ackIn_.end(), buf, buf + k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::Ok();
    return makeError(ErrorCode::kConnectionError, "{}: the ack socket {}", where_,
                     k == 0 ? std::string("was closed by the peer") : std::strerror(errno));
  }
}

Status TcpConnection::applyRecords() {
  const std::size_t size = 8 + 8 * streams_.size();
  std::size_t at = 0;
  for (; ackIn_.size() - at >= size; at += size) {
    const std::uint8_t* r = ackIn_.data() + at;
    const auto kind = static_cast<std::uint32_t>(loadLe(r + 4, 4));
    if (loadLe(r, 4) != kRecordMagic || (kind != kResumeRecord && kind != kAckRecord) ||
        (kind == kResumeRecord) != (link_ == Link::kResuming)) {
      return fail(makeError(ErrorCode::kConnectionError, "{}: corrupt ack stream (record kind {})",
                            where_, kind));
    }
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      const std::uint64_t peerRead = loadLe(r + 8 + 8 * i, 8);
      if (kind == kAckRecord) {
        streams_[i]->acked(peerRead);
      } else {
        Status s = streams_[i]->replayFrom(peerRead);
        if (!s.ok()) return fail(s);
      }
    }
    if (kind == kResumeRecord) link_ = Link::kUp;
  }
  ackIn_.erase(ackIn_.begin(), ackIn_.begin() + static_cast<std::ptrdiff_t>(at));
  return Status::Ok();
}

// Tells the peer how far this side read, when that changed and the last
// record is out. A full socket only delays it (the next progress sends it).
void TcpConnection::sendAck() {
  if (ackOut_.empty()) {
    bool changed = false;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      changed = changed || streams_[i]->readTotal() != ackedReads_[i];
    }
    if (!changed) return;
    appendLe(ackOut_, kRecordMagic, 4);
    appendLe(ackOut_, kAckRecord, 4);
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      ackedReads_[i] = streams_[i]->readTotal();
      appendLe(ackOut_, ackedReads_[i], 8);
    }
    ackOutSent_ = 0;
  }
  while (ackOutSent_ < ackOut_.size()) {
    const ssize_t k = ::send(ackFd_, ackOut_.data() + ackOutSent_, ackOut_.size() - ackOutSent_,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      ackOutSent_ += static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    return;  // full, or broken: the data sockets or the next read tell
  }
  ackOut_.clear();
  ackOutSent_ = 0;
}

}  // namespace cohort::transport::tcp
