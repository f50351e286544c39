// What one rank of cohort-linkcheck saw of its links (a RankView, sent to rank 0
// through the store), and the check's verdict that rank 0 merges from every
// view (a CheckReport, sent back to every rank). Plain values; JSON on the wire.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cohort/status.h"
#include "tools/linkcheck/link_stats.h"

namespace cohort::linkcheck {

/// Where a link failed, earliest first: merging keeps the cause of the earliest
/// stage, since later failures of the other end are usually its echo.
enum class Stage { kNone = 0, kJoin = 1, kSetup = 2, kConnect = 3, kProbe = 4, kReport = 5 };
const char* stageName(Stage stage);

/// One rank's view of its link to one peer.
struct LinkView {
  int peer = -1;
  bool ok = false;                  ///< at least one sample, and no probe failed
  Stage stage = Stage::kNone;       ///< where it failed (kNone when ok)
  bool unreachable = false;         ///< failed by silence: no join, no answer, no route
  std::string transport;            ///< "shm", "tcp", "rdma"; "" when none was chosen
  std::vector<LinkSample> samples;  ///< one per probe, in the order taken
  std::string cause;                ///< short: "timed out after 10 s", "connection refused"
  std::string detail;               ///< the full error text ("" when ok)
};

/// Everything rank `rank` reports.
struct RankView {
  int rank = -1;
  std::string address;  ///< the address its tcp links use
  std::string hostname;
  std::string hostId;
  int pid = 0;
  std::vector<LinkView> links;

  std::string toJson() const;
  /// kParseError naming what is wrong.
  static Status fromJson(const std::string& text, RankView* out);
};

enum class LinkStatus { kOk = 0, kSlow = 1, kUnstable = 2, kUnreachable = 3, kBad = 4 };
/// "ok", "slow", "unstable", "unreachable", "bad".
const char* statusName(LinkStatus status);

/// One link (a < b) as rank 0 judged it from both ends' views.
struct LinkVerdict {
  int a = -1;
  int b = -1;
  LinkStatus status = LinkStatus::kBad;
  std::string transport;
  std::vector<LinkSample> samples;  ///< every sample (both ends hold the same)
  double rttUs = 0;                 ///< median of the samples' round trips
  double gbps = 0;                  ///< median bandwidth (0 when not probed)
  double spread = 0;                ///< of the bandwidth samples (see spreadOf)
  double classMedianGbps = 0;       ///< median of the medians of its class's links
  int classLinks = 0;               ///< measured links of its class (0: not compared)
  bool disturbed = false;           ///< too few of its samples kept their time to judge by them
  std::string cause;                ///< "" when ok
  std::string detail;               ///< the full error text of the end that failed first
};

/// How the rank table names a rank (all "" without a table).
struct TableRank {
  std::string deviceIp;
  std::string hostIp;
  std::string serverId;
};

struct RankEntry {
  int rank = -1;
  std::string address;       ///< the address its tcp links used, from its view
  std::string tableAddress;  ///< the rank table's device_ip, else host_ip ("" = no table)
  std::string serverId;      ///< the rank table's server_id ("" = no table)
  std::string hostname;
  bool reported = false;  ///< rank 0 received its view
};

/// The verdict of a whole check.
struct CheckReport {
  int size = 0;
  double timeoutS = 0;
  double linkTimeoutS = 0;
  VerdictRules rules;
  std::size_t bandwidthBytes = 0;
  int pings = 0;
  int repeat = 0;
  std::vector<RankEntry> ranks;       ///< indexed by rank
  std::vector<LinkVerdict> links;     ///< every pair a < b, in order (0,1), (0,2), ...
  std::vector<std::string> problems;  ///< not links: "rank 2 sent no results ..."

  int badLinks() const;  ///< links whose status is not ok
  bool allGood() const { return badLinks() == 0 && problems.empty(); }
  /// The verdict of the link between a and b (either order), or nullptr.
  const LinkVerdict* find(int a, int b) const;
  /// How the rank is named on a link of `transport` ("" = any): the rank table's
  /// address and server ("10.0.0.1, server node-1"), with the address the tcp
  /// links used where it differs ("10.0.0.1 via 192.0.2.2, server node-1");
  /// without a table the used address; else "address unknown".
  std::string nameOf(int rank, const std::string& transport = "") const;

  /// JSON, one rank and one link per line (so scripts can grep it).
  std::string toJson() const;
  static Status fromJson(const std::string& text, CheckReport* out);
};

/// What merging needs besides the views.
struct MergeSettings {
  double timeoutS = 0;
  double linkTimeoutS = 0;
  VerdictRules rules;
  std::size_t bandwidthBytes = 0;
  int pings = 0;
  int repeat = 0;
  std::vector<TableRank> table;  ///< per rank; may be empty (no rank table)
};

/// Judges every link of `size` ranks from the views (views[r] empty = rank r sent
/// none): measured only when no end saw a failure, then judged by judgeFigures
/// (by its retry round's samples when it has them);
/// otherwise the cause of the end that failed at the earliest stage (the lower
/// rank on a tie), unreachable when that end failed by silence.
CheckReport mergeViews(int size, const std::vector<std::optional<RankView>>& views,
                       const MergeSettings& settings);

/// What retry round `round` (1, 2, ...) probes again (pairs a < b, in order):
/// the links the verdict flags (SLOW, UNSTABLE) for the first retry round, the
/// links still UNSTABLE for too much disturbance for the later ones; and, for
/// each of their classes, up to limits::kRetryReferences unflagged links as
/// references.
std::vector<std::pair<int, int>> linksToRetry(const CheckReport& report, int round);

}  // namespace cohort::linkcheck
