// The all-pairs link check that cohort-linkcheck runs on every rank of a job:
//
//   1. join     every rank's PeerInfo through a Bootstrap on the job's store;
//   2. set up   per peer, transports of the link's own (their blobs go through
//               the store), so one failing link never stops the others;
//   3. connect  every link at once, each on its own thread, with its own deadline;
//   4. probe    --repeat passes over every pair, then retry passes for links
//               whose samples scatter too widely (probe_plan.h: rounds of
//               disjoint pairs, split so that a node never runs more probe ends
//               at once than it has processors);
//   5. report   every rank's view goes to rank 0, which judges each link from
//               both ends and against its class, and sends the verdict back.
//
// A failing link is recorded with its cause and the check goes on; a rank that
// never joins, or stops answering, has its links reported unreachable.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/linkcheck/link_views.h"
#include "tools/linkcheck/probe_plan.h"
#include "transport/handshake.h"
#include "transport/peer_info.h"
#include "transport/store.h"

namespace cohort::linkcheck {

struct CheckOptions {
  double timeoutS = 0;  ///< the whole check; 0 = limits::defaultTimeoutS for the job
  double linkTimeoutS = limits::kDefaultLinkTimeoutS;  ///< joining; each link's connect, probe
  std::size_t bandwidthBytes = limits::kDefaultBandwidthBytes;  ///< 0 = pings only
  int pings = limits::kDefaultPings;
  int repeat = limits::kDefaultRepeat;  ///< samples per link
  VerdictRules rules;

  /// The whole timeout for a job of `size` ranks.
  double effectiveTimeoutS(int size) const;
  /// The link timeout actually used: at most a third of the whole timeout (so the
  /// join, connect and probe phases all fit in it), in tenths of a second. Before
  /// the job's size is known (size 0), the smallest default timeout counts.
  double effectiveLinkTimeoutS(int size = 0) const;
};

/// This rank, as the check needs it. A plain value.
struct CheckMember {
  int rank = -1;
  int size = 0;
  transport::PeerInfo self;  ///< rank, hostId, hostname, pid, address, versions
  transport::JobToken token;
  int processors = 0;            ///< this node's processors for probes; 0 = usableProcessors()
  std::string box;               ///< the machine whose processors it shares; "" = bootId()
  std::vector<TableRank> table;  ///< per rank from a rank table (empty: none)
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

}  // namespace cohort::linkcheck
