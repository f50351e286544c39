#include "tools/linkcheck/view_exchange.h"

#include <fmt/format.h>

#include <sstream>

#include "common/error.h"
#include "common/log.h"

namespace cohort::linkcheck {

Status collectViews(transport::Store& store, Heartbeat& heartbeat, int round, Clock::time_point end,
                    std::vector<std::optional<RankView>>* views) {
  constexpr auto kSlice = std::chrono::milliseconds(100);
  for (std::size_t p = 1; p < views->size(); ++p) {
    const int rank = static_cast<int>(p);
    transport::Bytes blob;
    Status got(ErrorCode::kTimeout, "not asked");
    while (Clock::now() < end) {
      const auto by = std::min(end, Clock::now() + kSlice);
      got = store.get(fmt::format("view/{}/{}", round, rank), &blob,
                      Deadline::after(by - Clock::now()));
      if (got.code() != ErrorCode::kTimeout) break;
      if (!heartbeat.alive(rank)) {
        got = makeError(ErrorCode::kTimeout, "rank {} stopped living", rank);
        break;
      }
    }
    if (!got.ok() && got.code() != ErrorCode::kTimeout) return got;
    RankView v;
    if (got.ok()) got = RankView::fromJson(std::string(blob.begin(), blob.end()), &v);
    if (got.ok()) {
      (*views)[p] = std::move(v);
    } else {
      COHORT_LOG(kInfo, "linkcheck", "no view from rank {}: {}", rank, got.message());
    }
  }
  return Status::Ok();
}

std::string decisionText(const CheckReport& report, const Pairs& retry) {
  if (retry.empty()) return "report\n" + report.toJson();
  std::string text = "retry";
  for (const auto& [a, b] : retry) text += fmt::format(" {} {}", a, b);
  return text;
}

Status parseDecision(const std::string& text, CheckReport* report, Pairs* retry) {
  if (text.rfind("retry", 0) == 0) {
    std::istringstream pairs(text.substr(5));
    for (int a, b; pairs >> a >> b;) retry->push_back({a, b});
    if (!retry->empty()) return Status::Ok();
  }
  if (text.rfind("report\n", 0) == 0) return CheckReport::fromJson(text.substr(7), report);
  return makeError(ErrorCode::kParseError, "not a decision of the link check: '{}'",
                   text.substr(0, 40));
}

}  // namespace cohort::linkcheck
