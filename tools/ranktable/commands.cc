#include "tools/ranktable/commands.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

namespace cohort::tools {

namespace {

using ranktable::ClusterSpec;

void printWarnings(const ranktable::Diagnostics& diagnostics) {
  for (const auto& warning : diagnostics.warnings()) {
    fmt::print(stderr, "{}\n", warning.toString());
  }
}

// "0..7" for a contiguous list, else "0,1,5".
std::string rangeText(const std::vector<int>& values) {
  if (values.empty()) return "none";
  if (values.size() == 1) return std::to_string(values.front());
  bool contiguous = true;
  for (std::size_t i = 1; i < values.size(); ++i) contiguous &= values[i] == values[i - 1] + 1;
  if (contiguous) return fmt::format("{}..{}", values.front(), values.back());
  return fmt::format("{}", fmt::join(values, ","));
}

void printSummary(const std::string& file, const ClusterSpec& spec) {
  const int perServer = spec.ranksPerServer();
  fmt::print("{}: valid, version {}\n", file, spec.version);
  fmt::print("servers: {}  ranks: {}  devices per server: {}  super pods: {}\n", spec.serverCount(),
             spec.rankCount(), perServer > 0 ? std::to_string(perServer) : std::string("uneven"),
             spec.superPods.size());
  for (int s = 0; s < spec.serverCount(); ++s) {
    const auto& server = spec.servers[s];
    std::vector<int> devices;
    for (int r : server.ranks) devices.push_back(spec.ranks[r].deviceId);
    fmt::print("  server {} \"{}\"{}{}: ranks {}, devices {}\n", s, server.serverId,
               server.hostIp.empty() ? "" : " host " + server.hostIp,
               server.superPodId.empty() ? "" : " super pod \"" + server.superPodId + "\"",
               rangeText(server.ranks), rangeText(devices));
  }
}

int writeOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    fmt::print(stderr, "cohort-ranktable: cannot write {}\n", path);
    return 1;
  }
  return 0;
}

}  // namespace

int runValidate(const ValidateArgs& args) {
  ranktable::LoadOptions options;
  options.logWarnings = false;  // printed below, without log decoration
  options.ownRank = args.rank;
  options.timeoutMs = static_cast<int>(args.waitS * 1000);
  if (!ranktable::parseProfile(args.profile, &options.profile)) {
    fmt::print(stderr, "cohort-ranktable: unknown profile \"{}\" (default, 910)\n", args.profile);
    return 1;
  }
  ClusterSpec spec;
  ranktable::Diagnostics diagnostics;
  const Status status = ranktable::loadClusterFile(args.file, options, &spec, &diagnostics);
  printWarnings(diagnostics);
  if (!status.ok()) {
    fmt::print("{}\n", status.toString());
    return 1;
  }
  if (!args.quiet) printSummary(args.file, spec);
  return 0;
}

int runGenerate(const GenerateArgs& args) {
  ClusterSpec spec;
  const Status status = ranktable::generateCluster(args.cluster, &spec);
  if (!status.ok()) {
    fmt::print(stderr, "cohort-ranktable: {}\n", status.toString());
    return 1;
  }
  return writeOutput(args.output,
                     args.format == "yaml" ? ranktable::toYaml(spec) : ranktable::toJson(spec));
}

int runConvert(const ConvertArgs& args) {
  ranktable::LoadOptions options;
  options.logWarnings = false;
  options.timeoutMs = 0;
  ClusterSpec spec;
  ranktable::Diagnostics diagnostics;
  const Status status = ranktable::loadClusterFile(args.file, options, &spec, &diagnostics);
  printWarnings(diagnostics);
  if (!status.ok()) {
    fmt::print(stderr, "{}\n", status.toString());
    return 1;
  }
  return writeOutput(args.output,
                     args.to == "yaml" ? ranktable::toYaml(spec) : ranktable::toJson(spec));
}

}  // namespace cohort::tools
