// Direct ("mesh") collectives among the ranks of one node: every rank maps every
// other's buffers (shared-memory transport), so an operation is one pass over the
// data between two node-wide barriers: a schedule (collective/direct.h) that the
// executor runs with the mesh as its SharedGroup. Up to a few KiB, an allreduce,
// reduce-scatter, allgather or alltoall is posted instead: each rank copies its
// input into the next slot of its own ring, then completes the call when every
// rank posted it, by reading every member's slot; no barrier, and a rank that
// leaves before the others have read its slot leaves nothing behind for them to
// wait on. A small broadcast goes through a ring of slots that its
// root fills without waiting (its readers wait for the root only). With more
// than two ranks per processor, a larger broadcast's ranks copy the root's
// buffer themselves and only the root waits for them.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collective/direct.h"
#include "collective/executor.h"
#include "collective/mesh_layout.h"
#include "collective/op.h"
#include "collective/tuning.h"
#include "common/wait.h"
#include "transport/shm/shm_transport.h"

namespace cohort::collective {

/// Fingerprints in the shared slots, word by word with relaxed atomics: a
/// peer's liveness check (crossedCall) may read one while it is rewritten.
inline void storeFingerprint(std::uint64_t* dst, const std::array<std::uint64_t, 4>& fp) {
  for (std::size_t k = 0; k < fp.size(); ++k) __atomic_store_n(&dst[k], fp[k], __ATOMIC_RELAXED);
}
inline std::array<std::uint64_t, 4> loadFingerprint(const std::uint64_t* src) {
  return {__atomic_load_n(&src[0], __ATOMIC_RELAXED), __atomic_load_n(&src[1], __ATOMIC_RELAXED),
          __atomic_load_n(&src[2], __ATOMIC_RELAXED), __atomic_load_n(&src[3], __ATOMIC_RELAXED)};
}

/// Owned by the communicator; used from its stream's worker thread only. Its
/// direct algorithms are schedules (collective/direct.h) that the executor runs
/// with the mesh as their SharedGroup: the barriers and the members' buffers.
class Mesh final : public SharedGroup {
 public:
  /// `members[i]` is local index i (self included); all ranks of the group are on
  /// this node. `tuning` is the communicator's (the same on every member).
  /// `scratch(bytes)` returns device memory of this rank (in its segment) for
  /// buffers that are plain host memory.
  Mesh(transport::shm::ShmTransport* shm, std::vector<const transport::shm::ShmPeer*> members,
       int me, const Tuning& tuning, std::function<Status(std::size_t, void**)> scratch);
  /// Marks this rank as gone for its peers (destroyed, unless it left already).
  ~Mesh() override;
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  /// Whether the mesh implements this operation.
  static bool supports(Coll coll);
  /// The intra-node part of a hierarchical allreduce: each local rank reduces its
  /// slice (blockOf(op.count, members, me)) across the node, `inter(slice, count)`
  /// finishes it in place (across nodes; an average divides there), then every
  /// rank copies its slice into all local outputs.
  Status hierarchicalAllReduce(const OpDesc& op,
                               const std::function<Status(char*, std::size_t)>& inter,
                               Deadline deadline, const std::atomic<bool>& aborted);
  /// Runs `op` to completion (posted calls, older ones too, complete first).
  Status run(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// Whether run() posts `op`.
  bool posts(const OpDesc& op) const;
  /// Posts `op` (this rank's input goes into its ring) without waiting for the
  /// others, unless the ring is full: then this rank's oldest call completes
  /// and the others must have read the slot (and unless its input is an
  /// earlier call's output: that call completes first). *call numbers it for
  /// complete().
  Status post(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted,
              std::uint64_t* call);
  /// Posts `op` (posts(op) holds) if that waits for nobody: its ring slot is free
  /// on every member and its input is no output of a call not completed yet.
  /// *call numbers it for complete(); false (and nothing posted) otherwise, or
  /// after a failure. What lets a stream's worker post the calls queued right
  /// behind the one it completes (the communicator's run-ahead).
  /// With `tryLock`, not even for the ring's lock: a thread that holds it may be
  /// waiting for a member (a stream's worker in post() or run()).
  bool postIfFree(const OpDesc& op, Deadline deadline, std::uint64_t* call,
                  bool tryLock = true);
  /// Waits, without holding the ring's lock, until postIfFree(op) may succeed:
  /// the members have read the slot it takes (and the calls whose output is its
  /// input completed). The ring's failure, or this wait's, as complete() reports.
  Status awaitFreeSlot(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// Completes the posted calls up to `call` (post(), postIfFree()), in order:
  /// waits until every member posted each, checks they made the same call and
  /// writes its output. With `wait` false, kNotReady instead of waiting. A call
  /// that fails fails every later one (this rank leaves the communicator, unless
  /// a peer caused it).
  Status complete(std::uint64_t call, bool wait, const std::atomic<bool>& aborted);
  /// complete(call, false) from a thread that must never wait (the caller's fast
  /// path): kNotReady also when another thread holds the ring's lock. *through is
  /// the number of posted calls completed so far (0 if the lock was busy).
  Status tryComplete(std::uint64_t call, std::uint64_t* through);
  /// complete(call, true) that waits for the members without holding the ring's
  /// lock, so that the caller's fast path may post and complete meanwhile.
  Status completeWaiting(std::uint64_t call, const std::atomic<bool>& aborted);
  /// Whether run() takes a staged path (a few KiB: posted, or an eager
  /// broadcast; no mapping).
  bool staged(const OpDesc& op) const;
  /// Whether run() takes pulledBroadcast().
  bool pulls(const OpDesc& op) const;
  /// Before this rank leaves for good (destroy): waits until every member still in the group
  /// has finished every call this rank made, i.e. read what this rank's slots and buffers
  /// hold (a broadcast's root returns before its readers copy, a posted call before the
  /// others complete it), so that leaving fails none of them. Members that left or died
  /// are not waited for. Logs whom it waits for after a second; kTimeout naming them at
  /// `deadline`; kAborted if `aborted` is set meanwhile.
  Status drain(Deadline deadline, const std::atomic<bool>& aborted);
  /// Leaves now, telling the peers that this rank aborted.
  void abortNow() { leave(transport::shm::Departure::kAborted); }
  /// Leaves now, telling the peers that this rank failed (its communicator did)
  /// and why.
  void failNow(const std::string& cause = "") { leave(transport::shm::Departure::kFailed, cause); }

  // SharedGroup: a signal arrives at the node-wide barrier; the first of a call
  // settles the last call if it did not wait for its barrier, then describes
  // this call (fingerprint, buffers) in this rank's operation slot.
  Status signal(const OpDesc& op, const char* phase, bool first, const ExecBuffers& own,
                Deadline deadline, const std::atomic<bool>& aborted) override;
  Status wait(const OpDesc& op, const char* phase, bool first, const Schedule& schedule,
              Deadline deadline, const std::atomic<bool>& aborted) override;
  const char* const* inputs() const override { return views_->in.data(); }
  char* const* outputs() const override { return views_->out.data(); }

 private:
  // The peers' buffers of one op, mapped here; kept between operations so that
  // a call allocates nothing (in and out keep n_ entries: inputs() and
  // outputs() hand out their arrays).
  struct Views {
    std::vector<const char*> in;
    std::vector<char*> out;
    std::vector<const char*> staged;  // the members' post slots (reducePosted())
  };
  /// Member j's shared region, mapped here.
  MeshRegion& region(int j) const {
    return *static_cast<MeshRegion*>(members_[static_cast<std::size_t>(j)]->region);
  }
  static constexpr std::int32_t kNoBuffer = -2;  // an OpSlot's SegmentRef without a buffer
  /// This rank's arrival at a barrier: returns the node-wide count that means
  /// everyone arrived.
  std::uint64_t arrive();
  /// Waits until ready(); every 200 ms checks the peers (checkPeers; `behind(j)`
  /// says whether member j is late, default: not at this rank's barrier yet)
  /// and, for `posted` waits or with posted peers, that nobody made this call
  /// the other way (crossedCall).
  template <typename Ready>
  Status waitFor(const OpDesc& op, const char* phase, Deadline deadline,
                 const std::atomic<bool>& aborted, Ready&& ready, bool posted = false,
                 const std::function<bool(int)>& behind = {});
  /// kMismatch when a peer shows this call's sequence number with another
  /// call: in its operation slots or eager broadcasts (`posted`: this rank
  /// posted it) or in its posted ring (this rank did not).
  Status crossedCall(const OpDesc& op, bool posted) const;
  static constexpr std::uint64_t kAllPosted = ~std::uint64_t(0);  // complete(): every call
  /// complete() with postMu_ held.
  Status completeLocked(std::uint64_t call, bool wait, const std::atomic<bool>& aborted);
  /// With postMu_ held: whether op's input is an output of a posted call not
  /// completed yet (calls chained in place).
  bool readsPendingOutputLocked(const OpDesc& op) const;
  /// With postMu_ held: whether post(op) would wait (see postIfFree()).
  bool postWaitsLocked(const OpDesc& op);
  /// post() with postMu_ held, once nothing is left to wait for.
  void postLocked(const OpDesc& op, Deadline deadline, std::uint64_t* call);
  /// Writes posted call `call`'s output from every member's slot.
  void reducePosted(const OpDesc& op, std::uint64_t call);
  /// Whether a posted call's slot holds the block of this rank's input that only
  /// this rank reads (alltoall, reduce-scatter); if not, completion reads it
  /// from the input, which stream order keeps as it was (one copy less).
  bool ownBlockPosted(const OpDesc& op) const;
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
  Status checkPeers(const OpDesc& op, const char* phase, std::string* late,
                    const std::function<bool(int)>& behind = {}) const;
  /// Tells the peers this rank takes no further part (and why, `cause`): a peer
  /// waiting in a barrier fails with kRemoteError at its next liveness check
  /// (within 200 ms).
  void leave(transport::shm::Departure why = transport::shm::Departure::kFailed,
             const std::string& cause = "");
  /// How member j left (for the errors of the ones still here).
  std::string departureText(int j) const;
  /// Runs `op`'s direct schedule (collective/direct.h) with the executor.
  Status direct(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// The schedule of `shape` (the last one, when the shape repeats).
  const Schedule& scheduleFor(const DirectShape& shape);
  /// run() without the departure note.
  Status runOnce(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted);
  /// Tells drain() on the other members that this rank read nothing of theirs after its
  /// barriers so far.
  void depart();
  bool streams(const OpDesc& op) const;
  /// Replaces `in`/`out` by scratch when they lie outside every segment (peers
  /// cannot map them), and keeps their references in refs_ for signal().
  Status hostFallback(const OpDesc& op, std::size_t inBytes, std::size_t outBytes,
                      const void** in, void** out);

  transport::shm::ShmTransport* shm_;
  std::vector<const transport::shm::ShmPeer*> members_;
  const int me_;
  const int n_;
  std::function<Status(std::size_t, void**)> scratch_;
  const WaitPolicy waitPolicy_;  // no spin stage with more members than processors
  const Tuning tuning_;
  std::unique_ptr<Views> views_;  // reused by every operation
  // The last direct schedule and its shape, and the scratch of its reductions.
  DirectShape shape_;
  bool haveSchedule_ = false;
  Schedule schedule_;
  std::vector<char> scratchChunk_;
  // Between a call's signal and its wait: the barrier count that means everyone
  // arrived and the call's fingerprint.
  std::uint64_t target_ = 0;
  std::array<std::uint64_t, 4> fingerprint_{};
  // The buffers hostFallback() settled on for the call in progress, and their
  // references (kNoBuffer for none), which its first signal publishes.
  struct OwnRefs {
    const void* in = nullptr;
    const void* out = nullptr;
    transport::shm::SegmentRef inRef, outRef;
  };
  OwnRefs refs_;
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
  std::array<std::uint64_t, kEagerSlots> eagerBarrier_{};
  // Calls so far (every rank of the group makes the same ones): consecutive calls
  // alternate between two operation slots, so a rank that runs ahead into the
  // next call never overwrites what a slower one still reads (an operation may
  // make several calls, so the operation's number cannot choose the slot).
  std::uint64_t calls_ = 0;
  std::size_t slot_ = 0;
  // Posted calls: how many so far, how many completed, and the ones not
  // completed yet by ring slot (posts_ - completedPosts_ <= kPostSlots). A
  // failure fails every later call. Guarded by postMu_: the stream's worker
  // posts and completes, drain() reads them from the thread that destroys.
  struct Posted {
    OpDesc op;
    std::array<std::uint64_t, 4> fingerprint{};  // op's
    bool ownBlockPosted = true;                  // ownBlockPosted(op), or no input
    Deadline deadline = Deadline::never();
  };
  /// The first failure of a posted call: every call not completed fails with
  /// it, and this rank leaves the communicator.
  Status failPosted(Status s);
  const char* pendingLo_ = nullptr;  // the outputs of the calls not completed span these
  const char* pendingHi_ = nullptr;
  mutable std::mutex postMu_;
  std::uint64_t posts_ = 0;
  std::uint64_t completedPosts_ = 0;
  // The fewest posts any member (this rank too) had completed when last looked
  // at: a slot that old is free without reading the others' counters again
  // (each read is a cache miss on a line its owner writes at every call).
  std::uint64_t everyoneFinished_ = 0;
  std::array<Posted, kPostSlots> posted_;
  Status postFailure_;
};

}  // namespace cohort::collective
