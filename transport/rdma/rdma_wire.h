// The rdma data path's wire format, shared by both ends of a connection. Data
// moves by RDMA WRITE WITH IMMEDIATE into slots of the receiver's registered
// ring; each slot starts with a SlotHeader; the 32-bit immediate says what a
// write is (a data chunk, returned credits, or a control signal). Pure: no verbs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cohort::transport::rdma {

/// Slots in each receive ring; also the sender's initial credits.
constexpr std::uint32_t kRingSlots = 16;
/// Payload bytes per slot: a multiple of every element size a reduction uses.
constexpr std::size_t kSlotPayload = std::size_t{64} << 10;
constexpr std::size_t kSlotHeaderBytes = 16;
constexpr std::size_t kSlotStride = kSlotHeaderBytes + kSlotPayload;
/// Data writes in flight per connection (also the staging slots for host memory).
constexpr std::uint32_t kSendDepth = 16;
/// Send queue: data writes plus control messages.
constexpr std::uint32_t kSendQueueDepth = kSendDepth + 16;
/// Receive requests kept posted: the peer's data chunks (at most kRingSlots),
/// its credit messages (at most our kRingSlots in flight) and a few signals.
constexpr std::uint32_t kRecvDepth = 2 * kRingSlots + 16;
/// Completion queue: every posted send and receive can complete at once.
constexpr std::uint32_t kCqDepth = kSendQueueDepth + kRecvDepth;
/// Largest value an immediate carries.
constexpr std::uint32_t kImmValueMask = 0xFFFFFF;
/// Largest queue pair number and packet sequence number (24 bits).
constexpr std::uint32_t kMax24 = 0xFFFFFF;

enum class ImmKind : std::uint8_t {
  kData = 1,      // a chunk landed in the next ring slot; value = chunk number (24 bits)
  kCredit = 2,    // value = ring slots the receiver freed
  kReady = 3,     // the sender's queue pair reached RTS
  kReadyAck = 4,  // answer to kReady (lets a READY lost before our RTR be resent)
  kMismatch = 5,  // the receiver rejected a message size; value = its posted size (capped)
  kClose = 6,     // the sender is closing the connection
};

/// Immediate in host order: kind in the top 8 bits, value (<= kImmValueMask) below.
std::uint32_t encodeImm(ImmKind kind, std::uint32_t value);
/// False for an unknown kind (garbage or a protocol bug).
bool decodeImm(std::uint32_t imm, ImmKind* kind, std::uint32_t* value);
const char* immKindName(ImmKind kind);

/// The first kSlotHeaderBytes of every ring slot (little endian on the wire).
struct SlotHeader {
  std::uint64_t messageBytes = 0;  // size of the whole message
  std::uint32_t chunkBytes = 0;    // payload bytes in this slot
  std::uint32_t messageSeq = 0;    // message number on this connection (low 32 bits)
};
void encodeSlotHeader(const SlotHeader& header, std::uint8_t out[kSlotHeaderBytes]);
SlotHeader decodeSlotHeader(const std::uint8_t in[kSlotHeaderBytes]);

/// What a work request is, in the top byte of its wr_id.
enum class WorkTag : std::uint8_t { kRecv = 1, kData = 2, kControl = 3 };
inline std::uint64_t makeWrId(WorkTag tag, std::uint64_t value) {
  return (std::uint64_t{static_cast<std::uint8_t>(tag)} << 56) | (value & ((1ull << 56) - 1));
}
inline WorkTag wrIdTag(std::uint64_t wrId) { return static_cast<WorkTag>(wrId >> 56); }

/// Send queue entries kept free of data and credits for the one-off signals
/// (ready, ready-ack, mismatch, close).
constexpr std::uint32_t kReservedSignals = 4;

}  // namespace cohort::transport::rdma
