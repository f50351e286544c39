// One RC queue pair to one peer. Each message travels as chunks: an RDMA WRITE
// WITH IMMEDIATE puts [slot header | payload] into the next slot of the peer's
// registered receive ring; the receiver copies (or reduces) the payload into
// the posted destination and returns the slot as a credit. The sender writes
// straight from the caller's buffer when the runtime owns it (device or pinned
// memory, registered once through the cache) and from a registered staging
// slot otherwise. Data waits until the peer says READY, so no write reaches a
// queue pair that is not yet ready to receive. With a retry policy
// (rdma_rejoin.h) a broken queue pair is replaced instead of failing.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/connection.h"
#include "transport/rdma/rdma_queue_pair.h"
#include "transport/rdma/rdma_registration.h"
#include "transport/rdma/rdma_rejoin.h"
#include "transport/rdma/rdma_wire.h"

namespace cohort::transport::rdma {

/// What connect() learned: who is at each end and where the peer's ring is.
struct RdmaLink {
  int rank = -1;
  int peer = -1;
  std::string local;   // "rank 0 mlx5_0:1 gid ::ffff:10.0.0.1 qpn 0x11"
  std::string remote;  // "rank 1 (host-b) gid ::ffff:10.0.0.2 qpn 0x12"
  std::uint64_t ringAddr = 0;
  std::uint32_t ringRkey = 0;
  std::uint32_t ringSlots = 0;
  std::uint32_t slotBytes = 0;
};

/// The buffers a connection owns: the ring the peer writes into (kRingSlots x
/// kSlotStride, remote-writable) and the send area (kSendDepth slot headers,
/// then kSendDepth staging payloads).
struct RdmaBuffers {
  std::unique_ptr<RegisteredBuffer> ring;
  std::unique_ptr<RegisteredBuffer> sendArea;
  static std::size_t ringBytes() { return std::size_t{kRingSlots} * kSlotStride; }
  static std::size_t sendAreaBytes() { return kSendDepth * (kSlotHeaderBytes + kSlotPayload); }
};

/// Posts the kRecvDepth receive requests a connection expects (before RTR).
Status postInitialReceives(QueuePair& qp);

/// Not thread-safe (see Connection). Owns its queue pair and buffers; shares
/// the registration cache. Destroying it tells the peer (a CLOSE signal).
class RdmaConnection : public Connection {
 public:
  /// `qp` has its kRecvDepth receives posted; `resilience` (HCCL_OP_RETRY_ENABLE)
  /// replaces it when it breaks.
  RdmaConnection(RdmaLink link, std::unique_ptr<QueuePair> qp, RdmaBuffers buffers,
                 std::shared_ptr<RegistrationCache> cache,
                 std::unique_ptr<RdmaResilience> resilience = nullptr);
  ~RdmaConnection() override;

  /// Announces READY to the peer; call once the queue pair is in RTS.
  Status start();

  int peer() const override { return link_.peer; }
  const char* kind() const override { return "rdma"; }
  std::string describe() const override { return link_.remote; }
  Status postSend(const void* data, std::size_t bytes) override;
  Status postRecv(void* dst, std::size_t bytes, const Reduction* reduce = nullptr,
                  const void* accumulate = nullptr) override;
  Status progress() override;
  std::uint64_t sendsPosted() const override { return sendsPosted_; }
  std::uint64_t sendsCompleted() const override { return sendsCompleted_; }
  std::uint64_t recvsPosted() const override { return recvsPosted_; }
  std::uint64_t recvsCompleted() const override { return recvsCompleted_; }
  WaitHint waitHint() override;
  /// Tells the peer as closing does (a receive it waits for fails at once);
  /// later calls here return `why`.
  void abort(const Status& why) override;
  /// Queue pairs replaced after a break (retry mode).
  int reconnections() const { return reconnections_; }

 private:
  struct PendingSend {
    const std::uint8_t* data;
    std::size_t bytes;
    std::uint32_t seq;
    std::uint32_t chunks;
    std::uint32_t chunksPosted;
    std::uint32_t chunksDone;
    bool staged;
    RegistrationCache::Lease lease;
  };
  struct PendingRecv {
    std::uint8_t* dst;
    std::size_t bytes;
    std::size_t received;
    std::uint32_t seq;
    bool reduces;
    Reduction reduce;
    const std::uint8_t* accumulate;
  };

  Status chooseSource(PendingSend& send);
  Status pollCompletions();
  Status onCompletion(const ibv_wc& wc);
  Status onSendDone(std::uint64_t wrId);
  Status onSignal(std::uint32_t imm);
  Status consumeArrivals();
  Status deliver(PendingRecv& recv, const std::uint8_t* slot);
  Status postChunks();
  Status postChunk(PendingSend& send);
  Status postControl(ImmKind kind, std::uint32_t value);
  Status returnCredits();
  Status checkPeerClosed() const;
  Status protocolError(const std::string& what) const;
  Status fail(Status status);
  // Retry mode (rdma_connection_retry.cc).
  Status onBreak(const Status& cause, bool counts);
  Status keepLinkUp();
  Status resume(const ResumePoint& theirs, std::unique_ptr<QueuePair> qp);
  Status rewindSends(std::uint64_t peerArrived);
  Status giveUp(Status why);

  RdmaLink link_;
  std::shared_ptr<RegistrationCache> cache_;
  RdmaBuffers buffers_;
  std::unique_ptr<QueuePair> qp_;  // after the buffers: destroyed before them
  std::size_t chunkBytes_;
  Status error_;

  std::deque<PendingSend> sends_;
  std::size_t nextToPost_ = 0;  // index in sends_ of the first send with chunks to post
  std::deque<PendingRecv> recvs_;
  std::vector<ibv_wc> stash_;  // completions taken while arming the wait hint
  WaitWord neverSleep_;        // never notified: see waitHint()

  std::uint64_t sendsPosted_ = 0, sendsCompleted_ = 0;
  std::uint64_t recvsPosted_ = 0, recvsCompleted_ = 0;
  std::uint64_t chunksWritten_ = 0;   // data writes posted (= next remote slot)
  std::uint64_t chunksArrived_ = 0;   // data writes received
  std::uint64_t ringHead_ = 0;        // next slot of our ring to consume
  std::uint32_t credits_;             // free slots in the peer's ring
  std::uint32_t creditsOwed_ = 0;     // slots freed in our ring, not yet returned
  std::uint32_t writesInFlight_ = 0;  // data writes not yet completed
  std::uint32_t sendQueueUsed_ = 0;   // all send requests not yet completed
  bool peerReady_ = false;
  bool readyAckSent_ = false;
  bool peerClosed_ = false;
  bool armed_ = false;
  bool warnedStaging_ = false;

  // Receive requests posted on the queue pair and not yet completed: a broken
  // one is replaced once every request of it has completed (flushed).
  std::uint32_t recvsOutstanding_ = kRecvDepth;
  std::unique_ptr<RdmaResilience> retry_;
  bool broken_ = false;
  std::chrono::steady_clock::time_point brokenAt_, nextTry_;
  Status breakCause_;
  int tries_ = 0;
  std::string lastTry_;
  std::uint64_t opAtBreak_ = ~std::uint64_t{0};
  int breaksInOp_ = 0;
  int reconnections_ = 0;
};

}  // namespace cohort::transport::rdma
