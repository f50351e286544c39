#include "transport/rdma/rdma_wire.h"

namespace cohort::transport::rdma {

namespace {

void putLe(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint64_t getLe(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

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
  putLe(out, header.messageBytes, 8);
  putLe(out + 8, header.chunkBytes, 4);
  putLe(out + 12, header.messageSeq, 4);
}

SlotHeader decodeSlotHeader(const std::uint8_t in[kSlotHeaderBytes]) {
  SlotHeader h;
  h.messageBytes = getLe(in, 8);
  h.chunkBytes = static_cast<std::uint32_t>(getLe(in + 8, 4));
  h.messageSeq = static_cast<std::uint32_t>(getLe(in + 12, 4));
  return h;
}

}  // namespace cohort::transport::rdma
