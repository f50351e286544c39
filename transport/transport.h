// A transport makes connections of one kind (shm, tcp, rdma). For each peer pair
// the transports are tried in priority order and the first that accepts is used;
// every rejection reason is kept, so "no transport" errors say why (as NCCL's
// selectTransport). Connecting is two-phase: setup() returns an opaque blob that
// the bootstrap exchanges; connect() reads the peer's blob.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/bootstrap.h"
#include "transport/connection.h"
#include "transport/handshake.h"
#include "transport/link_report.h"
#include "transport/peer_info.h"

namespace cohort {
struct Config;
}  // namespace cohort

namespace cohort::transport {

/// What every transport of a communicator shares: identity, token, deadlines.
struct TransportContext {
  int rank = -1;
  int size = 0;
  PeerInfo self;
  JobToken token;
  Deadline connectDeadline = Deadline::never();
  /// The bytes of shared region each rank's shared-memory transport maps for its
  /// local peers (the same on every rank; the collective layer lays them out).
  std::size_t shmRegionBytes = 0;
  /// Operations the communicator started so far (a link's retry budget is per
  /// operation); outlives the connections. Null: not counted.
  const std::atomic<std::uint64_t>* operations = nullptr;
  /// Retrying broken links (tcp), as HCCL_OP_RETRY_ENABLE and HCCL_OP_RETRY_PARAMS
  /// say: a communicator's own settings (HcclCommConfig's hcclRetryEnable and
  /// hcclRetryParams); unset, the environment's (Config::global()).
  struct Retry {
    bool l0 = false;  // links within a server
    bool l1 = false;  // links between servers
    int maxCnt = 1;
    int holdMs = 5000;
    int intervalMs = 1000;
    /// What `levels` (HCCL_OP_RETRY_ENABLE's fields) and `params` (HCCL_OP_RETRY_PARAMS's)
    /// say.
    static Retry from(const Config& levels, const Config& params);
  };
  std::optional<Retry> retry;
};

/// One instance per communicator rank. Not thread-safe.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  /// Empty when this transport can link us to `peer`, else why not.
  virtual std::string rejectReason(const PeerInfo& peer) const = 0;
  /// Phase 1: prepare (listen, map) and describe how peers reach us.
  virtual Status setup(Bytes* blob) = 0;
  /// Phase 2: connect to `peer` from its blob. Both ranks of a pair call it; the
  /// transport decides who dials. May be called for several peers in any order.
  virtual Status connect(const PeerInfo& peer, const Bytes& peerBlob,
                         std::unique_ptr<Connection>* out) = 0;
};

namespace shm {
class ShmTransport;
}

/// A rank's transports in priority order, and among them the shared-memory one,
/// which also maps its local peers' memory for direct algorithms (null when
/// COHORT_TRANSPORT leaves it out). Owns them; not thread-safe.
struct Transports {
  std::vector<std::unique_ptr<Transport>> all;
  shm::ShmTransport* shm = nullptr;
};

/// Builds the transports available here, in priority order (shm, rdma, tcp),
/// honouring COHORT_TRANSPORT. The per-kind factories live in their subfolders.
Status makeTransports(const TransportContext& context, Transports* out);

/// Connects this rank to every rank in `peers` (every rank calls it, each with
/// its own list; the lists must be symmetric), choosing the transport per pair;
/// fills `out` (indexed by rank, null for self/absent), `report` (one link check
/// per connection, per COHORT_LINK_CHECK) and `transports` (which own shared state
/// the connections use: keep them alive as long as the connections). Errors name
/// both ranks and every rejection.
Status connectPeers(const TransportContext& context, Bootstrap& bootstrap,
                    const std::vector<PeerInfo>& everyone, const std::vector<int>& peers,
                    std::vector<std::unique_ptr<Connection>>* out, LinkReport* report,
                    Transports* transports);

/// The link check over already connected peers (sorted ranks; pairs probe in that
/// order on every rank, so the ping-pongs never wait on each other in a cycle).
Status probeAll(const TransportContext& context,
                std::vector<std::unique_ptr<Connection>>& conns, const std::vector<int>& sorted,
                LinkReport* report);

}  // namespace cohort::transport
