// RdmaConnection in retry mode (rdma_rejoin.h has the design): noticing a
// break, replacing the queue pair within the policy's limits, and resuming the
// data path where the peer's ring stands.
#include <algorithm>

#include "common/error.h"
#include "common/log.h"
#include "transport/rdma/rdma_connection.h"

namespace cohort::transport::rdma {

Status RdmaConnection::onBreak(const Status& cause, bool counts) {
  const std::uint64_t op = retry_->operations != nullptr ? retry_->operations->load() : 0;
  if (op != opAtBreak_) {
    opAtBreak_ = op;
    breaksInOp_ = 0;
  }
  if (counts && ++breaksInOp_ > retry_->policy.maxCnt) {
    return giveUp(makeError(ErrorCode::kConnectionError,
                            "{}; the link broke {} times in one operation, and "
                            "HCCL_OP_RETRY_PARAMS allows {} (MaxCnt)",
                            cause.message(), breaksInOp_, retry_->policy.maxCnt));
  }
  broken_ = true;
  brokenAt_ = nextTry_ = std::chrono::steady_clock::now();
  breakCause_ = cause;
  tries_ = 0;
  lastTry_.clear();
  qp_->toError();  // every request still posted completes, flushed
  COHORT_LOG(kWarn, "transport",
             "rdma {} <-> {}: the link broke ({}); re-establishing it (HCCL_OP_RETRY_ENABLE)",
             link_.local, link_.remote, cause.message());
  return Status::Ok();
}

Status RdmaConnection::giveUp(Status why) {
  retry_->rejoiner->giveUp();
  return fail(std::move(why));
}

Status RdmaConnection::keepLinkUp() {
  if (!broken_) {
    if (!retry_->rejoiner->peerAsked()) return Status::Ok();
    // The peer saw the link break; this end may not have (it wrote nothing).
    return onBreak(
        makeError(ErrorCode::kConnectionError, "rdma {} <-> {}: rank {} re-establishes the link",
                  link_.local, link_.remote, link_.peer),
        false);
  }
  const auto now = std::chrono::steady_clock::now();
  const auto held = now - brokenAt_;
  if (held >= retry_->policy.hold) {
    return giveUp(makeError(ErrorCode::kConnectionError,
                            "rdma {} <-> {}: the link broke ({}) and was not re-established "
                            "within {} ms (HCCL_OP_RETRY_PARAMS HoldTime; {} attempt(s){}{})",
                            link_.local, link_.remote, breakCause_.message(),
                            retry_->policy.hold.count(), tries_,
                            lastTry_.empty() ? "" : ", the last: ", lastTry_));
  }
  // The old queue pair first flushes every request: what arrived is final.
  if (sendQueueUsed_ > 0 || recvsOutstanding_ > 0) return Status::Ok();
  const bool attempt = now >= nextTry_;
  if (attempt) {
    ++tries_;
    nextTry_ = retry_->policy.nextAttempt(now);
  }
  const auto limit = retry_->policy.attemptLimit(held);
  RejoinStep step = RejoinStep::kWaiting;
  bool reached = false;
  std::unique_ptr<QueuePair> qp;
  ResumePoint theirs;
  Status s = retry_->rejoiner->step(ResumePoint{chunksArrived_, ringHead_}, attempt, limit, &step,
                                    &reached, &qp, &theirs);
  // The peer's process answered: the link is up again, the hold starts anew.
  if (reached) brokenAt_ = std::chrono::steady_clock::now();
  if (step == RejoinStep::kPeerGone) {
    return giveUp(makeError(ErrorCode::kRemoteError,
                            "rdma {} <-> {}: the link broke ({}) and rank {} refuses to "
                            "re-establish it: {}",
                            link_.local, link_.remote, breakCause_.message(), link_.peer,
                            s.message()));
  }
  if (!s.ok()) {
    lastTry_ = s.message();
    COHORT_LOG(kInfo, "transport", "rdma {} <-> {}: re-establishing the link failed: {}",
               link_.local, link_.remote, lastTry_);
    return Status::Ok();
  }
  if (step == RejoinStep::kJoined) return resume(theirs, std::move(qp));
  return Status::Ok();
}

Status RdmaConnection::resume(const ResumePoint& theirs, std::unique_ptr<QueuePair> qp) {
  if (theirs.consumed > theirs.arrived || theirs.arrived - theirs.consumed > link_.ringSlots) {
    return protocolError(fmt::format("after a break the peer says it consumed {} of {} chunks",
                                     theirs.consumed, theirs.arrived));
  }
  COHORT_RETURN_IF_ERROR(rewindSends(theirs.arrived));
  // The peer's ring holds what arrived and it did not consume yet; our own
  // unreturned credits are in the consumed count we sent it.
  credits_ = link_.ringSlots - static_cast<std::uint32_t>(theirs.arrived - theirs.consumed);
  creditsOwed_ = 0;
  writesInFlight_ = 0;
  sendQueueUsed_ = 0;
  recvsOutstanding_ = kRecvDepth;
  stash_.clear();
  armed_ = false;
  qp_ = std::move(qp);
  peerReady_ = false;
  readyAckSent_ = false;
  broken_ = false;
  ++reconnections_;
  COHORT_LOG(kInfo, "transport",
             "rdma {} <-> {}: link re-established (new qpn 0x{:x}, {} replacement(s)); writing "
             "again from chunk {}",
             link_.local, link_.remote, qp_->qpNumber(), reconnections_, chunksWritten_);
  return postControl(ImmKind::kReady, 0);
}

Status RdmaConnection::rewindSends(std::uint64_t peerArrived) {
  std::uint64_t posted = 0;
  for (const PendingSend& s : sends_) posted += s.chunksPosted;
  std::uint64_t at = chunksWritten_ - posted;  // the first chunk of sends_.front()
  // Every write that completed here arrived there (RC): the peer cannot lack one.
  const std::uint64_t done = at + (sends_.empty() ? 0 : sends_.front().chunksDone);
  if (peerArrived > chunksWritten_ || peerArrived < done) {
    return protocolError(fmt::format(
        "after a break the peer says {} chunks arrived; this end wrote {}, {} of them completed",
        peerArrived, chunksWritten_, done));
  }
  while (!sends_.empty() && peerArrived >= at + sends_.front().chunks) {
    at += sends_.front().chunks;
    cache_->release(sends_.front().lease);
    sends_.pop_front();
    ++sendsCompleted_;
  }
  nextToPost_ = sends_.size();
  for (std::size_t i = 0; i < sends_.size(); ++i) {
    PendingSend& s = sends_[i];
    const std::uint64_t arrived =
        peerArrived > at ? std::min<std::uint64_t>(peerArrived - at, s.chunks) : 0;
    s.chunksPosted = s.chunksDone = static_cast<std::uint32_t>(arrived);
    if (s.chunksPosted < s.chunks && nextToPost_ == sends_.size()) nextToPost_ = i;
    at += s.chunks;
  }
  chunksWritten_ = peerArrived;
  return Status::Ok();
}

}  // namespace cohort::transport::rdma
