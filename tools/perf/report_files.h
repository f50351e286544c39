// cohort-perf's file outputs, written by rank 0 at the end of the run: --json (the
// same numbers as the table, for machines) and --plot (busbw against size, one line
// per block, as an SVG drawn by hand: axes, ticks, polylines and a legend).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/perf/options.h"
#include "tools/perf/results.h"

namespace cohort::perf {

/// Writes the run as JSON. kSystemError naming the path if it cannot be written.
Status writeJson(const std::string& path, const PerfOptions& options, const RunInfo& info,
                 const std::vector<BlockResult>& blocks,
                 const std::optional<StreamOverhead>& overhead);

/// The SVG document: log2 size on x, busbw on y, one <polyline> per block with at
/// least one row, and a legend naming each block.
std::string svgPlot(const RunInfo& info, const std::vector<BlockResult>& blocks);

/// Writes svgPlot() to `path`. kSystemError naming the path on failure.
Status writeSvgPlot(const std::string& path, const RunInfo& info,
                    const std::vector<BlockResult>& blocks);

}  // namespace cohort::perf
