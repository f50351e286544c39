// How the ranks of a check exchange their views and rank 0's decision after each
// round, through the check's store: "view/ROUND/RANK" holds a RankView (JSON),
// "decision/ROUND" either "report\n" and the CheckReport (JSON), or "retry" and
// the pairs the next round probes again ("retry 0 2 1 3").
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/wait.h"
#include "tools/linkcheck/heartbeat.h"
#include "tools/linkcheck/link_views.h"
#include "transport/store.h"

namespace cohort::linkcheck {

using Pairs = std::vector<std::pair<int, int>>;

/// Rank 0: the views of `round` of ranks 1 .. views->size()-1, into *views
/// (entries stay empty for ranks that sent none). Waits until `end`, but for a
/// rank only while it lives (`heartbeat`): a stopped rank costs the verdict a
/// link timeout, not the rest of the check's time. Errors: the store failed.
Status collectViews(transport::Store& store, Heartbeat& heartbeat, int round, Clock::time_point end,
                    std::vector<std::optional<RankView>>* views);

/// The decision text: the verdict when `retry` is empty, else the pairs.
std::string decisionText(const CheckReport& report, const Pairs& retry);

/// Reads a decision: fills *retry, or *report when it is the verdict.
/// kParseError when the text is neither.
Status parseDecision(const std::string& text, CheckReport* report, Pairs* retry);

}  // namespace cohort::linkcheck
