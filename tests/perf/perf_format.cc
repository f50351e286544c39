#include "perf/perf_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

#include "perf/perf_job.h"

namespace cohort::perf::test {

namespace {

const char* kColumns =
    "#       size         count      type   redop    root        time     algbw     busbw  #wrong"
    "   iters  algo";
const char* kUnits =
    "#        (B)    (elements)                                  (us)    (GB/s)    (GB/s)";

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// The peers' row format (coll_bench_common.h) for the parsed values.
std::string peersRow(const ParsedRow& r) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%12zu  %12zu  %8s  %6s  %6d  %10.2f  %8.3f  %8.3f  %6lld  %6d",
                r.size, r.count, r.type.c_str(), r.redop.c_str(), r.root, r.time, r.algbw, r.busbw,
                r.wrong, r.iters);
  return buf;
}

bool parseRow(const std::string& line, ParsedRow* r) {
  static const std::regex kRow(
      R"(^ *(\d+) +(\d+) +(\S+) +(\S+) +(-?\d+) +(\d+\.\d\d) +(\d+\.\d{3}) +(\d+\.\d{3}) +(\d+) +(\d+)  (\S+)$)");
  std::smatch m;
  if (!std::regex_match(line, m, kRow)) return false;
  r->size = std::stoull(m[1]);
  r->count = std::stoull(m[2]);
  r->type = m[3];
  r->redop = m[4];
  r->root = std::stoi(m[5]);
  r->time = std::stod(m[6]);
  r->algbw = std::stod(m[7]);
  r->busbw = std::stod(m[8]);
  r->wrong = std::stoll(m[9]);
  r->iters = std::stoi(m[10]);
  r->algo = m[11];
  return true;
}

void parseHeader(const std::vector<std::string>& lines, ParsedOutput* out) {
  ASSERT_GE(lines.size(), 6u) << "too short";
  EXPECT_EQ(lines[0], "# nccl-tests-style CPU collective benchmark");
  std::smatch m;
  static const std::regex kLib(
      R"(^# lib=cohort  version="\d+\.\d+\.\d+"  transport=(\S+)  nranks=(\d+)$)");
  ASSERT_TRUE(std::regex_match(lines[1], m, kLib)) << lines[1];
  out->transport = m[1];
  out->nranks = std::stoi(m[2]);
  static const std::regex kSweep(
      R"(^# minBytes=\d+ maxBytes=\d+ step=\S+x iters=\d+ warmup=\d+ budget=\d+ check=[012] )"
      R"(time=(rank0|mean|min|max)-over-ranks dtype=\S+ op=\S+ inplace=[01] root=\d+$)");
  EXPECT_TRUE(std::regex_match(lines[2], kSweep)) << lines[2];
  const std::regex kCohort(R"(^# cohort \d+\.\d+\.\d+  api=\d+\.\d+  protocol=\d+  ranks=)" +
                           std::to_string(out->nranks) +
                           R"(  nodes=\d+  local_ranks=\d+  device\(rank 0\)=\d+$)");
  EXPECT_TRUE(std::regex_match(lines[3], kCohort)) << lines[3];
  static const std::regex kChosen(
      R"(^# chosen after warm-up: (\S+(?: \S+)?)  \(per size: column algo\)  -A \S+  -t \S+$)");
  EXPECT_TRUE(std::regex_match(lines[4], m, kChosen)) << lines[4];
  if (m.size() > 1) out->choice = m[1];
  EXPECT_EQ(lines[5], "#");
}

// Parses one block starting at lines[i]; returns the index after it.
std::size_t parseBlock(const std::vector<std::string>& lines, std::size_t i, ParsedBlock* b) {
  std::smatch m;
  if (lines[i].rfind("# note: ", 0) == 0) b->note = lines[i++].substr(8);
  static const std::regex kColl(
      R"(^# Collective: (\S+)  kind=(\S+)  lib=cohort  transport=(\S+)  nranks=(\d+)(  \(in place\))?$)");
  EXPECT_TRUE(std::regex_match(lines[i], m, kColl)) << "line " << i << ": " << lines[i];
  if (m.empty()) return lines.size();
  b->name = m[1];
  b->kind = m[2];
  b->transport = m[3];
  b->nranks = std::stoi(m[4]);
  b->inPlace = m[5].matched;
  EXPECT_EQ(lines.at(i + 1), kColumns);
  EXPECT_EQ(rtrim(lines.at(i + 2)), kUnits);
  for (i += 3; i < lines.size() && lines[i].rfind("# Wrong", 0) != 0; ++i) {
    ParsedRow r;
    EXPECT_TRUE(parseRow(lines[i], &r)) << "not a row: " << lines[i];
    // The first ten columns print exactly as the peers print them.
    EXPECT_EQ(lines[i].substr(0, peersRow(r).size()), peersRow(r));
    b->rows.push_back(r);
  }
  static const std::regex kWrong(R"(^# Wrong elements       : (\d+) (OK|FAILED)$)");
  static const std::regex kAvg(R"(^# Avg bus bandwidth    : (\d+\.\d{4})$)");
  EXPECT_LT(i + 2, lines.size()) << "block " << b->name << " has no footer";
  if (i + 2 >= lines.size()) return lines.size();
  EXPECT_TRUE(std::regex_match(lines[i], m, kWrong)) << lines[i];
  if (!m.empty()) {
    b->wrong = std::stoll(m[1]);
    b->wrongVerdict = m[2];
  }
  EXPECT_TRUE(std::regex_match(lines[i + 1], m, kAvg)) << lines[i + 1];
  if (!m.empty()) b->avgBusbw = std::stod(m[1]);
  EXPECT_EQ(lines[i + 2], "#");
  return i + 3;
}

}  // namespace

ParsedOutput parsePerfOutput(const std::string& text) {
  ParsedOutput out;
  const std::vector<std::string> lines = splitLines(text);
  parseHeader(lines, &out);
  std::size_t i = 6;
  while (i < lines.size()) {
    const bool blockStart =
        lines[i].rfind("# Collective:", 0) == 0 || lines[i].rfind("# note:", 0) == 0;
    if (!blockStart) {
      out.trailer.assign(lines.begin() + static_cast<long>(i), lines.end());
      break;
    }
    ParsedBlock b;
    i = parseBlock(lines, i, &b);
    out.blocks.push_back(b);
  }
  return out;
}

std::string rankZeroLines(const std::string& text) {
  std::string out;
  for (const auto& line : splitLines(text)) {
    if (line.rfind("[0] ", 0) == 0) out += line.substr(4) + "\n";
  }
  return out;
}

::testing::AssertionResult isRoundedQuotient(double printed, double printedHalfUnit, double num,
                                             double numHalfUnit, double den, double denHalfUnit) {
  // The smallest and largest quotients of true values within the half units, widened by the
  // quotient's own rounding and by a hair of double arithmetic (a value on a rounding edge).
  const double kSlack = 1e-9;
  const double lo = std::max(0.0, num - numHalfUnit) / (den + denHalfUnit) - printedHalfUnit;
  const double hi =
      den > denHalfUnit ? (num + numHalfUnit) / (den - denHalfUnit) + printedHalfUnit : HUGE_VAL;
  if (printed >= lo - kSlack * std::abs(lo) && printed <= hi + kSlack * std::abs(hi)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "printed " << printed << " is not " << num << " / " << den << " (each rounded): "
         << "outside [" << lo << ", " << hi << "]";
}

void expectConsistentNumbers(const ParsedBlock& b, int nranks) {
  const double n = nranks;
  double factor = 1;
  if (b.kind == "allreduce") factor = 2 * (n - 1) / n;
  if (b.kind == "allgather" || b.kind == "reduce_scatter" || b.kind == "alltoall") {
    factor = (n - 1) / n;
  }
  double sum = 0;
  for (const auto& r : b.rows) {
    ASSERT_GT(r.time, 0) << b.name << " " << r.size;
    // The row prints time with two decimals and the rates with three, so the true time lies
    // within half a unit of the printed one: algbw must fall in the range that interval gives
    // (at 0.33 us that is +-1.5%), wherever the machine's speed puts the time.
    const double kTimeHalfUnit = 0.005, kRateHalfUnit = 0.0005;
    // B/us -> GB/s; the size is exact.
    EXPECT_TRUE(isRoundedQuotient(r.algbw, kRateHalfUnit, static_cast<double>(r.size) / 1e3, 0,
                                  r.time, kTimeHalfUnit))
        << b.name << " at " << r.size;
    // busbw is computed from the unrounded algbw: both roundings bound the difference.
    EXPECT_NEAR(r.busbw, r.algbw * factor, kRateHalfUnit * (1 + factor)) << b.name << " at "
                                                                         << r.size;
    sum += r.busbw;
  }
  if (!b.rows.empty()) {
    EXPECT_NEAR(b.avgBusbw, sum / static_cast<double>(b.rows.size()), 0.001) << b.name;
  }
}

}  // namespace cohort::perf::test
