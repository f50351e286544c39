// Direct ("mesh") collectives among the ranks of one node: every rank maps every
// other's buffers (shared-memory transport), so an operation is one pass over the
// data between two node-wide barriers. Up to a few KiB, data goes through
// double-buffered staging slots instead, with one barrier per call; a small
// broadcast goes through a ring of slots that its root fills without waiting
// (its readers wait for the root only). With more than two ranks per processor,
// a larger broadcast's ranks copy the root's buffer themselves and only the
// root waits for them.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collective/op.h"
#include "common/wait.h"
#include "transport/shm/shm_transport.h"

namespace cohort::collective {

/// Owned by the communicator; used from its stream's worker thread only.
class Mesh {
 public:
  /// `members[i]` is local index i (self included); all ranks of the group are on
  /// this node. `scratch(bytes)` returns device memory of this rank (in its
  /// segment) for buffers that are plain host memory.
  Mesh(transport::shm::ShmTransport* shm, std::vector<const transport::shm::ShmPeer*> members,
       int me, std::function<Status(std::size_t, void**)> scratch);
  /// Marks this rank as gone for its peers (see leave()).
  ~Mesh();
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  /// Whether the mesh implements this operation.
  static bool supports(Coll coll);
  /// The intra-node part of a hierarchical allreduce: each local rank reduces its
  /// slice across the node, `inter(slice, count)` reduces that slice across nodes
  /// (in place), then every rank copies its slice into all local outputs.
  Status hierarchicalAllReduce(const OpDesc& op, int worldSize,
                               const std::function<Status(char*, std::size_t)>& inter,
                               Deadline deadline, const std::atomic<bool>& aborted);
  Status run(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// Whether run() takes the staging path (a few KiB: one barrier, no mapping).
  bool staged(const OpDesc& op) const;
  /// Whether run() takes pulledBroadcast().
  bool pulls(const OpDesc& op) const;
  /// Whether the group has more members than this node has processors.
  bool crowded() const { return crowded_; }

 private:
  struct Views;  // the peers' buffers of one op, mapped here
  static constexpr std::int32_t kNoBuffer = -2;  // an OpSlot's SegmentRef without a buffer
  Status barrier(const OpDesc& op, const char* phase, Deadline deadline,
                 const std::atomic<bool>& aborted);
  /// This rank's arrival at a barrier: returns the node-wide count that means
  /// everyone arrived.
  std::uint64_t arrive();
  template <typename Ready>
  Status waitFor(const OpDesc& op, const char* phase, Deadline deadline,
                 const std::atomic<bool>& aborted, Ready&& ready);
  /// Waits for the barrier of the last call if that call did not (an eager or
  /// pulled broadcast), and checks that every member made the same call (the
  /// readers of an eager one checked it already).
  Status settle(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// Waits until the root arrived at this rank's `arrival`-th barrier.
  Status waitForRoot(const OpDesc& op, std::uint64_t arrival, Deadline deadline,
                     const std::atomic<bool>& aborted);
  /// A staged broadcast: the root leaves its data in the next slot of a ring and
  /// goes on, up to kEagerSlots calls ahead of the slowest rank; the others
  /// wait for the root only.
  Status eagerBroadcast(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// The broadcast on a crowded node: every other rank copies the root's buffer
  /// once the root arrived, and only the root waits for everyone.
  Status pulledBroadcast(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// Writes this call's fingerprint and sequence into this rank's slot.
  std::array<std::uint64_t, 4> announce(const OpDesc& op);
  /// kMismatch when member j's `slot` describes another call than `fp`, this
  /// rank's `op` (`owed`: its previous call, a broadcast, found at `op`).
  Status sameCall(int j, std::size_t slot, const std::array<std::uint64_t, 4>& fp,
                  const OpDesc& op, bool owed = false) const;
  /// The kMismatch error between this rank's call `fp` and member j's `theirs`.
  Status mismatch(int j, const std::array<std::uint64_t, 4>& fp, const std::uint64_t* theirs,
                  const OpDesc& op, bool owed) const;
  /// sameCall() for every member: the first difference.
  Status sameCalls(std::size_t slot, const std::array<std::uint64_t, 4>& fp, const OpDesc& op,
                   bool owed = false) const;
  /// Waits until the node-wide arrival count reaches `target` (everyone arrived).
  Status waitForAll(const OpDesc& op, const char* phase, std::uint64_t target, Deadline deadline,
                    const std::atomic<bool>& aborted);
  Status checkPeers(const OpDesc& op, const char* phase, std::string* late) const;
  /// Tells the peers this rank takes no further part: a peer waiting in a barrier
  /// fails with kRemoteError at its next liveness check (within 200 ms).
  void leave();
  /// Describes this call in this rank's slot, waits for every member at the
  /// arrival barrier and checks that they made the same call; with `views`, also
  /// publishes `in`/`out` and maps the members' buffers there. Without (a staged
  /// call or a barrier), the slot's buffer references are left alone.
  Status publish(const OpDesc& op, const void* in, const void* out, Deadline deadline,
                 const std::atomic<bool>& aborted, Views* views);
  Status small(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  Status large(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  void work(const OpDesc& op, const Views& v);
  bool streams(const OpDesc& op) const;
  Status hostFallback(const OpDesc& op, std::size_t inBytes, std::size_t outBytes,
                      const void** in, void** out);

  transport::shm::ShmTransport* shm_;
  std::vector<const transport::shm::ShmPeer*> members_;
  const int me_;
  const int n_;
  std::function<Status(std::size_t, void**)> scratch_;
  const WaitPolicy waitPolicy_;  // no spin stage with more members than processors
  const bool crowded_;           // more members than processors
  std::unique_ptr<Views> views_;  // reused by every operation
  std::uint64_t barriers_ = 0;  // barriers passed by this group so far
  // The last call's barrier when this rank arrived there without waiting for
  // the others (0: none), with that call's slot and fingerprint.
  std::uint64_t owedTarget_ = 0;
  std::size_t owedSlot_ = 0;
  std::array<std::uint64_t, 4> owedFingerprint_{};
  bool owedEager_ = false;  // the owed call was an eager broadcast
  // Eager broadcasts so far (they take the ring's slots in turn), and the
  // barrier at which each slot was last written.
  std::uint64_t eagerCalls_ = 0;
  std::array<std::uint64_t, transport::shm::kEagerSlots> eagerBarrier_{};
  // Calls so far (every rank of the group makes the same ones): consecutive calls
  // alternate between two operation slots, so a rank that runs ahead into the
  // next call never overwrites what a slower one still reads (an operation may
  // make several calls, so the operation's number cannot choose the slot).
  std::uint64_t calls_ = 0;
  std::size_t slot_ = 0;
};

}  // namespace cohort::collective
