#include "transport/shm/shm_connection.h"

#include <fmt/format.h>

#include <cstring>

#include "cohort/runtime.h"
#include "common/error.h"

namespace cohort::transport::shm {

namespace {
constexpr std::uint32_t kRingOk = 0, kRingMismatch = 1, kRingClosed = 2;
constexpr auto kAliveCheckEvery = std::chrono::milliseconds(200);
}  // namespace

ShmConnection::ShmConnection(ShmTransport* transport, const ShmPeer& peer)
    : transport_(transport),
      peer_(peer),
      out_(&peer.block->inbound[transport->self().localIndex]),
      in_(&transport->self().block->inbound[peer.localIndex]) {}

ShmConnection::~ShmConnection() {
  // Tell the peer (a receive it waits for will never come).
  out_->error.store(kRingClosed, std::memory_order_release);
  peer_.block->wake.notifyAll();
  for (auto& s : sends_) {
    if (s.bounce != nullptr) (void)runtime::hostFree(s.bounce);
  }
}

void ShmConnection::abort(const Status& why) {
  (void)fail(why);
  out_->error.store(kRingClosed, std::memory_order_release);
  peer_.block->wake.notifyAll();
}

std::string ShmConnection::describe() const {
  return fmt::format("shm rank {} (pid {})", peer_.rank, peer_.pid);
}

Status ShmConnection::postSend(const void* data, std::size_t bytes) {
  if (!error_.ok()) return error_;
  Send s{};
  s.desc.bytes = bytes;
  if (bytes > 0 && !transport_->refOf(data, &s.desc.where).ok()) {
    // Plain host memory: the peer cannot map it, so stage a pinned copy.
    COHORT_RETURN_IF_ERROR(runtime::hostMalloc(&s.bounce, bytes));
    std::memcpy(s.bounce, data, bytes);
    COHORT_RETURN_IF_ERROR(transport_->refOf(s.bounce, &s.desc.where));
  }
  sends_.push_back(s);
  ++sendsPosted_;
  publishSends();
  return Status::Ok();
}

Status ShmConnection::postRecv(void* dst, std::size_t bytes, const Reduction* reduce,
                               const void* accumulate) {
  if (!error_.ok()) return error_;
  Recv r{dst, bytes, reduce != nullptr ? *reduce : Reduction{}, reduce != nullptr,
         accumulate != nullptr ? accumulate : dst};
  recvs_.push_back(r);
  ++recvsPosted_;
  return Status::Ok();
}

void ShmConnection::publishSends() {
  bool published = false;
  while (sendsPublished_ < sendsPosted_ &&
         sendsPublished_ - out_->consumed.load(std::memory_order_acquire) < kRingEntries) {
    const Send& s = sends_[sendsPublished_ - sendsCompleted_];
    out_->desc[sendsPublished_ % kRingEntries] = s.desc;
    out_->posted.store(++sendsPublished_, std::memory_order_release);
    published = true;
  }
  if (published) peer_.block->wake.notifyAll();
}

Status ShmConnection::fail(Status s) {
  if (error_.ok()) error_ = std::move(s);
  return error_;
}

Status ShmConnection::checkRings(bool peerClosed) {
  const std::uint32_t theirs = in_->error.load(std::memory_order_acquire);
  const std::uint32_t mine = out_->error.load(std::memory_order_acquire);
  if (peerClosed && !idle()) {
    return fail(makeError(ErrorCode::kRemoteError,
                          "rank {} (pid {}) closed its connection to this rank", peer_.rank,
                          peer_.pid));
  }
  if (theirs == kRingMismatch || mine == kRingMismatch) {
    MessageRing* ring = mine == kRingMismatch ? out_ : in_;
    return fail(makeError(ErrorCode::kMismatch,
                          "message size mismatch on the shm link with rank {}: {} bytes sent, "
                          "{} bytes expected", peer_.rank, ring->mismatchBytes[0],
                          ring->mismatchBytes[1]));
  }
  return Status::Ok();
}

Status ShmConnection::checkAlive() {
  const auto now = std::chrono::steady_clock::now();
  if (now - lastAliveCheck_ < kAliveCheckEvery) return Status::Ok();
  lastAliveCheck_ = now;
  if (peer_.processGone()) {
    return fail(makeError(ErrorCode::kRemoteError, "remote rank {} died (process {} is gone)",
                          peer_.rank, peer_.pid));
  }
  return Status::Ok();
}

Status ShmConnection::deliver(const MessageDesc& desc, const Recv& r) {
  if (desc.bytes != r.bytes) {
    in_->mismatchBytes[0] = desc.bytes;
    in_->mismatchBytes[1] = r.bytes;
    in_->error.store(kRingMismatch, std::memory_order_release);
    peer_.block->wake.notifyAll();
    return checkRings();
  }
  if (r.bytes == 0) return Status::Ok();
  const void* src = peer_.translate(desc.where);
  if (r.hasReduce) {
    r.reduce.fn(r.dst, r.accumulate, src, r.bytes, r.reduce.context);
  } else {
    std::memcpy(r.dst, src, r.bytes);
  }
  return Status::Ok();
}

Status ShmConnection::progress() {
  if (!error_.ok()) return error_;
  // Whether the peer had closed, read before the counters: what it consumed and sent
  // before it closed is then in them. Read after them, a peer that consumed our last
  // send and closed in between would look as if it left with the send pending.
  const bool peerClosed = in_->error.load(std::memory_order_acquire) == kRingClosed;
  // A size mismatch stops everything at once, but when the peer's receive
  // found it, the messages that arrived before are delivered first (a
  // collective's argument check among them explains it). A peer that closed is
  // an error only for what is still pending after whatever it did consume and
  // send.
  if (in_->error.load(std::memory_order_acquire) == kRingMismatch) return checkRings();
  const bool peerFoundMismatch = out_->error.load(std::memory_order_acquire) == kRingMismatch;
  if (!peerFoundMismatch) {
    publishSends();
    const std::uint64_t consumed = out_->consumed.load(std::memory_order_acquire);
    COHORT_PROTOCOL_CHECK(consumed >= sendsCompleted_ && consumed <= sendsPublished_,
                          "rank {} consumed {} of the messages sent to it, of {} published "
                          "and {} seen consumed before",
                          peer_.rank, consumed, sendsPublished_, sendsCompleted_);
    while (sendsCompleted_ < consumed) {
      if (sends_.front().bounce != nullptr) (void)runtime::hostFree(sends_.front().bounce);
      sends_.pop_front();
      ++sendsCompleted_;
    }
  }
  bool delivered = false;
  if constexpr (kProtocolChecks) {
    const std::uint64_t posted = in_->posted.load(std::memory_order_acquire);
    COHORT_PROTOCOL_CHECK(posted >= recvsCompleted_ && posted - recvsCompleted_ <= kRingEntries,
                          "rank {} published {} messages here, of which {} were consumed: "
                          "more than the ring's {} entries are in flight, or fewer than consumed",
                          peer_.rank, posted, recvsCompleted_, kRingEntries);
  }
  while (recvsCompleted_ < recvsPosted_ &&
         in_->posted.load(std::memory_order_acquire) > recvsCompleted_) {
    COHORT_RETURN_IF_ERROR(deliver(in_->desc[recvsCompleted_ % kRingEntries], recvs_.front()));
    recvs_.pop_front();
    in_->consumed.store(++recvsCompleted_, std::memory_order_release);
    delivered = true;
  }
  if (delivered) peer_.block->wake.notifyAll();
  if (peerFoundMismatch) return checkRings();
  if (idle()) return Status::Ok();
  COHORT_RETURN_IF_ERROR(checkRings(peerClosed));
  return checkAlive();
}

WaitHint ShmConnection::waitHint() {
  WaitHint h;
  h.word = &transport_->self().block->wake;
  h.snapshot = h.word->snapshot();
  return h;
}

}  // namespace cohort::transport::shm
