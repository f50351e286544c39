// The all-pairs link check that cohort-linkcheck runs on every rank of a job:
//
//   1. join     every rank's PeerInfo through a Bootstrap on the job's store;
//   2. set up   per peer, transports of the link's own (their blobs go through
//               the store), so one failing link never stops the others;
//   3. connect  every link at once, each on its own thread, with its own deadline;
//   4. probe    pings and a bandwidth probe, in rounds where every rank meets one
//               peer (a round-robin tournament), so probes never wait in a cycle
//               and never share a rank's CPU;
//   5. report   every rank's view goes to rank 0, which judges each link from
//               both ends and sends the verdict back to everyone.
//
// A failing link is recorded with its cause and the check goes on; a rank that
// never joins has all its links reported bad once the join deadline passes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/linkcheck/link_views.h"
#include "transport/handshake.h"
#include "transport/peer_info.h"
#include "transport/store.h"

namespace cohort::linkcheck {

struct CheckOptions {
  double timeoutS = 30;                  ///< the whole check
  double linkTimeoutS = 10;              ///< joining, and each link's set-up, connect and probe
  std::size_t bandwidthBytes = 4 << 20;  ///< 0 = pings only
  int pings = 5;
  double minGbps = 0;  ///< links measured slower are flagged

  /// The link timeout actually used: at most a third of the whole timeout (so the
  /// join, connect and probe phases all fit in it), in tenths of a second.
  double effectiveLinkTimeoutS() const;
};

/// This rank, as the check needs it. A plain value.
struct CheckMember {
  int rank = -1;
  int size = 0;
  transport::PeerInfo self;  ///< rank, hostId, hostname, pid, address, versions
  transport::JobToken token;
  std::vector<std::string> tableAddresses;  ///< per rank from a rank table ("" = unknown)
};

using VerdictCallback = std::function<void(const CheckReport&)>;

/// Runs the check as `me.rank`; every rank of the job calls it at about the same
/// time with the same options, over the job's store (keys under "linkcheck/").
/// *report is rank 0's verdict (on rank 0, and on any rank that receives it in
/// time); otherwise it is this rank's own view, with a problem saying so.
/// On rank 0, `onVerdict` runs before any other rank can see the verdict (print
/// it there: a launcher may stop rank 0 as soon as another rank exits).
/// Errors: only when this rank loses the store (kept in the message).
Status runLinkCheck(const CheckOptions& options, std::shared_ptr<transport::Store> store,
                    const CheckMember& me, CheckReport* report, VerdictCallback onVerdict = {});

/// Every rank, after printing the verdict (rank 0 all of it, the others their bad
/// links): marks this rank done (but rank 0) and waits, at most `maxSeconds`,
/// until every other rank that reported is done. So rank 0 keeps the store
/// (which may live in its process) up for them, and no rank exits before the
/// others printed: a launcher stops a machine's other ranks when one exits 1.
void awaitVerdictReaders(std::shared_ptr<transport::Store> store, const CheckReport& report,
                         int rank, double maxSeconds);

/// Round-robin tournament: this rank's peer in `round` (0 .. roundCount-1), or -1
/// when it sits the round out. Symmetric: roundPeer(roundPeer(r, k), k) == r.
int roundPeer(int rank, int round, int size);
int roundCount(int size);

}  // namespace cohort::linkcheck
