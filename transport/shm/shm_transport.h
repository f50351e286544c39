// The shared-memory transport (the emulated PCIe/HCCS link between the cards of
// one node). Each rank publishes a ControlBlock and its device and pinned-host
// segments; peers map them once, so any buffer in a segment is reachable by
// (segment, offset) and a message costs one copy. Waits spin, yield, then sleep
// on the block's futex word. Beside messages it offers a layer above the
// primitives of direct algorithms: every local peer's segments and shared region
// mapped here, and its liveness (departure); synchronisation over them is
// common/wait.h's WaitWord and atomics in the region.
#pragma once

#include <signal.h>

#include <cerrno>
#include <map>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cohort/runtime.h"
#include "common/process.h"
#include "transport/shm/control_block.h"
#include "transport/transport.h"

namespace cohort::transport::shm {

/// A local peer as mapped into this process.
struct ShmPeer {
  int rank = -1;
  int localIndex = -1;
  std::int32_t pid = 0;
  ControlBlock* block = nullptr;
  void* region = nullptr;      // its shared region (TransportContext::shmRegionBytes)
  char* deviceBase = nullptr;  // the peer's device segment, mapped here
  char* hostBase = nullptr;    // the peer's pinned-host segment, mapped here
  /// A pointer, in this process, to the peer's buffer at `ref`.
  void* translate(const SegmentRef& ref) const {
    return (ref.device < 0 ? hostBase : deviceBase) + ref.offset;
  }
  // Liveness, the one check every user of the peer makes: whether its process
  // is gone (its memory stays mapped here), and why it left its group, if it did.
  bool processGone() const { return processEnded(pid); }
  Departure departure() const {
    return static_cast<Departure>(block->departure.load(std::memory_order_relaxed));
  }
  /// Says (for this rank's own mapping) why it leaves, with `cause` in words;
  /// the first reason stays.
  void markDeparted(Departure why, const std::string& cause = "") const {
    if (block->departure.load(std::memory_order_acquire) != 0) return;
    const std::size_t n = std::min(cause.size(), kCauseBytes - 1);
    std::memcpy(block->cause, cause.data(), n);
    block->cause[n] = '\0';
    std::uint32_t none = 0;
    block->departure.compare_exchange_strong(none, static_cast<std::uint32_t>(why),
                                             std::memory_order_release);
  }
  /// The cause the peer gave when it left (empty if none).
  std::string departureCause() const {
    if (block->departure.load(std::memory_order_acquire) == 0) return "";
    return std::string(block->cause, strnlen(block->cause, kCauseBytes));
  }
};

/// One per communicator rank. Not thread-safe (the communicator drives it).
class ShmTransport : public Transport {
 public:
  static Status create(const TransportContext& context, std::unique_ptr<ShmTransport>* out);
  ~ShmTransport() override;

  const char* name() const override { return "shm"; }
  std::string rejectReason(const PeerInfo& peer) const override;
  Status setup(Bytes* blob) override;
  Status connect(const PeerInfo& peer, const Bytes& peerBlob,
                 std::unique_ptr<Connection>* out) override;

  /// For direct collectives: a local peer (this rank too) as mapped here.
  const ShmPeer* peer(int rank) const;
  const ShmPeer& self() const { return self_; }
  /// Where one of this rank's buffers lies; kInvalidPointer outside segments.
  Status refOf(const void* p, SegmentRef* ref) const;

 private:
  explicit ShmTransport(const TransportContext& context) : context_(context) {}
  Status mapPeer(const PeerInfo& info, const Bytes& blob, ShmPeer* out);

  TransportContext context_;
  // In a segment of its own (runtime::sharedAlloc), mapped by every peer, those in this
  // process too: a peer that still looks at it after this rank left (to find it gone)
  // reads its last state, never memory given to something else.
  ControlBlock* block_ = nullptr;
  runtime::MemHandle blockHandle_{};
  ShmPeer self_;
  std::map<int, ShmPeer> peers_;
  std::vector<void*> imports_;   // mappings to memClose
  std::vector<void*> retained_;  // same-process peers' control blocks, to sharedFree
};

}  // namespace cohort::transport::shm
