#include "tools/trace/trace_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace cohort::tracetool {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

long rankOf(const json& trace) {
  for (const auto& e : trace.value("traceEvents", json::array())) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      const std::string name = e["args"].value("name", "");
      if (name.rfind("rank ", 0) == 0) return std::stol(name.substr(5));
    }
  }
  return kNoRank;
}

}  // namespace

bool loadTraces(const std::string& dir, std::vector<RankTrace>* traces) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cohort-trace-", 0) != 0 || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    json trace = json::parse(in, nullptr, false);
    if (trace.is_discarded() || !trace.contains("traceEvents")) {
      std::fprintf(stderr, "cohort-trace: %s is not a Cohort trace (skipped)\n", name.c_str());
      continue;
    }
    const long rank = rankOf(trace);
    traces->push_back({rank, std::move(trace)});
  }
  if (ec) {
    std::fprintf(stderr, "cohort-trace: cannot read %s: %s\n", dir.c_str(), ec.message().c_str());
    return false;
  }
  if (traces->empty()) {
    std::fprintf(stderr, "cohort-trace: no cohort-trace-*.json in %s (was COHORT_TRACE set?)\n",
                 dir.c_str());
    return false;
  }
  std::stable_sort(traces->begin(), traces->end(),
                   [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  return true;
}

}  // namespace cohort::tracetool
