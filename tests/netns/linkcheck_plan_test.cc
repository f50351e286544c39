// The probe plan of cohort-linkcheck, pure rank arithmetic: every pair once per
// pass, steps of disjoint pairs that never give a node more probes than its
// processors, the waits that order a gated node's steps, the processors each
// end takes, and the time bound that grows linearly with the ranks.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_util.h"
#include "tools/linkcheck/check_limits.h"
#include "tools/linkcheck/probe_plan.h"

namespace cohort::linkcheck {
namespace {

// `nodes` nodes of `perNode` ranks each (ranks of a node contiguous), `slots`
// processors each.
PlanInput job(int nodes, int perNode, int slots, int passes = 1) {
  PlanInput in;
  in.size = nodes * perNode;
  for (int r = 0; r < in.size; ++r) in.nodeOf.push_back(r / perNode);
  in.slots.assign(static_cast<std::size_t>(nodes), slots);
  in.passes = passes;
  return in;
}

TEST(RoundRobin, EveryPairMeetsExactlyOnce) {
  for (int n = 1; n <= 9; ++n) {
    std::set<std::pair<int, int>> met;
    for (int round = 0; round < roundCount(n); ++round) {
      for (int r = 0; r < n; ++r) {
        const int p = roundPeer(r, round, n);
        if (p < 0) continue;
        ASSERT_NE(p, r) << "n " << n << " round " << round;
        ASSERT_EQ(roundPeer(p, round, n), r) << "n " << n << " round " << round << " rank " << r;
        if (r < p) {
          EXPECT_TRUE(met.insert({r, p}).second) << r << "-" << p << " met twice";
        }
      }
    }
    EXPECT_EQ(met.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << "n " << n;
  }
}

TEST(ProbePlan, StepsAreDisjointCoverEveryPairAndFitTheProcessors) {
  for (const PlanInput& in : {job(1, 4, 1), job(1, 8, 1), job(1, 8, 3), job(2, 2, 1), job(3, 4, 2),
                              job(4, 2, 8), job(2, 5, 2)}) {
    std::set<std::pair<int, int>> seen;
    for (const auto& step : ProbePlan::passSteps(in)) {
      std::set<int> ranks;
      std::map<int, int> load;  // per node: processors in use (a pair within a node takes one)
      for (const auto& [a, b] : step) {
        EXPECT_TRUE(ranks.insert(a).second && ranks.insert(b).second) << "a rank twice in a step";
        EXPECT_TRUE(seen.insert({a, b}).second);
        const int na = in.nodeOf[static_cast<std::size_t>(a)];
        const int nb = in.nodeOf[static_cast<std::size_t>(b)];
        ++load[na];
        if (nb != na) ++load[nb];
      }
      for (const auto& [node, used] : load) {
        const int ranksThere =
            static_cast<int>(std::count(in.nodeOf.begin(), in.nodeOf.end(), node));
        if (ranksThere > in.slots[static_cast<std::size_t>(node)]) {
          EXPECT_LE(used, in.slots[static_cast<std::size_t>(node)]) << "node " << node;
        }
      }
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(in.size * (in.size - 1) / 2));
  }
  // With a processor per rank, a pass is the tournament itself.
  EXPECT_EQ(ProbePlan::passSteps(job(4, 2, 8)).size(), static_cast<std::size_t>(roundCount(8)));
  // One processor for 8 ranks of one node: one probe at a time.
  EXPECT_EQ(ProbePlan::passSteps(job(1, 8, 1)).size(), 28u);
}

TEST(ProbePlan, AGatedRankWaitsForItsNodesPreviousStep) {
  const PlanInput in = job(2, 4, 1, 2);  // 2 nodes x 4 ranks, one processor each
  const auto pass = ProbePlan::passSteps(in);
  for (int rank = 0; rank < in.size; ++rank) {
    const ProbePlan plan = ProbePlan::forRank(in, rank);
    ASSERT_TRUE(plan.gated());
    EXPECT_EQ(plan.stepCount(), 2 * static_cast<int>(pass.size()));
    EXPECT_EQ(plan.steps().size(), 2u * 7);  // every peer, every pass
    const int node = in.nodeOf[static_cast<std::size_t>(rank)];
    for (const PlanStep& st : plan.steps()) {
      // The node's last busy step before this one, and who of the node was in it.
      int after = -1;
      std::set<int> there;
      for (int s = st.step - 1; s >= 0 && after < 0; --s) {
        for (const auto& [a, b] : pass[static_cast<std::size_t>(s) % pass.size()]) {
          for (int r : {a, b}) {
            if (in.nodeOf[static_cast<std::size_t>(r)] == node) there.insert(r);
          }
        }
        if (!there.empty()) after = s;
      }
      EXPECT_EQ(st.after, after) << "rank " << rank << " step " << st.step;
      there.erase(rank);
      EXPECT_EQ(std::set<int>(st.waitFor.begin(), st.waitFor.end()), there)
          << "rank " << rank << " step " << st.step;
      EXPECT_EQ(st.processor, 0);  // one processor
    }
  }
}

TEST(ProbePlan, EndsThatRunAtOnceTakeDistinctProcessors) {
  const PlanInput in = job(1, 6, 3);         // gated: 6 ranks, 3 processors
  std::map<int, std::map<int, int>> byStep;  // step -> rank -> processor
  for (int rank = 0; rank < in.size; ++rank) {
    const ProbePlan plan = ProbePlan::forRank(in, rank);
    for (const PlanStep& st : plan.steps()) {
      byStep[st.step][rank] = st.processor;
      EXPECT_LT(st.processor, 3);
    }
  }
  for (const auto& [step, procs] : byStep) {
    std::map<int, std::set<int>> users;  // processor -> ranks on it
    for (const auto& [rank, p] : procs) users[p].insert(rank);
    for (const auto& [p, ranks] : users) {
      ASSERT_EQ(ranks.size(), 2u) << "step " << step << ": the two ends of one pair share " << p;
      const int a = *ranks.begin();
      const ProbePlan plan = ProbePlan::forRank(in, a);
      for (const PlanStep& st : plan.steps()) {
        if (st.step == step) {
          EXPECT_EQ(st.peer, *ranks.rbegin());
        }
      }
    }
  }
  // Not gated: every rank keeps the processor of its place on its node.
  const ProbePlan wide = ProbePlan::forRank(job(2, 2, 4), 3);
  EXPECT_FALSE(wide.gated());
  for (const PlanStep& st : wide.steps()) {
    EXPECT_EQ(st.processor, st.peer == 2 ? 0 : 1) << "peer " << st.peer;
  }
}

TEST(ProbePlan, NodesAreTheMachinesThatShareProcessors) {
  // Four ranks in two network namespaces (host ids) of one machine (boot id), and
  // a rank of another machine that did not say its processors.
  const PlanInput in = makePlanInput({{3, "boot-1", "ns-a"},
                                      {2, "boot-1", "ns-a"},
                                      {4, "boot-1", "ns-b"},
                                      {0, "", "ns-b"},
                                      {0, "boot-2", "other"},
                                      {0, "", ""}},
                                     10);
  EXPECT_EQ(in.size, 6);
  EXPECT_EQ(in.passes, 10);
  EXPECT_EQ(in.nodeOf, (std::vector<int>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(in.slots, (std::vector<int>{2, 1, 1, 1}));  // the fewest reported; 1 if none
}

TEST(ProbePlan, TextRoundTripsAndRejectsGarbage) {
  PlanInput in = job(3, 2, 4, 10);
  in.slots[1] = 1;
  PlanInput back;
  ASSERT_OK(planFromText(planText(in), &back));
  EXPECT_EQ(back.size, 6);
  EXPECT_EQ(back.passes, 10);
  EXPECT_EQ(back.nodeOf, in.nodeOf);
  EXPECT_EQ(back.slots, in.slots);
  EXPECT_ERROR(planFromText("3 1\n0 0 7\n1 ", &back), kParseError, "not a probe plan");
  EXPECT_ERROR(planFromText("junk", &back), kParseError, "not a probe plan");
}

TEST(TimeBound, GrowsLinearlyWithTheRanks) {
  const int k = limits::kDefaultRepeat;
  EXPECT_DOUBLE_EQ(limits::defaultTimeoutS(8, k), 33.5);
  EXPECT_DOUBLE_EQ(limits::defaultTimeoutS(64, k), 61.5);
  EXPECT_DOUBLE_EQ(limits::defaultTimeoutS(1024, k), 541.5);
  EXPECT_DOUBLE_EQ(limits::defaultTimeoutS(2048, k) - limits::defaultTimeoutS(1024, k),
                   limits::defaultTimeoutS(1025, k) - limits::defaultTimeoutS(1, k));
}

}  // namespace
}  // namespace cohort::linkcheck
