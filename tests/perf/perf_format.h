// Reading cohort-perf's table back while asserting, line by line, that it is in the
// peers' format (../shared/peers/README.md "Output format", coll_bench_common.h's
// printf formats): header, "# Collective:" line, the two column headers, rows whose
// first ten columns re-print identically with the peers' format, the wrong-elements
// and average-bus-bandwidth lines. Failures are gtest failures naming the line.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace cohort::perf::test {

struct ParsedRow {
  std::size_t size = 0, count = 0;
  std::string type, redop;
  int root = 0;
  double time = 0, algbw = 0, busbw = 0;
  long long wrong = 0;
  int iters = 0;
  std::string algo;
};

struct ParsedBlock {
  std::string name, kind, transport, note;
  int nranks = 0;
  bool inPlace = false;
  std::vector<ParsedRow> rows;
  long long wrong = 0;
  std::string wrongVerdict;  ///< OK or FAILED
  double avgBusbw = 0;
};

struct ParsedOutput {
  std::string transport;  ///< from the header
  int nranks = 0;
  std::string choice;                ///< "allreduce=mesh shm"
  std::vector<std::string> trailer;  ///< lines after the last block (stream overhead)
  std::vector<ParsedBlock> blocks;
};

/// Parses rank 0's stdout, asserting the format (gtest non-fatal failures).
ParsedOutput parsePerfOutput(const std::string& text);

/// Lines printed by cohortrun as "[0] text": the text of rank 0's lines only.
std::string rankZeroLines(const std::string& text);

/// Whether `printed`, a quotient printed to within `printedHalfUnit` (half its last digit's
/// unit), can be num / den when num and den are themselves printed values within numHalfUnit and
/// denHalfUnit of the true ones (all non-negative). A recomputed quotient is only as exact as
/// those roundings allow, wherever the machine's speed puts the times.
::testing::AssertionResult isRoundedQuotient(double printed, double printedHalfUnit, double num,
                                             double numHalfUnit, double den, double denHalfUnit);

/// Checks every row's arithmetic: algbw = bwBytes / time, busbw = algbw * factor
/// (factor by kind for `nranks`), and the block's average busbw.
void expectConsistentNumbers(const ParsedBlock& block, int nranks);

}  // namespace cohort::perf::test
