// The shared control block each rank of a node publishes for the shared-memory
// transport: liveness, the wake-up word and the inbound message rings from every
// local peer, followed by the rank's shared region, bytes that a layer above lays
// out for itself (the collective layer's direct algorithms keep their counters
// and slots there). It lives in pinned host memory (a memfd segment) and every
// local peer maps it; it holds no pointers, only offsets and atomics.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/wait.h"

namespace cohort::transport::shm {

constexpr int kMaxLocalRanks = 64;
constexpr int kRingEntries = 64;
constexpr std::uint32_t kBlockMagic = 0xC0B10C51u;  // changes with the layout

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

/// The longest failure text a block keeps (ControlBlock::cause).
constexpr std::size_t kCauseBytes = 512;

/// The fixed part of a rank's block; its shared region follows at regionOffset.
struct ControlBlock {
  std::uint32_t magic;
  std::int32_t pid;
  std::int32_t rank;
  std::uint32_t regionBytes;  // the size of the shared region after the block
  alignas(64) WaitWord wake;  // notified whenever something for us changes
  // A Departure: why this rank left (written once, before the layer above says
  // in its region that it left).
  alignas(64) std::atomic<std::uint32_t> departure;
  // Why, in words, when it failed (NUL-terminated; written before departure):
  // what its node's peers name when the job's store cannot be reached.
  char cause[kCauseBytes];
  MessageRing inbound[kMaxLocalRanks];  // indexed by the sender's local index
};

/// Where a block's shared region starts (zero-filled when the block is made).
constexpr std::size_t kRegionOffset = (sizeof(ControlBlock) + 4095) / 4096 * 4096;

}  // namespace cohort::transport::shm
