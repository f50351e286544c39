#include "transport/rdma/rdma_rejoin.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "transport/little_endian.h"
#include "transport/rdma/rdma_wire.h"

namespace cohort::transport::rdma {

namespace {

// The longest one step waits for the peer's record: the connection's thread
// comes back to it at once, and other links of the operation move meanwhile.
constexpr int kRecordWaitMs = 5;

}  // namespace

std::vector<std::uint8_t> RejoinRecord::encode() const {
  std::vector<std::uint8_t> out;
  appendLe(out, kMagic, 4);
  appendLe(out, qpn, 4);
  appendLe(out, psn, 4);
  appendLe(out, at.arrived, 8);
  appendLe(out, at.consumed, 8);
  return out;
}

bool RejoinRecord::decode(const std::uint8_t* in, RejoinRecord* out) {
  if (loadLe(in, 4) != kMagic) return false;
  out->qpn = static_cast<std::uint32_t>(loadLe(in + 4, 4));
  out->psn = static_cast<std::uint32_t>(loadLe(in + 8, 4));
  out->at.arrived = loadLe(in + 12, 8);
  out->at.consumed = loadLe(in + 20, 8);
  return out->qpn <= kMax24 && out->psn <= kMax24;
}

HubRejoiner::HubRejoiner(Ends ends, std::unique_ptr<QpMaker> maker)
    : ends_(std::move(ends)),
      maker_(std::move(maker)),
      knocked_(std::make_shared<std::atomic<bool>>(false)) {
  if (ends_.dials) {
    // A probe from the higher rank is its knock; the answer says "busy".
    auto knocked = knocked_;
    ends_.hub->attach(ends_.peerRank, [knocked](std::vector<std::uint64_t>*) {
      knocked->store(true, std::memory_order_release);
      return false;
    });
  }
}

HubRejoiner::~HubRejoiner() {
  if (ends_.dials) ends_.hub->detach(ends_.peerRank);
  dropExchange();
}

bool HubRejoiner::peerAsked() {
  if (ends_.dials) return knocked_->exchange(false, std::memory_order_acq_rel);
  return takeDial();
}

bool HubRejoiner::takeDial() {
  const std::uint64_t arrivals = ends_.hub->arrivals();
  if (arrivals == hubSeen_) return false;
  hubSeen_ = arrivals;
  std::uint32_t generation = 0;
  std::vector<int> fds;
  if (!ends_.hub->take(ends_.peerRank, 1, generation_, &generation, &fds)) return false;
  dropExchange();  // an older exchange the peer gave up
  fd_ = fds[0];
  generation_ = generation;
  return true;
}

void HubRejoiner::dropExchange() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  fresh_.reset();
  recordSent_ = false;
  in_.clear();
}

void HubRejoiner::giveUp() {
  ends_.hub->markFailed(ends_.peerRank);
  dropExchange();
}

Status HubRejoiner::step(const ResumePoint& mine, bool attempt, std::chrono::milliseconds limit,
                         RejoinStep* out, bool* reached, std::unique_ptr<QueuePair>* qp,
                         ResumePoint* theirs) {
  *out = RejoinStep::kWaiting;
  *reached = false;
  if (!ends_.dials && takeDial()) *reached = true;
  if (fd_ < 0) {
    if (!attempt) return Status::Ok();
    COHORT_RETURN_IF_ERROR(dialOrKnock(limit, out, reached));
    if (fd_ < 0) return Status::Ok();  // knocked: the lower rank dials
  }
  // An exchange under way: the peer's hub holds the socket, so its process
  // lives; its record comes when its connection is next used.
  *reached = true;
  return exchange(mine, limit, out, qp, theirs);
}

Status HubRejoiner::dialOrKnock(std::chrono::milliseconds limit, RejoinStep* out, bool* reached) {
  // A knock that came before this dial is answered by it.
  if (ends_.dials) knocked_->store(false, std::memory_order_release);
  tcp::HubRefusal refusal = tcp::HubRefusal::kNone;
  std::vector<int> fds;
  const std::uint64_t channel =
      ends_.dials ? tcp::reconnectChannel(generation_ + 1, 0) : tcp::kProbeChannel;
  Status s = tcp::dialHub(ends_.options, ends_.hello, ends_.peerHub, 1, channel, limit, ends_.where,
                          &refusal, &fds);
  if (refusal == tcp::HubRefusal::kNothingListens) {
    *out = RejoinStep::kPeerGone;
    return makeError(ErrorCode::kRemoteError,
                     "nothing listens at rank {}'s end (its process ended or it destroyed the "
                     "communicator)",
                     ends_.peerRank);
  }
  if (refusal == tcp::HubRefusal::kLinkFailedThere) {
    *out = RejoinStep::kPeerGone;
    return makeError(ErrorCode::kRemoteError, "rank {}'s side of the link failed", ends_.peerRank);
  }
  COHORT_RETURN_IF_ERROR(s);
  *reached = true;
  if (!ends_.dials) {
    ::close(fds[0]);
    return Status::Ok();
  }
  ++generation_;
  fd_ = fds[0];
  return Status::Ok();
}

Status HubRejoiner::exchange(const ResumePoint& mine, std::chrono::milliseconds limit,
                             RejoinStep* out, std::unique_ptr<QueuePair>* qp, ResumePoint* theirs) {
  if (!fresh_) {
    Status s = maker_->make(&fresh_, &freshPsn_);
    if (!s.ok()) {
      dropExchange();
      return s;
    }
  }
  if (!recordSent_) {
    const auto bytes = RejoinRecord{fresh_->qpNumber(), freshPsn_, mine}.encode();
    // 28 bytes on a new socket: its buffer takes them at once.
    const ssize_t k = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k != static_cast<ssize_t>(bytes.size())) {
      const std::string why = k < 0 ? std::strerror(errno) : "a short write";
      dropExchange();
      return makeError(ErrorCode::kConnectionError, "sending the rejoin record to rank {}: {}",
                       ends_.peerRank, why);
    }
    recordSent_ = true;
  }
  pollfd p{fd_, POLLIN, 0};
  const int wait = static_cast<int>(std::min<long long>(limit.count(), kRecordWaitMs));
  if (::poll(&p, 1, wait) <= 0) return Status::Ok();
  std::uint8_t buf[RejoinRecord::kBytes];
  const ssize_t k = ::recv(fd_, buf, RejoinRecord::kBytes - in_.size(), MSG_DONTWAIT);
  if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Status::Ok();
  if (k <= 0) {
    const std::string why = k == 0 ? "it closed" : std::strerror(errno);
    dropExchange();
    return makeError(ErrorCode::kConnectionError,
                     "the side channel to rank {} broke before its rejoin record came: {}",
                     ends_.peerRank, why);
  }
  in_.insert(in_.end(), buf, buf + k);
  if (in_.size() < RejoinRecord::kBytes) return Status::Ok();
  RejoinRecord record;
  if (!RejoinRecord::decode(in_.data(), &record)) {
    dropExchange();
    return makeError(ErrorCode::kConnectionError, "rank {} sent a corrupt rejoin record",
                     ends_.peerRank);
  }
  Status s = maker_->connect(*fresh_, freshPsn_, record.qpn, record.psn);
  if (!s.ok()) {
    dropExchange();
    return s;
  }
  *qp = std::move(fresh_);
  *theirs = record.at;
  *out = RejoinStep::kJoined;
  dropExchange();
  // A knock sent before the peer took the dial asks for nothing more.
  if (ends_.dials) knocked_->store(false, std::memory_order_release);
  return Status::Ok();
}

}  // namespace cohort::transport::rdma
