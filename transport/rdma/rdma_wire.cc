#include "transport/rdma/rdma_wire.h"

#include "transport/little_endian.h"

namespace cohort::transport::rdma {

std::uint32_t encodeImm(ImmKind kind, std::uint32_t value) {
  return (std::uint32_t{static_cast<std::uint8_t>(kind)} << 24) | (value & kImmValueMask);
}

bool decodeImm(std::uint32_t imm, ImmKind* kind, std::uint32_t* value) {
  const std::uint32_t k = imm >> 24;
  if (k < static_cast<std::uint32_t>(ImmKind::kData) ||
      k > static_cast<std::uint32_t>(ImmKind::kClose)) {
    return false;
  }
  *kind = static_cast<ImmKind>(k);
  *value = imm & kImmValueMask;
  return true;
}

const char* immKindName(ImmKind kind) {
  switch (kind) {
    case ImmKind::kData:
      return "data";
    case ImmKind::kCredit:
      return "credit";
    case ImmKind::kReady:
      return "ready";
    case ImmKind::kReadyAck:
      return "ready-ack";
    case ImmKind::kMismatch:
      return "mismatch";
    case ImmKind::kClose:
      return "close";
  }
  return "unknown";
}

void encodeSlotHeader(const SlotHeader& header, std::uint8_t out[kSlotHeaderBytes]) {
  storeLe(out, header.messageBytes, 8);
  storeLe(out + 8, header.chunkBytes, 4);
  storeLe(out + 12, header.messageSeq, 4);
}

SlotHeader decodeSlotHeader(const std::uint8_t in[kSlotHeaderBytes]) {
  SlotHeader h;
  h.messageBytes = loadLe(in, 8);
  h.chunkBytes = static_cast<std::uint32_t>(loadLe(in + 8, 4));
  h.messageSeq = static_cast<std::uint32_t>(loadLe(in + 12, 4));
  return h;
}

}  // namespace cohort::transport::rdma
