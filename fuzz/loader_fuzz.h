// The property both fuzzers check: the loader never crashes, leaks or throws on
// any input; its verdict agrees with its diagnostics; and a table it accepts is
// well formed and comes back unchanged through toYaml and toJson.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cohort/ranktable.h"

namespace cohort::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ranktable fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// Invariants of a validated spec (see ClusterSpec's comment).
inline void checkSpec(const ranktable::ClusterSpec& spec) {
  if (spec.servers.empty() || spec.ranks.empty()) fail("empty spec accepted", "");
  if (spec.ranksPerServer() <= 0) fail("uneven spec accepted", ranktable::toYaml(spec));
  for (int r = 0; r < spec.rankCount(); ++r) {
    const auto& rank = spec.ranks[r];
    if (rank.rankId != r || spec.serverOf(r) < 0 || spec.serverOf(r) >= spec.serverCount()) {
      fail("rank table inconsistent", ranktable::toYaml(spec));
    }
    const auto& local = spec.localRanks(rank.serverIndex);
    if (rank.localRank < 0 || rank.localRank >= static_cast<int>(local.size()) ||
        local[rank.localRank] != r ||
        local.back() - local.front() + 1 != static_cast<int>(local.size())) {
      fail("local ranks inconsistent", ranktable::toYaml(spec));
    }
  }
}

inline void checkRoundTrip(const ranktable::ClusterSpec& spec,
                           const ranktable::LoadOptions& options) {
  ranktable::ClusterSpec again;
  ranktable::Diagnostics diagnostics;
  const std::string yaml = ranktable::toYaml(spec);
  Status status = ranktable::parseClusterYaml(yaml, options, &again, &diagnostics);
  if (!status.ok() || again != spec)
    fail("YAML round trip changed the spec", yaml + status.toString());
  const std::string json = ranktable::toJson(spec);
  status = ranktable::parseRankTableJson(json, options, &again, &diagnostics);
  if (!status.ok() || again != spec)
    fail("JSON round trip changed the spec", json + status.toString());
}

inline int fuzzLoader(ranktable::Format format, const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ranktable::LoadOptions options;
  options.logWarnings = false;
  options.timeoutMs = 0;
  ranktable::ClusterSpec spec;
  ranktable::Diagnostics diagnostics;
  const Status status = format == ranktable::Format::kJson
                            ? ranktable::parseRankTableJson(text, options, &spec, &diagnostics)
                            : ranktable::parseClusterYaml(text, options, &spec, &diagnostics);
  std::string all;
  for (const auto& d : diagnostics.all()) all += d.toString();
  if (status.ok() == diagnostics.hasErrors()) fail("status disagrees with diagnostics", all);
  if (!status.ok()) return 0;
  checkSpec(spec);
  checkRoundTrip(spec, options);
  return 0;
}

}  // namespace cohort::fuzz
