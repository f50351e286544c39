// --json: the run as one JSON document.
#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tools/perf/report_files.h"

namespace cohort::perf {

namespace {

using nlohmann::json;

json wrongValue(long long wrong) { return wrong < 0 ? json(nullptr) : json(wrong); }

json optionsJson(const PerfOptions& o) {
  return {{"min_bytes", o.minBytes},
          {"max_bytes", o.maxBytes},
          {"step_factor", o.factor},
          {"step_bytes", o.stepBytes},
          {"iters", o.iters},
          {"warmup", o.warmup},
          {"budget", o.budget},
          {"check", o.check},
          {"average", o.average},
          {"datatype", o.typeArg},
          {"op", o.opArg},
          {"root", o.root},
          {"inplace", o.inPlace},
          {"algorithm", o.algorithm},
          {"transport", o.transport},
          {"hccl", o.hccl}};
}

json blockJson(const BlockResult& b) {
  json rows = json::array();
  const int root = hasRoot(b.spec.coll) ? b.spec.root : -1;
  const char* redop = isReduction(b.spec.coll) ? reduceOpName(b.spec.op) : "none";
  for (const RowResult& r : b.rows) {
    rows.push_back({{"size", r.bytes},
                    {"count", r.count},
                    {"type", typeInfo(b.spec.type).name},
                    {"redop", redop},
                    {"root", root},
                    {"time_us", r.timeUs},
                    {"algbw", r.algbw},
                    {"busbw", r.busbw},
                    {"wrong", wrongValue(r.wrong)},
                    {"iters", r.iters},
                    {"algo", r.algo}});
  }
  return {{"name", b.name},
          {"kind", peerName(b.spec.coll)},
          {"collective", cliName(b.spec.coll)},
          {"type", typeInfo(b.spec.type).name},
          {"op", redop},
          {"in_place", b.spec.inPlace},
          {"root", root},
          {"note", b.note},
          {"wrong", b.wrong},
          {"avg_busbw", b.avgBusbw},
          {"rows", rows}};
}

}  // namespace

Status writeJson(const std::string& path, const PerfOptions& options, const RunInfo& info,
                 const std::vector<BlockResult>& blocks,
                 const std::optional<StreamOverhead>& overhead) {
  json doc = {{"tool", "cohort-perf"},
              {"lib", "cohort"},
              {"version", info.libraryVersion},
              {"api_version", std::to_string(info.apiVersion / 1000) + "." +
                                  std::to_string(info.apiVersion % 1000)},
              {"protocol_version", info.protocolVersion},
              {"nranks", info.nranks},
              {"nodes", info.nodes},
              {"local_ranks", info.localRanks},
              {"transport", info.transport},
              {"choice", info.choice},
              {"options", optionsJson(options)}};
  long long wrong = 0;
  json list = json::array();
  for (const auto& b : blocks) {
    list.push_back(blockJson(b));
    wrong += b.wrong;
  }
  doc["collectives"] = list;
  doc["wrong"] = wrong;
  if (overhead) {
    doc["stream_overhead"] = {{"calls", overhead->calls},
                              {"pipelined_us", overhead->pipelinedUs},
                              {"synchronized_us", overhead->synchronizedUs},
                              {"blocking_us", overhead->blockingUs}};
  }
  std::ofstream out(path);
  out << doc.dump(2) << "\n";
  out.close();
  if (!out) return systemError(errno, "--json: cannot write " + path);
  return Status::Ok();
}

}  // namespace cohort::perf
