// cohort-perf's rules without a job: size parsing and sweeps, nccl-tests and
// hccl_test layouts, bus bandwidth factors, the -B budget, the option defaults, the
// data patterns (every result exact, the check catching one flipped bit), the plot.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "tools/perf/collectives.h"
#include "tools/perf/data_pattern.h"
#include "tools/perf/options.h"
#include "tools/perf/report_files.h"

namespace cohort::perf {
namespace {

TEST(PerfRules, ParseSize) {
  std::size_t b = 0;
  const std::pair<const char*, std::size_t> good[] = {
      {"1024", 1024},   {"1K", 1024},   {"1k", 1024}, {"64M", 64u << 20},
      {"1G", 1u << 30}, {"1KiB", 1024}, {"8KB", 8192}};
  for (const auto& [text, bytes] : good) {
    EXPECT_TRUE(parseSize(text, &b)) << text;
    EXPECT_EQ(b, bytes) << text;
  }
  for (const char* bad : {"", "abc", "-1", "1X", "1.5K"}) EXPECT_FALSE(parseSize(bad, &b)) << bad;
}

TEST(PerfRules, SweepsAsNcclTestsAndHcclTest) {
  const auto peers = ncclSizes(1024, 64u << 20, 4, 0);
  ASSERT_EQ(peers.size(), 9u);  // the peers' sweep: 1K .. 64M, factor 4
  EXPECT_EQ(peers.front(), 1024u);
  EXPECT_EQ(peers.back(), 64u << 20);
  EXPECT_EQ(ncclSizes(1000, 5000, 2, 0), (std::vector<std::size_t>{1000, 2000, 4000}));
  EXPECT_EQ(ncclSizes(1024, 4096, 0, 1024), (std::vector<std::size_t>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(hcclSizes(8192, 65536, 2, 0), (std::vector<std::size_t>{8192, 16384, 32768, 65536}));
  EXPECT_EQ(hcclSizes(100, 100, 0, 1), (std::vector<std::size_t>{100}));
  EXPECT_EQ(hcclSizes(100, 250, 1.5, 0), (std::vector<std::size_t>{100, 150, 225}));
}

TEST(PerfRules, NcclLayouts) {
  Layout l = ncclLayout(Coll::kAllReduce, 1024, 2, 4);
  EXPECT_EQ(l.paramCount, 256u);
  EXPECT_EQ(l.bytes, 1024u);
  l = ncclLayout(Coll::kAllGather, 1024, 3, 4);  // (256 / 3) rounded down to 4 floats
  EXPECT_EQ(l.paramCount, 84u);
  EXPECT_EQ(l.sendCount, 84u);
  EXPECT_EQ(l.recvCount, 252u);
  EXPECT_EQ(l.bytes, 1008u);
  l = ncclLayout(Coll::kReduceScatter, 1024, 3, 4);
  EXPECT_EQ(l.sendCount, 252u);
  EXPECT_EQ(l.recvCount, 84u);
  EXPECT_EQ(l.bytes, 1008u);
  l = ncclLayout(Coll::kAllToAll, 4096, 4, 4);
  EXPECT_EQ(l.chunk, 256u);
  EXPECT_EQ(l.bytes, 4096u);
  l = ncclLayout(Coll::kAllGather, 1000, 3, 1);  // int8: chunks of 16 elements
  EXPECT_EQ(l.chunk, 320u);
  l = ncclLayout(Coll::kAllGather, 1000, 3, 8);  // double: chunks of 2 elements
  EXPECT_EQ(l.chunk, 40u);
  EXPECT_EQ(ncclLayout(Coll::kAllGather, 16, 8, 4).bytes, 0u);  // nothing per rank
}

TEST(PerfRules, HcclLayouts) {
  Layout l = hcclLayout(Coll::kAllReduce, 8190, 2, 4);  // count rounded up
  EXPECT_EQ(l.paramCount, 2048u);
  EXPECT_EQ(l.bytes, 8190u);
  EXPECT_EQ(l.bwBytes, 8192u);
  l = hcclLayout(Coll::kAllGather, 8192, 3, 4);  // data_size is the whole output
  EXPECT_EQ(l.paramCount, 682u);
  EXPECT_EQ(l.recvCount, 2046u);
  EXPECT_EQ(l.bytes, 8184u);
  l = hcclLayout(Coll::kAllToAll, 8192, 4, 4);
  EXPECT_EQ(l.chunk, 512u);
  EXPECT_EQ(l.bytes, 8192u);
}

TEST(PerfRules, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busFactor(Coll::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busFactor(Coll::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor(Coll::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busFactor(Coll::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busFactor(Coll::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busFactor(Coll::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busFactor(Coll::kSendRecv, 8), 1.0);
}

TEST(PerfRules, BudgetAsThePeersHarness) {
  PerfOptions o;
  o.iters = 50;
  o.warmup = 10;
  o.budget = 512u << 20;  // run_peers.sh: -n 50 -w 10 -B 512M
  int iters = 0, warmup = 0;
  budgetIterations(o, 64u << 20, &iters, &warmup);
  EXPECT_EQ(iters, 8);
  EXPECT_EQ(warmup, 2);
  budgetIterations(o, 16u << 20, &iters, &warmup);
  EXPECT_EQ(iters, 32);
  EXPECT_EQ(warmup, 8);
  budgetIterations(o, 1024, &iters, &warmup);
  EXPECT_EQ(iters, 50);
  EXPECT_EQ(warmup, 10);
  o.budget = 1024;
  budgetIterations(o, 1u << 20, &iters, &warmup);
  EXPECT_EQ(iters, 2);
  EXPECT_EQ(warmup, 1);
}

int parse(std::vector<const char*> args, PerfOptions* o) {
  args.insert(args.begin(), "cohort-perf");
  return parseOptions(static_cast<int>(args.size()), const_cast<char**>(args.data()), o);
}

TEST(PerfRules, OptionDefaultsAndModes) {
  PerfOptions o;
  ASSERT_EQ(parse({"allreduce"}, &o), -1);
  EXPECT_EQ(o.minBytes, 1024u);
  EXPECT_EQ(o.maxBytes, 64u << 20);
  EXPECT_EQ(o.factor, 4.0);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.warmup, 5);
  EXPECT_EQ(o.check, 1);
  EXPECT_EQ(o.average, 1);
  EXPECT_EQ(o.types, std::vector<DataType>{DataType::kFloat32});
  EXPECT_EQ(o.ops, std::vector<ReduceOp>{ReduceOp::kSum});
  ASSERT_EQ(parse({"all", "-d", "all", "-o", "all", "-z", "1", "-B", "512M"}, &o), -1);
  EXPECT_EQ(o.collectives.size(), 7u);
  EXPECT_EQ(o.types.size(), 12u);
  EXPECT_EQ(o.ops.size(), 5u);
  EXPECT_TRUE(o.inPlace);
  EXPECT_EQ(o.budget, 512u << 20);
  ASSERT_EQ(parse({"reduce_scatter", "--hccl", "-d", "bfp16"}, &o), -1);
  EXPECT_EQ(o.collectives, std::vector<Coll>{Coll::kReduceScatter});
  EXPECT_EQ(o.minBytes, 64u << 20);  // hccl_test's defaults: one size, rank 0's time
  EXPECT_EQ(o.maxBytes, 64u << 20);
  EXPECT_EQ(o.average, 0);
  EXPECT_EQ(o.types, std::vector<DataType>{DataType::kBFloat16});
  ASSERT_EQ(parse({"allreduce,reduce_scatter,alltoall"}, &o), -1);
  EXPECT_EQ(o.collectives,
            (std::vector<Coll>{Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllToAll}));
  EXPECT_FALSE(o.allCollectives);
  EXPECT_EQ(parse({"allreduce,gather"}, &o), 2);
  EXPECT_EQ(parse({"allreduce", "-c", "3"}, &o), 2);
  EXPECT_EQ(parse({"--help"}, &o), 0);
}

// Every (type, op, rank count): inputs and results are integers within the exact
// range of the type, avg divides exactly, and the pattern tells ranks apart.
TEST(PerfRules, PatternsAreExactForEveryTypeAndOp) {
  for (DataType t : allTypes()) {
    const double limit = typeInfo(t).maxExact;
    for (int op = 0; op < kReduceOpCount; ++op) {
      if (static_cast<ReduceOp>(op) == ReduceOp::kAvg && !isFloatType(t)) continue;
      for (int n : {1, 2, 3, 4, 7, 8, 16, 64}) {
        const Pattern p(t, static_cast<ReduceOp>(op), n, true);
        for (std::size_t i = 0; i < 3000; i += 7) {
          const double v = p.reduced(i);
          ASSERT_EQ(v, std::floor(v)) << typeInfo(t).name << " op " << op << " n " << n;
          ASSERT_LE(v, limit) << typeInfo(t).name << " op " << op << " n " << n << " i " << i;
          ASSERT_GE(p.input(n - 1, i), 0.0);
        }
      }
    }
  }
}

TEST(PerfRules, FloatSumPatternIsThePeersVal) {
  const Pattern p(DataType::kFloat32, ReduceOp::kSum, 8, true);
  for (int r = 0; r < 8; ++r) {
    for (std::size_t i : {0u, 1u, 1000u, 123457u}) {
      EXPECT_EQ(p.input(r, i), static_cast<float>(((i + 97u * r) & 1023u) + 1024u * r));
    }
  }
}

TEST(PerfRules, MaxComesFromDifferentRanks) {
  const Pattern p(DataType::kFloat32, ReduceOp::kMax, 4, true);
  std::set<int> winners;
  for (std::size_t i = 0; i < 2000; ++i) {
    for (int r = 0; r < 4; ++r) {
      if (p.input(r, i) == p.reduced(i)) winners.insert(r);
    }
  }
  EXPECT_EQ(winners.size(), 4u);
}

TEST(PerfRules, CheckCatchesOneFlippedBitInEveryType) {
  for (DataType t : allTypes()) {
    const Pattern p(t, ReduceOp::kSum, 1, false);
    std::vector<unsigned char> buf(1000 * 8);
    fillInputs(t, buf.data(), 1000, p, 0);
    EXPECT_EQ(countWrongInputs(t, buf.data(), 1000, p, 0, 0), 0) << typeInfo(t).name;
    EXPECT_EQ(countWrongReduced(t, buf.data(), 1000, p, 0), 0) << typeInfo(t).name;
    EXPECT_EQ(countWrongInputs(t, buf.data(), 1000, p, 0, 1), 1000) << "shifted";
    corruptElement(t, buf.data(), 17);
    EXPECT_EQ(countWrongInputs(t, buf.data(), 1000, p, 0, 0), 1) << typeInfo(t).name;
  }
}

TEST(PerfRules, HalfAndBfloat16Encodings) {
  const Pattern p(DataType::kFloat16, ReduceOp::kSum, 1, false);  // input(0, i) = i & 1023
  std::uint16_t h[4];
  fillInputs(DataType::kFloat16, h, 4, p, 0);
  EXPECT_EQ(h[0], 0x0000);
  EXPECT_EQ(h[1], 0x3c00);
  EXPECT_EQ(h[3], 0x4200);
  const Pattern q(DataType::kBFloat16, ReduceOp::kSum, 1, false);
  std::uint16_t b[4];
  fillInputs(DataType::kBFloat16, b, 4, q, 0);
  EXPECT_EQ(b[1], 0x3f80);
  EXPECT_EQ(b[3], 0x4040);
}

TEST(PerfRules, SvgPlotDrawsEveryBlockWithRows) {
  RunInfo info;
  info.nranks = 2;
  std::vector<BlockResult> blocks(3);
  blocks[0].name = "allreduce";
  blocks[1].name = "a<b&c";
  blocks[2].name = "empty";
  for (int i = 0; i < 2; ++i) {
    for (std::size_t s : {1024u, 4096u}) {
      RowResult r;
      r.bytes = s;
      r.busbw = 1.5 * i + s / 4096.0;
      blocks[i].rows.push_back(r);
    }
  }
  const std::string svg = svgPlot(info, blocks);
  std::size_t polylines = 0;
  for (auto p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) {
    ++polylines;
  }
  EXPECT_EQ(polylines, 2u);
  EXPECT_NE(svg.find("<title>a&lt;b&amp;c</title>"), std::string::npos);
  EXPECT_EQ(svg.find("<title>empty</title>"), std::string::npos);
  EXPECT_NE(svg.find(">1K<"), std::string::npos);
  EXPECT_NE(svg.find(">4K<"), std::string::npos);
}

}  // namespace
}  // namespace cohort::perf
