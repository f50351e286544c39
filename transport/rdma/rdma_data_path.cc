// The data path of an rdma connection: chunks out of the send queue into the
// peer's ring, slots of our ring into the posted receives, credits back.
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "transport/rdma/rdma_connection.h"

namespace cohort::transport::rdma {

Status RdmaConnection::consumeArrivals() {
  while (chunksArrived_ > ringHead_ && !recvs_.empty()) {
    const std::uint8_t* slot = buffers_.ring->data() + (ringHead_ % kRingSlots) * kSlotStride;
    PendingRecv& r = recvs_.front();
    COHORT_RETURN_IF_ERROR(deliver(r, slot));
    ++ringHead_;
    ++creditsOwed_;
    if (r.received == r.bytes) {
      recvs_.pop_front();
      ++recvsCompleted_;
    }
  }
  return Status::Ok();
}

Status RdmaConnection::deliver(PendingRecv& r, const std::uint8_t* slot) {
  const SlotHeader h = decodeSlotHeader(slot);
  if (h.messageBytes != r.bytes) {
    (void)postControl(ImmKind::kMismatch,
                      static_cast<std::uint32_t>(std::min<std::size_t>(r.bytes, kImmValueMask)));
    return makeError(ErrorCode::kMismatch,
                     "rdma {} <- {}: message {} is {} bytes but the receive posted for it is {} "
                     "bytes",
                     link_.local, link_.remote, r.seq, h.messageBytes, r.bytes);
  }
  if (h.messageSeq != r.seq || h.chunkBytes > kSlotPayload || h.chunkBytes > r.bytes - r.received ||
      (h.chunkBytes == 0 && r.bytes != 0) ||
      (r.reduces && h.chunkBytes % r.reduce.elementSize != 0)) {
    return protocolError(
        fmt::format("bad chunk: message {} chunk of {} bytes at offset {} of {}, "
                    "expected message {}",
                    h.messageSeq, h.chunkBytes, r.received, r.bytes, r.seq));
  }
  const std::uint8_t* payload = slot + kSlotHeaderBytes;
  if (h.chunkBytes > 0 && r.reduces) {
    r.reduce.fn(r.dst + r.received, r.accumulate + r.received, payload, h.chunkBytes,
                r.reduce.context);
  } else if (h.chunkBytes > 0) {
    std::memcpy(r.dst + r.received, payload, h.chunkBytes);
  }
  r.received += h.chunkBytes;
  return Status::Ok();
}

Status RdmaConnection::postChunks() {
  while (!broken_ && peerReady_ && !peerClosed_ && nextToPost_ < sends_.size() && credits_ > 0 &&
         writesInFlight_ < kSendDepth && sendQueueUsed_ + kReservedSignals < kSendQueueDepth) {
    PendingSend& s = sends_[nextToPost_];
    COHORT_RETURN_IF_ERROR(postChunk(s));
    if (s.chunksPosted == s.chunks) ++nextToPost_;
  }
  return Status::Ok();
}

Status RdmaConnection::postChunk(PendingSend& s) {
  const std::size_t offset = std::size_t{s.chunksPosted} * chunkBytes_;
  const std::size_t n = std::min(chunkBytes_, s.bytes - offset);
  // Slot `index` of the send area was last used by write chunksWritten_ -
  // kSendDepth, which has completed: fewer than kSendDepth writes are in flight.
  const std::size_t index = chunksWritten_ % kSendDepth;
  const MemoryRegion& area = buffers_.sendArea->region();
  std::uint8_t* header = buffers_.sendArea->data() + index * kSlotHeaderBytes;
  encodeSlotHeader(SlotHeader{s.bytes, static_cast<std::uint32_t>(n), s.seq}, header);
  ibv_sge sge[2];
  sge[0] = ibv_sge{reinterpret_cast<std::uintptr_t>(header), kSlotHeaderBytes, area.lkey};
  if (n > 0) {
    const std::uint8_t* src = s.data + offset;
    std::uint32_t lkey = s.lease.lkey;
    if (s.staged) {
      std::uint8_t* stage =
          buffers_.sendArea->data() + kSendDepth * kSlotHeaderBytes + index * kSlotPayload;
      std::memcpy(stage, src, n);
      src = stage;
      lkey = area.lkey;
    }
    sge[1] = ibv_sge{reinterpret_cast<std::uintptr_t>(src), static_cast<std::uint32_t>(n), lkey};
  }
  ibv_send_wr wr{};
  wr.wr_id = makeWrId(WorkTag::kData, chunksWritten_);
  wr.sg_list = sge;
  wr.num_sge = n > 0 ? 2 : 1;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(encodeImm(ImmKind::kData, chunksWritten_ & kImmValueMask));
  wr.wr.rdma.remote_addr = link_.ringAddr + (chunksWritten_ % link_.ringSlots) * link_.slotBytes;
  wr.wr.rdma.rkey = link_.ringRkey;
  if (int rc = qp_->postSend(&wr)) {
    return systemError(rc, fmt::format("rdma: ibv_post_send of a {}-byte chunk from {} to {}", n,
                                       link_.local, link_.remote));
  }
  ++chunksWritten_;
  --credits_;
  ++writesInFlight_;
  ++sendQueueUsed_;
  ++s.chunksPosted;
  return Status::Ok();
}

Status RdmaConnection::postControl(ImmKind kind, std::uint32_t value) {
  if (broken_) return Status::Ok();  // lost with the link; resume() restarts the protocol
  if (sendQueueUsed_ >= kSendQueueDepth) {
    return protocolError(fmt::format("send queue full ({} requests) for a {} signal",
                                     sendQueueUsed_, immKindName(kind)));
  }
  ibv_send_wr wr{};
  wr.wr_id = makeWrId(WorkTag::kControl, static_cast<std::uint64_t>(kind));
  wr.num_sge = 0;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(encodeImm(kind, value));
  wr.wr.rdma.remote_addr = link_.ringAddr;
  wr.wr.rdma.rkey = link_.ringRkey;
  if (int rc = qp_->postSend(&wr)) {
    return systemError(rc, fmt::format("rdma: ibv_post_send of a {} signal from {} to {}",
                                       immKindName(kind), link_.local, link_.remote));
  }
  ++sendQueueUsed_;
  return Status::Ok();
}

Status RdmaConnection::returnCredits() {
  // A closed peer reads no more credits.
  if (creditsOwed_ == 0 || peerClosed_ || sendQueueUsed_ + kReservedSignals >= kSendQueueDepth) {
    return Status::Ok();
  }
  COHORT_RETURN_IF_ERROR(postControl(ImmKind::kCredit, creditsOwed_));
  creditsOwed_ = 0;
  return Status::Ok();
}

}  // namespace cohort::transport::rdma
