// The per-process files COHORT_TRACE=DIR writes (DIR/cohort-trace-<pid>.json),
// read for cohort-trace's subcommands.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cohort::tracetool {

/// The rank of a process whose trace names none: it sorts last.
constexpr long kNoRank = 1L << 30;

/// One process's trace and its rank ("rank R" process name, or kNoRank).
struct RankTrace {
  long rank = 0;
  nlohmann::json trace;
};

/// The traces in `dir`, ranks in order. Files that are not Cohort traces are
/// skipped with a note on stderr; false (and a message on stderr) when the folder
/// cannot be read or holds none.
bool loadTraces(const std::string& dir, std::vector<RankTrace>* traces);

}  // namespace cohort::tracetool
