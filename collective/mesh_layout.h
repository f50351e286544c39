// The direct (mesh) algorithms' shared state: the layout of each member's shared
// region of the shared-memory transport (ShmPeer::region), which every member of
// the node maps. The counters are this rank's; the node-wide barrier counter and
// its wake word, and the eager broadcast ring, are used in the first member's
// region only. The region starts zero-filled, the state of every field before a
// rank's first call; it holds no pointers, only offsets and atomics. Below it,
// the protocol's invariants that debug builds check on it. Private to
// collective/.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common/error.h"
#include "common/wait.h"
#include "transport/shm/shm_transport.h"

namespace cohort::collective {

// The protocol's sizes (a change is a change of layout, so every member must be
// the same build; the transport checks that the regions' sizes agree).
/// Per post slot (the mesh posts at most this much per call), and the slots of
/// each rank's ring of posted calls.
constexpr std::size_t kStagingBytes = 16 << 10;
constexpr int kPostSlots = 8;
/// The ring of small broadcasts a root may run ahead with.
constexpr int kEagerSlots = 8;
constexpr std::size_t kEagerBytes = 16 << 10;

/// Per-call description a rank publishes. What every call writes and its peers
/// read (the sequence and the fingerprint) shares the first cache line with the
/// input; a staged call, which maps no buffers, touches that line only.
struct alignas(64) OpSlot {
  std::atomic<std::uint64_t> seq;  // op sequence this slot describes
  std::uint64_t fingerprint[4];    // collective, count, type/op, root: checked by peers
  transport::shm::SegmentRef input;
  transport::shm::SegmentRef output;
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

struct MeshRegion {
  alignas(64) std::atomic<std::uint64_t> arrive;  // the last barrier this rank arrived at
  alignas(64) std::atomic<std::uint64_t> depart;  // barriers after which it reads nothing
  alignas(64) std::atomic<std::uint64_t> shared;  // node-wide arrivals (first member's)
  alignas(64) WaitWord sharedWake;                // every wait on the others (first member's)
  OpSlot op[2];
  // This rank's eager broadcasts by ring slot, for the error text of a peer that
  // made another call there (its operation slot shows none).
  std::uint64_t eagerFingerprint[kEagerSlots][4];
  alignas(64) std::atomic<std::uint64_t> finished;  // posts this rank completed
  PostSlot post[kPostSlots];
  EagerSlot eager[kEagerSlots];  // first member's
};

// All zeros must be a valid state, and nothing needs destroying.
static_assert(std::is_standard_layout_v<MeshRegion> &&
              std::is_trivially_destructible_v<MeshRegion>);

/// The posted ring's invariant (COHORT_PROTOCOL_CHECKS builds), after the
/// waiter read posted call `call` from every member's post slot `slot`: no
/// member wrote a later call there meanwhile (it may only once this rank
/// completed `call`), or what was read is a mix of two calls.
inline void checkPostSlotKept(const std::vector<const transport::shm::ShmPeer*>& members,
                              std::size_t slot, std::uint64_t call, int me) {
  for (const transport::shm::ShmPeer* m : members) {
    const auto* region = static_cast<const MeshRegion*>(m->region);
    const std::uint64_t holds = region->post[slot].call.load(std::memory_order_acquire);
    COHORT_PROTOCOL_CHECK(holds == call,
                          "rank {}'s post slot {} holds call {} while rank {} read call {} there",
                          m->rank, slot, holds, me, call);
  }
}

/// The barriers' invariant, checked in builds with COHORT_PROTOCOL_CHECKS once a
/// wait saw the node-wide count reach `barrier` arrivals per member: every
/// member arrived at `barrier` itself (or left: its count is then all ones).
/// A member behind means an arrival was counted twice, or by a rank that made
/// no such call, and the waiter would read buffers nobody published yet.
/// `me` is the waiter's rank.
inline void checkBarrierReached(const std::vector<const transport::shm::ShmPeer*>& members,
                                std::uint64_t barrier, int me) {
  for (const transport::shm::ShmPeer* m : members) {
    const std::uint64_t at =
        static_cast<const MeshRegion*>(m->region)->arrive.load(std::memory_order_acquire);
    COHORT_PROTOCOL_CHECK(at >= barrier,
                          "rank {} passed barrier {} of its node, but rank {} arrived at barrier "
                          "{} only: an arrival was counted twice, or by a rank that made no "
                          "such call",
                          me, barrier, m->rank, at);
  }
}

}  // namespace cohort::collective
