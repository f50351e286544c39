// The shared control block each rank of a node publishes for the shared-memory
// transport: liveness, wake-up word, barrier counters for direct (mesh)
// collectives, inbound message rings from every local peer, and the ring of
// posted small collectives. It lives in pinned host memory (a memfd segment) and
// every local peer maps it; it holds no pointers, only offsets and atomics.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/wait.h"

namespace cohort::transport::shm {

constexpr int kMaxLocalRanks = 64;
constexpr int kRingEntries = 64;
// Per post slot (the mesh posts at most this much per call), and the slots of
// each rank's ring of posted calls.
constexpr std::size_t kStagingBytes = 16 << 10;
constexpr int kPostSlots = 8;
// The ring of small broadcasts a root may run ahead with (the mesh keeps it in
// the first member's block).
constexpr int kEagerSlots = 8;
constexpr std::size_t kEagerBytes = 16 << 10;
constexpr std::uint32_t kBlockMagic = 0xC0B10C50u;  // changes with the layout

/// Why a rank left its group (ControlBlock::departure), for its peers' errors.
enum class Departure : std::uint32_t { kNone = 0, kFailed = 1, kAborted = 2, kDestroyed = 3 };

/// Where a message or buffer lives: a segment of the owner process (device id, or
/// -1 for its pinned host pool) and an offset in it.
struct SegmentRef {
  std::int32_t device;
  std::uint32_t pad;
  std::uint64_t offset;
};

struct MessageDesc {
  std::uint64_t bytes;
  SegmentRef where;
};

/// Messages from one sender to the block's owner. The sender advances `posted`,
/// the receiver `consumed`; either may set `error` (then both ends fail).
struct alignas(64) MessageRing {
  alignas(64) std::atomic<std::uint64_t> posted;
  alignas(64) std::atomic<std::uint64_t> consumed;
  std::atomic<std::uint32_t> error;  // 0 ok, 1 size mismatch, 2 closed
  std::uint64_t mismatchBytes[2];    // sender's, receiver's
  MessageDesc desc[kRingEntries];
};

/// Per-op description a rank publishes for direct (mesh) collectives. What
/// every call writes and its peers read (the sequence and the fingerprint)
/// shares the first cache line with the input; a staged call, which maps no
/// buffers, touches that line only.
struct alignas(64) OpSlot {
  std::atomic<std::uint64_t> seq;  // op sequence this slot describes
  std::uint64_t fingerprint[4];    // collective, count, type/op, root: checked by peers
  SegmentRef input;
  SegmentRef output;
};

/// One small broadcast in the eager ring: the root's data and which call it is.
struct alignas(64) EagerSlot {
  std::uint64_t barrier;         // the root's barrier number for this call
  std::uint64_t fingerprint[4];  // the root's call, checked by the others
  alignas(64) unsigned char data[kEagerBytes];
};

/// One small collective a rank posted: its input and which call it is.
struct alignas(64) PostSlot {
  std::atomic<std::uint64_t> call;  // the post (1, 2, ...) whose input this slot holds
  std::uint64_t fingerprint[4];     // that call, checked by the others
  alignas(64) unsigned char data[kStagingBytes];
};

struct ControlBlock {
  std::uint32_t magic;
  std::int32_t pid;
  std::int32_t rank;
  alignas(64) WaitWord wake;                     // notified whenever something for us changes
  alignas(64) std::atomic<std::uint64_t> arrive;  // mesh: last op seq this rank arrived at
  std::atomic<std::uint32_t> departure;           // a Departure, set before arrive says it left
  alignas(64) std::atomic<std::uint64_t> depart;  // mesh: barriers after which it reads nothing
  alignas(64) std::atomic<std::uint64_t> shared;  // node-wide counter (used in rank 0's block)
  alignas(64) WaitWord sharedWake;
  OpSlot op[2];
  // The mesh: this rank's eager broadcasts by ring slot, for the error text of
  // a peer that made another call there (its operation slot shows none).
  std::uint64_t eagerFingerprint[kEagerSlots][4];
  MessageRing inbound[kMaxLocalRanks];  // indexed by the sender's local index
  alignas(64) std::atomic<std::uint64_t> finished;  // mesh: posts this rank completed
  PostSlot post[kPostSlots];
  EagerSlot eager[kEagerSlots];
};

}  // namespace cohort::transport::shm
