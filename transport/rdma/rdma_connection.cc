// Lifecycle, posting and completion handling of an rdma connection; the data
// path (chunks out, slots in) is in rdma_data_path.cc.
#include "transport/rdma/rdma_connection.h"

#include <arpa/inet.h>

#include <algorithm>

#include "cohort/runtime.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/rdma/rdma_completion.h"

namespace cohort::transport::rdma {

Status postInitialReceives(QueuePair& qp) {
  for (std::uint32_t i = 0; i < kRecvDepth; ++i) {
    ibv_recv_wr wr{};
    wr.wr_id = makeWrId(WorkTag::kRecv, i);
    if (int rc = qp.postRecv(&wr)) {
      return systemError(
          rc, fmt::format("ibv_post_recv {} of {} on qpn 0x{:x}", i, kRecvDepth, qp.qpNumber()));
    }
  }
  return Status::Ok();
}

RdmaConnection::RdmaConnection(RdmaLink link, std::unique_ptr<QueuePair> qp, RdmaBuffers buffers,
                               std::shared_ptr<RegistrationCache> cache,
                               std::unique_ptr<RdmaResilience> resilience)
    : link_(std::move(link)),
      cache_(std::move(cache)),
      buffers_(std::move(buffers)),
      qp_(std::move(qp)),
      chunkBytes_(std::min<std::size_t>(link_.slotBytes - kSlotHeaderBytes, kSlotPayload)),
      credits_(link_.ringSlots),
      retry_(std::move(resilience)) {
  COHORT_CHECK(link_.slotBytes > kSlotHeaderBytes);
  COHORT_CHECK_LE(link_.ringSlots, kRingSlots);
  COHORT_CHECK(buffers_.ring && buffers_.ring->length() >= RdmaBuffers::ringBytes());
  COHORT_CHECK(buffers_.sendArea && buffers_.sendArea->length() >= RdmaBuffers::sendAreaBytes());
}

RdmaConnection::~RdmaConnection() {
  // Tell the peer (unless it left first), and give the signal a moment to leave
  // before the queue pair is destroyed (destroying it would discard the request).
  if (error_.ok() && !peerClosed_ && postControl(ImmKind::kClose, 0).ok()) {
    const Deadline deadline = Deadline::afterMs(200);
    while (sendQueueUsed_ > 0 && !deadline.expired() && pollCompletions().ok()) {
    }
  }
  for (const PendingSend& s : sends_) cache_->release(s.lease);
}

void RdmaConnection::abort(const Status& why) {
  // The queue pair lives on until destruction: the signal leaves on its own.
  if (error_.ok() && !peerClosed_) (void)postControl(ImmKind::kClose, 0);
  (void)fail(why);
}

Status RdmaConnection::start() {
  Status s = postControl(ImmKind::kReady, 0);
  return s.ok() ? s : fail(std::move(s));
}

Status RdmaConnection::postSend(const void* data, std::size_t bytes) {
  if (!error_.ok()) return error_;
  if (bytes > 0 && data == nullptr) {
    return makeError(ErrorCode::kInvalidArgument, "rdma send of {} bytes to {}: null buffer", bytes,
                     link_.remote);
  }
  PendingSend s{};
  s.data = static_cast<const std::uint8_t*>(data);
  s.bytes = bytes;
  s.seq = static_cast<std::uint32_t>(sendsPosted_);
  s.chunks =
      static_cast<std::uint32_t>(std::max<std::size_t>(1, (bytes + chunkBytes_ - 1) / chunkBytes_));
  COHORT_RETURN_IF_ERROR(chooseSource(s));
  sends_.push_back(s);
  ++sendsPosted_;
  return progress();
}

Status RdmaConnection::chooseSource(PendingSend& s) {
  s.staged = true;
  runtime::PointerAttributes a;
  if (s.bytes == 0 || !runtime::pointerGetAttributes(s.data, &a).ok() || !a.allocationBase ||
      !(a.isDevice || a.isPinnedHost)) {
    return Status::Ok();  // plain host memory may be unmapped and reused: copy it
  }
  // Runtime memory keeps its pages while mapped: register it once, send in place.
  Status r = cache_->acquire(s.data, s.bytes, a.allocationBase, a.allocationSize, &s.lease);
  if (r.code() == ErrorCode::kInvalidArgument) return r;
  s.staged = !r.ok();
  if (!r.ok() && !warnedStaging_) {
    warnedStaging_ = true;
    COHORT_LOG(kWarn, "transport", "{}; staging sends to {} instead", r.toString(), link_.remote);
  }
  return Status::Ok();
}

Status RdmaConnection::postRecv(void* dst, std::size_t bytes, const Reduction* reduce,
                                const void* accumulate) {
  if (!error_.ok()) return error_;
  if (bytes > 0 && dst == nullptr) {
    return makeError(ErrorCode::kInvalidArgument, "rdma receive of {} bytes from {}: null buffer",
                     bytes, link_.remote);
  }
  if (reduce && (!reduce->fn || reduce->elementSize == 0 || bytes % reduce->elementSize != 0)) {
    return makeError(ErrorCode::kInvalidArgument,
                     "rdma receive of {} bytes from {}: not a whole number of {}-byte elements "
                     "(or no reduction function)",
                     bytes, link_.remote, reduce->elementSize);
  }
  PendingRecv r{};
  r.dst = static_cast<std::uint8_t*>(dst);
  r.bytes = bytes;
  r.seq = static_cast<std::uint32_t>(recvsPosted_);
  r.reduces = reduce != nullptr;
  if (reduce) r.reduce = *reduce;
  r.accumulate = static_cast<const std::uint8_t*>(accumulate ? accumulate : dst);
  recvs_.push_back(r);
  ++recvsPosted_;
  return progress();
}

Status RdmaConnection::progress() {
  if (!error_.ok()) return error_;
  Status s = pollCompletions();
  if (s.ok() && retry_) s = keepLinkUp();
  if (s.ok() && broken_) return s;  // nothing moves until the link is back
  if (s.ok()) s = consumeArrivals();
  if (s.ok()) s = postChunks();
  if (s.ok()) s = returnCredits();
  if (s.ok()) s = checkPeerClosed();
  return s.ok() ? s : fail(std::move(s));
}

WaitHint RdmaConnection::waitHint() {
  WaitHint never;  // a snapshot the word never had: the waiter does not sleep
  never.word = &neverSleep_;
  never.snapshot = neverSleep_.snapshot() + 1;
  if (!error_.ok() || !stash_.empty()) return never;
  if (broken_) return never;  // re-establishing the link polls its side channel
  WaitHint hint;
  hint.fd = qp_->armNotify();
  armed_ = true;
  // Completions queued before arming raise no event: take them now.
  ibv_wc wc[16];
  const int n = qp_->poll(16, wc);
  if (n > 0) stash_.insert(stash_.end(), wc, wc + n);
  return n != 0 ? never : hint;
}

Status RdmaConnection::pollCompletions() {
  if (armed_) {
    qp_->drainNotify();
    armed_ = false;
  }
  std::vector<ibv_wc> stashed;
  stashed.swap(stash_);
  for (const ibv_wc& wc : stashed) COHORT_RETURN_IF_ERROR(onCompletion(wc));
  ibv_wc wc[16];
  for (;;) {
    const int n = qp_->poll(16, wc);
    if (n < 0) {
      return makeError(ErrorCode::kSystemError, "rdma: ibv_poll_cq failed ({}) between {} and {}",
                       n, link_.local, link_.remote);
    }
    for (int i = 0; i < n; ++i) COHORT_RETURN_IF_ERROR(onCompletion(wc[i]));
    if (n < 16) return Status::Ok();
  }
}

namespace {

// What a link that broke or went silent ends its requests with (the peer's
// process may well be alive); the rest are this rank's or the peer's bugs.
bool linkFailure(ibv_wc_status status) {
  return status == IBV_WC_RETRY_EXC_ERR || status == IBV_WC_WR_FLUSH_ERR ||
         status == IBV_WC_BAD_RESP_ERR;
}

}  // namespace

Status RdmaConnection::onCompletion(const ibv_wc& wc) {
  const WorkTag tag = wrIdTag(wc.wr_id);
  if (wc.status != IBV_WC_SUCCESS) {
    if (tag == WorkTag::kRecv) --recvsOutstanding_;
    if (tag == WorkTag::kData) --writesInFlight_;
    if (tag != WorkTag::kRecv) --sendQueueUsed_;
    if (broken_) return Status::Ok();  // the rest of a broken queue pair, flushed
    const char* op = tag == WorkTag::kRecv   ? "receive"
                     : tag == WorkTag::kData ? "write of a data chunk"
                                             : "write of a control signal";
    Status cause = completionStatus(wc.status, wc.vendor_err, op, link_.local, link_.remote);
    if (retry_ && linkFailure(wc.status)) return onBreak(cause, true);
    return cause;
  }
  switch (tag) {
    case WorkTag::kRecv: {
      --recvsOutstanding_;
      if (!broken_) {
        ibv_recv_wr wr{};
        wr.wr_id = wc.wr_id;
        if (int rc = qp_->postRecv(&wr)) {
          return systemError(rc, fmt::format("rdma: ibv_post_recv on {}", link_.local));
        }
        ++recvsOutstanding_;
      }
      if (!(wc.wc_flags & IBV_WC_WITH_IMM)) return protocolError("a receive without immediate");
      return onSignal(ntohl(wc.imm_data));
    }
    case WorkTag::kData:
      --writesInFlight_;
      --sendQueueUsed_;
      return onSendDone(wc.wr_id);
    case WorkTag::kControl:
      --sendQueueUsed_;
      return Status::Ok();
  }
  return protocolError(fmt::format("completion with unknown work request id 0x{:x}", wc.wr_id));
}

Status RdmaConnection::onSendDone(std::uint64_t wrId) {
  if (sends_.empty() || sends_.front().chunksDone >= sends_.front().chunksPosted) {
    return protocolError(fmt::format("write 0x{:x} completed with no chunk outstanding", wrId));
  }
  PendingSend& s = sends_.front();
  if (++s.chunksDone < s.chunks) return Status::Ok();
  cache_->release(s.lease);
  sends_.pop_front();
  --nextToPost_;  // the popped send was fully posted
  ++sendsCompleted_;
  return Status::Ok();
}

Status RdmaConnection::onSignal(std::uint32_t imm) {
  ImmKind kind;
  std::uint32_t value;
  if (!decodeImm(imm, &kind, &value)) {
    return protocolError(fmt::format("unknown immediate 0x{:08x}", imm));
  }
  switch (kind) {
    case ImmKind::kData:
      if (value != (chunksArrived_ & kImmValueMask)) {
        return protocolError(fmt::format("chunk {} arrived where chunk {} was expected", value,
                                         chunksArrived_ & kImmValueMask));
      }
      if (++chunksArrived_ - ringHead_ > kRingSlots)
        return protocolError("the peer overran the ring");
      return Status::Ok();
    case ImmKind::kCredit:
      credits_ += value;
      if (credits_ > link_.ringSlots) {
        return protocolError(
            fmt::format("{} credits for a ring of {} slots", credits_, link_.ringSlots));
      }
      return Status::Ok();
    case ImmKind::kReady:
      // Answering makes a READY of ours that was dropped (sent before the peer
      // reached RTR) be resent at once: the gap draws a sequence NAK.
      if (!readyAckSent_) {
        readyAckSent_ = true;
        COHORT_RETURN_IF_ERROR(postControl(ImmKind::kReadyAck, 0));
      }
      peerReady_ = true;
      return Status::Ok();
    case ImmKind::kReadyAck:
      peerReady_ = true;
      return Status::Ok();
    case ImmKind::kMismatch:
      return makeError(ErrorCode::kMismatch,
                       "rdma {} -> {}: the peer rejected a message from this rank: its receive "
                       "was posted for {}{} bytes, a different size",
                       link_.local, link_.remote, value == kImmValueMask ? "at least " : "", value);
    case ImmKind::kClose:
      peerClosed_ = true;
      return Status::Ok();
  }
  return Status::Ok();
}

Status RdmaConnection::checkPeerClosed() const {
  if (!peerClosed_) return Status::Ok();
  const bool recvStarved = !recvs_.empty() && chunksArrived_ == ringHead_;
  if (!recvStarved && sends_.empty()) return Status::Ok();
  return makeError(ErrorCode::kRemoteError,
                   "rdma {} <-> {}: the peer closed the connection with {} send(s) and {} "
                   "receive(s) of this rank pending",
                   link_.local, link_.remote, sends_.size(), recvs_.size());
}

Status RdmaConnection::protocolError(const std::string& what) const {
  return makeError(ErrorCode::kInternal, "rdma {} <-> {}: protocol error: {}", link_.local,
                   link_.remote, what);
}

Status RdmaConnection::fail(Status status) {
  if (error_.ok()) {
    error_ = std::move(status);
    COHORT_LOG(kWarn, "transport", "{}", error_.toString());
  }
  return error_;
}

}  // namespace cohort::transport::rdma
