#include "tools/trace/phases.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "tools/trace/trace_files.h"

namespace cohort::tracetool {

using nlohmann::json;

namespace {

struct Span {
  double start = 0, end = 0;
  bool operator<(const Span& o) const { return start < o.start; }
};

// The last span of a thread's sorted spans that starts at or before `at`.
const Span* lastStartingBy(const std::vector<Span>& spans, double at) {
  auto it = std::upper_bound(spans.begin(), spans.end(), Span{at, at});
  return it == spans.begin() ? nullptr : &*std::prev(it);
}

}  // namespace

std::vector<Part> phasesOf(const json& trace, const std::string& split) {
  std::vector<std::pair<long, Span>> collectives;  // tid, span
  std::map<long, std::vector<Span>> arrivals, waits;
  std::vector<double> splits;
  for (const auto& e : trace.value("traceEvents", json::array())) {
    if (e.value("ph", "") != "X") continue;
    const double ts = e.value("ts", 0.0);
    const Span span{ts, ts + e.value("dur", 0.0)};
    const long tid = e.value("tid", 0L);
    const std::string cat = e.value("cat", ""), name = e.value("name", "");
    if (cat == "collective") collectives.emplace_back(tid, span);
    if (cat == "mesh" && name == "arrival") arrivals[tid].push_back(span);
    if (cat == "stream" && name == "event wait") waits[tid].push_back(span);
    if (cat == "enqueue" && !split.empty() && name == split) splits.push_back(ts);
  }
  for (auto* spans : {&arrivals, &waits}) {
    for (auto& [tid, list] : *spans) std::sort(list.begin(), list.end());
  }
  std::sort(splits.begin(), splits.end());
  std::vector<Part> parts(splits.size() + 1);
  for (const auto& [tid, op] : collectives) {
    Part& part = parts[std::upper_bound(splits.begin(), splits.end(), op.start) - splits.begin()];
    ++part.collectives;
    double arrival = 0;
    if (auto it = arrivals.find(tid); it != arrivals.end()) {
      auto a = std::lower_bound(it->second.begin(), it->second.end(), Span{op.start, op.start});
      for (; a != it->second.end() && a->start < op.end; ++a) arrival += a->end - a->start;
    }
    part.arrival += arrival;
    part.work += std::max(0.0, op.end - op.start - arrival);
    // The calling stream's wait for this collective: of the waits on other threads
    // that span it, the one that ends first (the others wait for what the calling
    // stream does next). None when the collective ran on the caller's thread.
    const Span* caller = nullptr;
    for (const auto& [other, list] : waits) {
      if (other == tid) continue;
      const Span* w = lastStartingBy(list, op.start);
      if (w != nullptr && w->end >= op.end && (caller == nullptr || w->end < caller->end)) {
        caller = w;
      }
    }
    if (caller != nullptr) {
      part.handoff += op.start - caller->start;
      part.back += caller->end - op.end;
    }
  }
  // Parts without collectives (a split right after another) are kept, so that a
  // part's number is the number of splits before it.
  return parts;
}

int printPhases(const std::string& dir, const std::string& split) {
  std::vector<RankTrace> traces;
  if (!loadTraces(dir, &traces)) return 1;
  fmt::print(
      "per part of each rank's timeline{}: the collectives' time in ms (us per collective)\n"
      "  hand-off: the calling stream waits, the communicator's stream has not begun\n"
      "  arrival:  the mesh waits for the other ranks to arrive\n"
      "  work:     the rest of the collective\n"
      "  return:   the collective is done, the calling stream has not resumed\n",
      split.empty() ? "" : fmt::format(" (a part begins at each {} call)", split));
  auto cell = [](double us, int n) {  // n > 0: parts without collectives are not printed
    return fmt::format("{:9.1f} {:>8}", us / 1e3, fmt::format("({:.1f})", us / n));
  };
  for (const RankTrace& t : traces) {
    fmt::print("\n{}\n{:>4} {:>6} {:>18} {:>18} {:>18} {:>18}\n",
               t.rank == kNoRank ? std::string("no rank") : fmt::format("rank {}", t.rank), "part",
               "calls", "hand-off", "arrival", "work", "return");
    const std::vector<Part> parts = phasesOf(t.trace, split);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const Part& p = parts[i];
      if (p.collectives == 0) continue;
      fmt::print("{:>4} {:>6} {} {} {} {}\n", i, p.collectives, cell(p.handoff, p.collectives),
                 cell(p.arrival, p.collectives), cell(p.work, p.collectives),
                 cell(p.back, p.collectives));
    }
  }
  return 0;
}

}  // namespace cohort::tracetool
