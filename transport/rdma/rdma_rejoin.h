// Re-establishing a broken RDMA link (HCCL_OP_RETRY_ENABLE), the rdma side of
// tcp_retry.h's design. A queue pair in error cannot be mended: once it has
// flushed, both ends make a new one and trade its number and how far they got
// (a ResumePoint) over a tcp side channel, the ReconnectHub of tcp_retry.h.
// The writer then writes again from the first chunk the reader lacks into the
// same ring slots; the reader's ring and its half-done receive (a reduction
// half applied) are untouched, so no operation is re-run.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "transport/handshake.h"
#include "transport/rdma/rdma_queue_pair.h"
#include "transport/tcp/tcp_options.h"
#include "transport/tcp/tcp_retry.h"

namespace cohort::transport::rdma {

/// How far one end of a connection got: data chunks that arrived in its ring,
/// and ring slots it consumed (the writer's credits follow from both).
struct ResumePoint {
  std::uint64_t arrived = 0;
  std::uint64_t consumed = 0;
};

/// The record each end sends over the side channel: magic, its new queue
/// pair's number and first packet number, its ResumePoint (little endian).
struct RejoinRecord {
  static constexpr std::uint32_t kMagic = 0x4a525243;  // "CRRJ"
  static constexpr std::size_t kBytes = 28;
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  ResumePoint at;
  std::vector<std::uint8_t> encode() const;
  /// False for a wrong magic or a number beyond 24 bits.
  static bool decode(const std::uint8_t* in, RejoinRecord* out);
};

/// Makes the queue pairs that replace broken ones (verbs: rdma_transport.cc;
/// tests: in-memory pairs). Not thread-safe.
class QpMaker {
 public:
  virtual ~QpMaker() = default;
  /// A queue pair in INIT with its kRecvDepth receives posted, and the first
  /// packet number it will send.
  virtual Status make(std::unique_ptr<QueuePair>* qp, std::uint32_t* psn) = 0;
  /// Moves `qp` to RTR and RTS toward the peer's new queue pair.
  virtual Status connect(QueuePair& qp, std::uint32_t psn, std::uint32_t peerQpn,
                         std::uint32_t peerPsn) = 0;
};

/// What one rejoin step came to.
enum class RejoinStep { kWaiting, kJoined, kPeerGone };

/// Drives one connection's rejoins. Not thread-safe (its connection's thread),
/// apart from what the hub's thread calls. Lifetime: owned by the connection.
class Rejoiner {
 public:
  virtual ~Rejoiner() = default;
  /// Whether the peer asked to re-establish the link (it saw a break this end
  /// may not have seen). Cheap: every progress() of a working link asks.
  virtual bool peerAsked() = 0;
  /// One step, blocking at most `limit`, once the old queue pair has flushed.
  /// `attempt`: it may dial (or knock) now (IntervalTime apart). `*reached`:
  /// the peer's process answered or holds the exchange's socket (the link's
  /// HoldTime starts again: a live peer is waited for as any peer is). kJoined:
  /// `*qp` is the new queue pair in RTS and `*theirs` the peer's ResumePoint.
  /// kPeerGone: the returned error says why. An error with kWaiting is one
  /// failed attempt (the next may succeed).
  virtual Status step(const ResumePoint& mine, bool attempt, std::chrono::milliseconds limit,
                      RejoinStep* out, bool* reached, std::unique_ptr<QueuePair>* qp,
                      ResumePoint* theirs) = 0;
  /// This end of the link failed for good: the peer's later attempts are refused.
  virtual void giveUp() = 0;
};

/// A connection's retry settings and the rejoiner that carries them out.
struct RdmaResilience {
  tcp::RetryPolicy policy;
  std::unique_ptr<Rejoiner> rejoiner;
  /// Operations the communicator started (MaxCnt counts breaks per operation);
  /// outlives the connection. Null: all of its life is one operation.
  const std::atomic<std::uint64_t>* operations = nullptr;
};

/// Rejoins through the ranks' ReconnectHubs: the lower rank dials the higher's
/// hub and both trade RejoinRecords on that socket; the higher rank, when it
/// sees the break first, knocks with a probe of the lower's hub (which marks
/// the knock for the lower's connection). Lifetime: detaches from the hub on
/// destruction.
class HubRejoiner : public Rejoiner {
 public:
  struct Ends {
    std::shared_ptr<tcp::ReconnectHub> hub;  // this rank's
    boost::asio::ip::tcp::endpoint peerHub;
    Handshake hello;  // kReconnect, fromRank = this rank, toRank = the peer
    tcp::TcpOptions options;
    int peerRank = -1;
    bool dials = false;  // this rank is the lower of the two
    std::string where;   // "rdma rank 0 ... <-> rank 1 ..." for errors
  };
  HubRejoiner(Ends ends, std::unique_ptr<QpMaker> maker);
  ~HubRejoiner() override;
  HubRejoiner(const HubRejoiner&) = delete;
  HubRejoiner& operator=(const HubRejoiner&) = delete;

  bool peerAsked() override;
  Status step(const ResumePoint& mine, bool attempt, std::chrono::milliseconds limit,
              RejoinStep* out, bool* reached, std::unique_ptr<QueuePair>* qp,
              ResumePoint* theirs) override;
  void giveUp() override;

 private:
  bool takeDial();
  Status dialOrKnock(std::chrono::milliseconds limit, RejoinStep* out, bool* reached);
  Status exchange(const ResumePoint& mine, std::chrono::milliseconds limit, RejoinStep* out,
                  std::unique_ptr<QueuePair>* qp, ResumePoint* theirs);
  void dropExchange();

  Ends ends_;
  std::unique_ptr<QpMaker> maker_;
  std::shared_ptr<std::atomic<bool>> knocked_;  // set on the hub's thread
  std::uint64_t hubSeen_ = 0;
  std::uint32_t generation_ = 0;  // of the newest dial made (lower) or taken (higher)
  int fd_ = -1;                   // the socket of the exchange under way
  std::unique_ptr<QueuePair> fresh_;
  std::uint32_t freshPsn_ = 0;
  bool recordSent_ = false;
  std::vector<std::uint8_t> in_;
};

}  // namespace cohort::transport::rdma
