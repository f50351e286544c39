// cohort-trace: reads the per-process timelines that COHORT_TRACE=DIR writes
// (DIR/cohort-trace-<pid>.json). `merge` joins them into one Chrome trace, ranks
// in order, for Perfetto (ui.perfetto.dev) or chrome://tracing; `phases` says
// where each rank's collectives spend their time.
//
//   cohort-trace merge DIR [-o DIR/merged.json]
//   cohort-trace phases DIR [--split barrier]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/trace/phases.h"
#include "tools/trace/trace_files.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

int merge(const std::string& dir, std::string out) {
  if (out.empty()) out = (fs::path(dir) / "merged.json").string();
  std::vector<cohort::tracetool::RankTrace> traces;
  if (!cohort::tracetool::loadTraces(dir, &traces)) return 1;
  json merged = {{"displayTimeUnit", "ns"}, {"traceEvents", json::array()}};
  auto& events = merged["traceEvents"];
  for (std::size_t i = 0; i < traces.size(); ++i) {
    for (auto& e : traces[i].trace["traceEvents"]) {
      if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
        events.push_back({{"ph", "M"},
                          {"name", "process_sort_index"},
                          {"pid", e["pid"]},
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
  CLI::App app{"cohort-trace: read the timelines COHORT_TRACE=DIR wrote"};
  app.require_subcommand(1);
  std::string dir, out, split = "barrier";
  auto* m = app.add_subcommand("merge", "Merge DIR/cohort-trace-*.json (ranks in order)");
  m->add_option("dir", dir, "The COHORT_TRACE folder")->required();
  m->add_option("-o,--output", out, "The merged file (default DIR/merged.json)");
  auto* p = app.add_subcommand(
      "phases", "Per rank: the collectives' hand-off, arrival, work and return times");
  p->add_option("dir", dir, "The COHORT_TRACE folder")->required();
  p->add_option("--split", split,
                "A part of the timeline begins at each call of this collective (empty: one part)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return p->parsed() ? cohort::tracetool::printPhases(dir, split) : merge(dir, out);
}
