// The text form of a link check report: N×N matrices of status, latency,
// bandwidth and spread (flagged links marked), then one line per link naming
// both ranks as the rank table does and, for a flagged link, the cause.
#pragma once

#include <string>
#include <vector>

#include "tools/linkcheck/link_views.h"

namespace cohort::linkcheck {

/// The whole report as printed by rank 0.
std::string formatReport(const CheckReport& report);

/// "rank 0 (10.0.0.1) <-> rank 2 (10.0.0.3): timed out after 10 s" for each link
/// that is not ok (only those of `onlyRank` when it is >= 0), each prefixed with
/// its status ("BAD ", "SLOW ", "UNSTABLE ", "UNREACHABLE ").
std::vector<std::string> badLinkLines(const CheckReport& report, int onlyRank = -1);

/// "BAD", "SLOW", ...: the status as the report prints it.
std::string statusWord(LinkStatus status);

}  // namespace cohort::linkcheck
