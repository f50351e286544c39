// What one rank of cohort-linkcheck saw of its links (a RankView, sent to rank 0
// through the store), and the check's verdict that rank 0 merges from every
// view (a CheckReport, sent back to every rank). Plain values; JSON on the wire.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cohort/status.h"

namespace cohort::linkcheck {

/// Where a link failed, earliest first: merging keeps the cause of the earliest
/// stage, since later failures of the other end are usually its echo.
enum class Stage { kNone = 0, kJoin = 1, kSetup = 2, kConnect = 3, kProbe = 4, kReport = 5 };
const char* stageName(Stage stage);

/// One rank's view of its link to one peer.
struct LinkView {
  int peer = -1;
  bool ok = false;
  Stage stage = Stage::kNone;  ///< where it failed (kNone when ok)
  bool lost = false;           ///< connected, but probe messages went unanswered
  std::string transport;       ///< "shm", "tcp", "rdma"; "" when none was chosen
  double rttUs = 0;            ///< median round trip of the pings
  double gbps = 0;             ///< one-way bandwidth probe (0 when not run)
  std::string cause;           ///< short: "timed out after 10 s", "connection refused"
  std::string detail;          ///< the full error text ("" when ok)
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

enum class LinkStatus { kOk = 0, kSlow = 1, kLoss = 2, kBad = 3 };
/// "ok", "slow", "loss", "bad".
const char* statusName(LinkStatus status);

/// One link (a < b) as rank 0 judged it from both ends' views.
struct LinkVerdict {
  int a = -1;
  int b = -1;
  LinkStatus status = LinkStatus::kBad;
  std::string transport;
  double rttUs = 0;
  double gbps = 0;
  std::string cause;   ///< "" when ok
  std::string detail;  ///< the full error text of the end that failed first
};

struct RankEntry {
  int rank = -1;
  std::string address;  ///< from its view, else the rank table, else ""
  std::string hostname;
  bool reported = false;  ///< rank 0 received its view
};

/// The verdict of a whole check.
struct CheckReport {
  int size = 0;
  double timeoutS = 0;
  double linkTimeoutS = 0;
  double minGbps = 0;
  std::size_t bandwidthBytes = 0;
  int pings = 0;
  std::vector<RankEntry> ranks;       ///< indexed by rank
  std::vector<LinkVerdict> links;     ///< every pair a < b, in order (0,1), (0,2), ...
  std::vector<std::string> problems;  ///< not links: "rank 2 sent no results ..."

  int badLinks() const;  ///< links whose status is not ok
  bool allGood() const { return badLinks() == 0 && problems.empty(); }
  /// The verdict of the link between a and b (either order), or nullptr.
  const LinkVerdict* find(int a, int b) const;
  /// "10.0.0.1", or "address unknown".
  std::string addressOf(int rank) const;

  /// JSON, one rank and one link per line (so scripts can grep it).
  std::string toJson() const;
  static Status fromJson(const std::string& text, CheckReport* out);
};

/// What merging needs besides the views.
struct MergeSettings {
  double timeoutS = 0;
  double linkTimeoutS = 0;
  double minGbps = 0;
  std::size_t bandwidthBytes = 0;
  int pings = 0;
  std::vector<std::string> tableAddresses;  ///< per rank ("" = unknown); may be empty
};

/// Judges every link of `size` ranks from the views (views[r] empty = rank r sent
/// none): ok only when no end saw a failure; the cause of the end that failed at
/// the earliest stage (the lower rank on a tie); slow when the probe measured
/// less than minGbps; loss when probe messages went unanswered.
CheckReport mergeViews(int size, const std::vector<std::optional<RankView>>& views,
                       const MergeSettings& settings);

}  // namespace cohort::linkcheck
