// cohort-trace: joins the per-process timelines that COHORT_TRACE=DIR writes
// (DIR/cohort-trace-<pid>.json) into one Chrome trace, ranks in order, for
// Perfetto (ui.perfetto.dev) or chrome://tracing.
//
//   cohort-trace merge DIR [-o DIR/merged.json]
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The process's "rank R" name, or a large number for processes without a rank.
long rankOf(const json& trace) {
  for (const auto& e : trace.value("traceEvents", json::array())) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      const std::string name = e["args"].value("name", "");
      if (name.rfind("rank ", 0) == 0) return std::stol(name.substr(5));
    }
  }
  return 1L << 30;
}

int merge(const std::string& dir, std::string out) {
  if (out.empty()) out = (fs::path(dir) / "merged.json").string();
  std::vector<std::pair<long, json>> traces;
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
    traces.emplace_back(rankOf(trace), std::move(trace));
  }
  if (ec) {
    std::fprintf(stderr, "cohort-trace: cannot read %s: %s\n", dir.c_str(), ec.message().c_str());
    return 1;
  }
  if (traces.empty()) {
    std::fprintf(stderr, "cohort-trace: no cohort-trace-*.json in %s (was COHORT_TRACE set?)\n",
                 dir.c_str());
    return 1;
  }
  std::sort(traces.begin(), traces.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  json merged = {{"displayTimeUnit", "ns"}, {"traceEvents", json::array()}};
  auto& events = merged["traceEvents"];
  for (std::size_t i = 0; i < traces.size(); ++i) {
    for (auto& e : traces[i].second["traceEvents"]) {
      if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
        events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", e["pid"]},
                          {"args", {{"sort_index", i}}}});
      }
      events.push_back(std::move(e));
    }
  }
  std::ofstream file(out);
  file << merged.dump() << "\n";
  if (!file) {
    std::fprintf(stderr, "cohort-trace: cannot write %s\n", out.c_str());
    return 1;
  }
  std::printf("cohort-trace: %zu process(es), %zu events -> %s\n", traces.size(), events.size(),
              out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cohort-trace: join the timelines COHORT_TRACE=DIR wrote into one Chrome trace"};
  app.require_subcommand(1);
  std::string dir, out;
  auto* m = app.add_subcommand("merge", "Merge DIR/cohort-trace-*.json (ranks in order)");
  m->add_option("dir", dir, "The COHORT_TRACE folder")->required();
  m->add_option("-o,--output", out, "The merged file (default DIR/merged.json)");
  CLI11_PARSE(app, argc, argv);
  return merge(dir, out);
}
