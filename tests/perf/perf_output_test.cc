// cohort-perf run as a real job of 2 (or 3) processes: its table, line by line, in
// the peers' format, with the nccl-tests sizes, counts and bandwidth arithmetic,
// zero wrong elements, and a failing check when an element is corrupted.
#include <gtest/gtest.h>

#include "perf/perf_format.h"
#include "perf/perf_job.h"

namespace cohort::perf::test {
namespace {

TEST(PerfOutput, AllreduceTwoRanksMatchesThePeersFormat) {
  const JobResult job = runPerf(2, {"allreduce", "-b", "1K", "-e", "64K"});
  ASSERT_EQ(job.exitCode(), 0) << job.allErrors();
  EXPECT_EQ(job.out[1], "") << "only rank 0 prints";
  const ParsedOutput out = parsePerfOutput(job.out[0]);
  EXPECT_EQ(out.nranks, 2);
  EXPECT_EQ(out.choice.rfind("allreduce=", 0), 0u) << out.choice;
  ASSERT_EQ(out.blocks.size(), 1u);
  const ParsedBlock& b = out.blocks[0];
  EXPECT_EQ(b.name, "allreduce");
  EXPECT_EQ(b.kind, "allreduce");
  EXPECT_EQ(b.transport, out.transport);
  EXPECT_EQ(b.nranks, 2);
  EXPECT_FALSE(b.inPlace);
  const std::vector<std::size_t> sizes = {1024, 4096, 16384, 65536};
  ASSERT_EQ(b.rows.size(), sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const ParsedRow& r = b.rows[i];
    EXPECT_EQ(r.size, sizes[i]);
    EXPECT_EQ(r.count, sizes[i] / 4);
    EXPECT_EQ(r.type, "float");
    EXPECT_EQ(r.redop, "sum");
    EXPECT_EQ(r.root, -1);
    EXPECT_EQ(r.wrong, 0);
    EXPECT_EQ(r.iters, 20);
    EXPECT_EQ(r.algo.find("allreduce"), std::string::npos) << "algorithm/transport: " << r.algo;
  }
  EXPECT_EQ(b.wrong, 0);
  EXPECT_EQ(b.wrongVerdict, "OK");
  expectConsistentNumbers(b, 2);
  EXPECT_TRUE(out.trailer.empty());
}

struct Expected {
  const char* name;
  const char* kind;
  const char* redop;
  int root;
  std::size_t countAt1K;  // 2 ranks, float
  bool inPlace;
};

TEST(PerfOutput, AllCollectivesTwoRanks) {
  const JobResult job = runPerf(2, {"all", "-b", "1K", "-e", "64K"});
  ASSERT_EQ(job.exitCode(), 0) << job.allErrors();
  const ParsedOutput out = parsePerfOutput(job.out[0]);
  const Expected expected[] = {{"allreduce", "allreduce", "sum", -1, 256, false},
                               {"allgather", "allgather", "none", -1, 128, false},
                               {"reduce_scatter", "reduce_scatter", "sum", -1, 128, false},
                               {"broadcast", "broadcast", "none", 0, 256, true},
                               {"reduce", "reduce", "sum", 0, 256, false},
                               {"alltoall", "alltoall", "none", -1, 128, false},
                               {"sendrecv", "sendrecv", "none", -1, 256, false}};
  ASSERT_EQ(out.blocks.size(), std::size(expected));
  for (std::size_t k = 0; k < out.blocks.size(); ++k) {
    const ParsedBlock& b = out.blocks[k];
    const Expected& e = expected[k];
    EXPECT_EQ(b.name, e.name);
    EXPECT_EQ(b.kind, e.kind);
    EXPECT_EQ(b.inPlace, e.inPlace) << b.name;
    ASSERT_EQ(b.rows.size(), 4u) << b.name;
    for (std::size_t i = 0; i < b.rows.size(); ++i) {
      const ParsedRow& r = b.rows[i];
      EXPECT_EQ(r.size, std::size_t(1024) << (2 * i)) << b.name;
      EXPECT_EQ(r.count, e.countAt1K << (2 * i)) << b.name;
      EXPECT_EQ(r.redop, e.redop) << b.name;
      EXPECT_EQ(r.root, e.root) << b.name;
      EXPECT_EQ(r.wrong, 0) << b.name << " at " << r.size;
    }
    EXPECT_EQ(b.wrongVerdict, "OK") << b.name;
    expectConsistentNumbers(b, 2);
  }
}

// Three ranks: per-rank chunks are rounded down to 16 bytes, so "size" is a bit
// below the requested 1 KiB for the collectives with chunks (as nccl-tests).
TEST(PerfOutput, ThreeRanksRoundChunksAsNcclTests) {
  const JobResult job = runPerf(3, {"all", "-b", "1K", "-e", "1K"});
  ASSERT_EQ(job.exitCode(), 0) << job.allErrors();
  const ParsedOutput out = parsePerfOutput(job.out[0]);
  ASSERT_EQ(out.blocks.size(), 7u);
  for (const ParsedBlock& b : out.blocks) {
    ASSERT_EQ(b.rows.size(), 1u) << b.name;
    const bool chunked =
        b.kind == "allgather" || b.kind == "reduce_scatter" || b.kind == "alltoall";
    EXPECT_EQ(b.rows[0].size, chunked ? 1008u : 1024u) << b.name;  // 84 floats x 3 ranks
    EXPECT_EQ(b.rows[0].count, chunked ? 84u : 256u) << b.name;
    EXPECT_EQ(b.rows[0].wrong, 0) << b.name;
    expectConsistentNumbers(b, 3);
  }
}

TEST(PerfOutput, InPlaceVariantsFollowOutOfPlace) {
  const JobResult job = runPerf(2, {"all", "-b", "1K", "-e", "4K", "-z", "1"});
  ASSERT_EQ(job.exitCode(), 0) << job.allErrors();
  const ParsedOutput out = parsePerfOutput(job.out[0]);
  const std::vector<std::string> names = {"allreduce",      "allreduce_inplace",
                                          "allgather",      "allgather_inplace",
                                          "reduce_scatter", "reduce_scatter_inplace",
                                          "broadcast",      "reduce",
                                          "reduce_inplace", "alltoall",
                                          "sendrecv"};
  ASSERT_EQ(out.blocks.size(), names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    const ParsedBlock& b = out.blocks[k];
    EXPECT_EQ(b.name, names[k]);
    EXPECT_EQ(b.inPlace, b.name.find("_inplace") != std::string::npos || b.name == "broadcast");
    EXPECT_EQ(b.wrong, 0) << b.name;
    ASSERT_EQ(b.rows.size(), 2u) << b.name;
  }
}

TEST(PerfOutput, EveryTypeAndOpChecksExactly) {
  const JobResult job =
      runPerf(2, {"allreduce", "-b", "1K", "-e", "4K", "-d", "all", "-o", "all", "-n", "2"});
  ASSERT_EQ(job.exitCode(), 0) << job.allErrors();
  const ParsedOutput out = parsePerfOutput(job.out[0]);
  // 8 integer types x {sum, prod, max, min} + 4 floating types x 5 ops.
  ASSERT_EQ(out.blocks.size(), 52u);
  for (const ParsedBlock& b : out.blocks) {
    EXPECT_EQ(b.wrong, 0) << b.name;
    ASSERT_EQ(b.rows.size(), 2u) << b.name;
    EXPECT_EQ(b.rows[0].size, 1024u) << b.name;
  }
  EXPECT_EQ(out.blocks[0].name, "allreduce_int8");
  EXPECT_EQ(out.blocks[0].rows[0].type, "int8");
  EXPECT_EQ(out.blocks[0].rows[0].count, 1024u);
  EXPECT_EQ(out.blocks[1].name, "allreduce_int8_prod");
  EXPECT_EQ(out.blocks[1].rows[0].redop, "prod");
}

TEST(PerfOutput, CorruptedElementFailsTheCheckWithExit3) {
  const JobResult job = runPerf(2, {"all", "-b", "1K", "-e", "4K", "--inject-error"});
  for (int code : job.exitCodes) EXPECT_EQ(code, 3) << job.allErrors();
  const ParsedOutput out = parsePerfOutput(job.out[0]);
  ASSERT_EQ(out.blocks.size(), 7u);
  for (const ParsedBlock& b : out.blocks) {
    ASSERT_EQ(b.rows.size(), 2u) << b.name;
    for (const ParsedRow& r : b.rows) EXPECT_EQ(r.wrong, 1) << b.name << " at " << r.size;
    EXPECT_EQ(b.wrong, 2) << b.name;
    EXPECT_EQ(b.wrongVerdict, "FAILED") << b.name;
  }
}

// -B: iters = min(n, max(2, B/size)), warmup = min(w, max(1, iters/4)).
TEST(PerfOutput, BudgetCapsIterations) {
  const JobResult job =
      runPerf(2, {"allreduce", "-b", "1K", "-e", "64K", "-n", "50", "-w", "10", "-B", "16K"});
  ASSERT_EQ(job.exitCode(), 0) << job.allErrors();
  const ParsedOutput out = parsePerfOutput(job.out[0]);
  ASSERT_EQ(out.blocks.size(), 1u);
  const std::vector<int> iters = {16, 4, 2, 2};
  ASSERT_EQ(out.blocks[0].rows.size(), iters.size());
  for (std::size_t i = 0; i < iters.size(); ++i) {
    EXPECT_EQ(out.blocks[0].rows[i].iters, iters[i]) << out.blocks[0].rows[i].size;
  }
}

}  // namespace
}  // namespace cohort::perf::test
