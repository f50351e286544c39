// The verdict logic of cohort-linkcheck on made-up samples: median, upper
// quartile and spread; samples set aside for lost time; SLOW against the class
// median and the floor, UNSTABLE when the samples straddle the threshold; which
// links the retry round probes again and how its samples decide; and how links
// are named after the rank table.
#include <gtest/gtest.h>

#include "tools/linkcheck/link_stats.h"
#include "tools/linkcheck/link_views.h"
#include "tools/linkcheck/report_plot.h"
#include "tools/linkcheck/report_text.h"

namespace cohort::linkcheck {
namespace {

// One sample per pass (pass i: the i-th figure), each round trip 10 us.
std::vector<LinkSample> samples(std::initializer_list<double> gbps, double lost = 0) {
  std::vector<LinkSample> out;
  for (double g : gbps) out.push_back({10, g, lost, 0, static_cast<int>(out.size())});
  return out;
}

// What the class moved in every pass.
PassReference ref(double gbps) {
  return [gbps](const LinkSample&) { return gbps; };
}

ClassFigure shmClass(double median, int links = 6) { return {"shm", median, links}; }

TEST(LinkStats, MedianUpperQuartileAndSpread) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(upperQuartile({1, 2, 3, 4, 5}), 4);  // the 4th of 5
  EXPECT_EQ(upperQuartile({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}), 8);
  EXPECT_EQ(upperQuartile({7}), 7);
  // One wild sample of five leaves the spread alone: deviations 1, 0, 1, 9, 2.
  EXPECT_DOUBLE_EQ(spreadOf({10, 11, 12, 2, 13}), 1.0 / 11);
  EXPECT_EQ(spreadOf({5}), 0);
  EXPECT_EQ(spreadOf({0, 0, 0}), 0);
}

TEST(LinkStats, SamplesThatLostMostOfTheirTimeAreSetAsideWhileEnoughRemain) {
  std::vector<LinkSample> s = samples({20, 21, 19, 22, 20});
  s[1] = {4000, 3, 0.9};  // the processor was elsewhere for 90% of that transfer
  s[3] = {3900, 4, 0.8};
  LinkFigures f = LinkFigures::of(s);
  EXPECT_EQ(f.setAside, 2);
  EXPECT_FALSE(f.disturbed);
  EXPECT_EQ(f.gbps, 20);  // of 20, 19, 20
  EXPECT_EQ(f.rttUs, 10);
  // A third one: only 2 of 5 kept their time, too few to judge by.
  s[0] = {3000, 5, 0.7};
  f = LinkFigures::of(s);
  EXPECT_EQ(f.setAside, 0);
  EXPECT_TRUE(f.disturbed);
  EXPECT_EQ(f.gbps, 5);
}

TEST(Judge, BelowHalfItsClassIsSlowNamingTheFigureTheMedianAndTheSpread) {
  const LinkFigures f = LinkFigures::of(samples({.012, .0125, .012, .013, .012}), ref(2.4));
  EXPECT_EQ(f.ratio, .012 / 2.4);
  const Judgement j = judgeFigures(f, {"tcp", 2.4, 4}, VerdictRules{}, true, false);
  EXPECT_EQ(j.call, Call::kSlow);
  EXPECT_EQ(j.cause,
            "bandwidth 0.012 GB/s, 0.005 x the tcp links probed in the same passes (< 0.50); "
            "tcp median 2.40 GB/s over 4 links; spread ±0% over 5 samples");
  // At 0.6 of its class, with no class to compare with, or with the check off: ok.
  const LinkFigures near = LinkFigures::of(samples({12, 12, 12}), ref(20));
  EXPECT_EQ(judgeFigures(near, shmClass(20), {}, true, false).call, Call::kOk);
  EXPECT_EQ(judgeFigures(f, {"tcp", 2.4, 1}, VerdictRules{}, true, false).call, Call::kOk);
  VerdictRules off;
  off.minRatio = 0;
  EXPECT_EQ(judgeFigures(f, {"tcp", 2.4, 4}, off, true, false).call, Call::kOk);
}

TEST(Judge, TheFloorFlagsWhatTheClassDoesNot) {
  VerdictRules rules;
  rules.minGbps = 2;
  const std::vector<LinkSample> s = samples({1.4, 1.5, 1.5, 1.6, 1.5});
  // 0.75 of its class: only the floor flags it.
  Judgement j = judgeFigures(LinkFigures::of(s, ref(2.0)), shmClass(2.0), rules, true, false);
  EXPECT_EQ(j.call, Call::kSlow);
  EXPECT_EQ(j.cause.rfind("bandwidth 1.50 GB/s < 2.00 GB/s (--min-gbps); shm median 2.00 GB/s", 0),
            0u)
      << j.cause;
  // 0.075 of its class: the class does, and is named first.
  j = judgeFigures(LinkFigures::of(s, ref(20)), shmClass(20), rules, true, true);
  EXPECT_EQ(j.cause.rfind("bandwidth 1.50 GB/s, 0.075 x the shm links probed in the same passes "
                          "(< 0.50); shm median 20.00 GB/s",
                          0),
            0u)
      << j.cause;
  EXPECT_NE(j.cause.find("over 5 samples of the retry"), std::string::npos) << j.cause;
}

TEST(Judge, SamplesStraddlingTheThresholdAreUnstableNotSlow) {
  // A quarter of its class, but a quarter of the samples reach its class.
  const LinkFigures f = LinkFigures::of(samples({4, 5, 5, 21, 22, 4, 5, 20, 4, 5}), ref(20));
  const Judgement j = judgeFigures(f, shmClass(20), VerdictRules{}, true, true);
  EXPECT_EQ(j.call, Call::kUnstable);
  EXPECT_EQ(j.cause,
            "bandwidth 5.00 GB/s, 0.25 x the shm links probed in the same passes, but a quarter "
            "of its samples reach 1.00 x, spread ±20% over 10 samples of the retry: too "
            "scattered to judge against 0.50 x; shm median 20.00 GB/s over 6 links");
  const LinkFigures d = LinkFigures::of(samples({3, 3, 4}, 0.9), ref(20));
  EXPECT_EQ(judgeFigures(d, shmClass(20), VerdictRules{}, true, true).call, Call::kUnstable);
}

TEST(Judge, LatencyBound) {
  VerdictRules rules;
  rules.maxRttUs = 5;
  const Judgement j = judgeFigures(LinkFigures::of(samples({1, 1, 1})), {}, rules, false, false);
  EXPECT_EQ(j.call, Call::kSlow);
  EXPECT_EQ(j.cause, "latency 10.0 us > 5 us (--max-rtt-us) over 3 samples");
}

// A report of `n` ranks (pairs on one node over shm, tcp between them), links
// at 20 GB/s but link 0-2 at `slow`; with `retry`, every tcp link has samples
// of the retry round too: link 0-2 at that figure, its references at 20.
CheckReport report(int n, double slow, std::vector<TableRank> table = {}, double retry = 0) {
  std::vector<std::optional<RankView>> views;
  for (int r = 0; r < n; ++r) {
    RankView v;
    v.rank = r;
    v.address = "192.0.2.2";
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      LinkView l;
      l.peer = p;
      l.ok = true;
      l.transport = r / 2 == p / 2 ? "shm" : "tcp";
      const bool zeroTwo = (r == 0 && p == 2) || (r == 2 && p == 0);
      l.samples = samples({zeroTwo ? slow : 20.0});
      if (retry > 0 && l.transport == "tcp") {  // 0-2 and its references
        const double g = zeroTwo ? retry : 20.0;
        for (LinkSample s : samples({g, g, g})) {
          s.round = 1;
          l.samples.push_back(s);
        }
      }
      v.links.push_back(l);
    }
    views.push_back(v);
  }
  MergeSettings s;
  s.bandwidthBytes = 1;
  s.repeat = 1;
  s.table = std::move(table);
  return mergeViews(n, views, s);
}

TEST(MergeViews, EachLinkIsComparedWithItsOwnClass) {
  const CheckReport r = report(4, 0.1);  // shm: 0-1, 2-3; tcp: the other four
  EXPECT_EQ(r.find(0, 1)->classLinks, 2);
  EXPECT_EQ(r.find(0, 2)->classLinks, 4);
  EXPECT_EQ(r.find(0, 2)->classMedianGbps, 20);
  EXPECT_EQ(r.find(0, 2)->status, LinkStatus::kSlow);
  EXPECT_EQ(r.badLinks(), 1);
}

TEST(MergeViews, ASpellOfLoadThatSlowsEveryLinkFlagsNone) {
  // Passes 2 and 3 ran while the machine was busy: every link moved 1 GB/s, not
  // 5. Link 0-1 also met pass 4 busy. Against its class's median (5) its median
  // (1) is a fifth; against the links probed in the same passes, it is level.
  std::vector<std::optional<RankView>> views;
  for (int r = 0; r < 4; ++r) {
    RankView v;
    v.rank = r;
    for (int p = 0; p < 4; ++p) {
      if (p == r) continue;
      LinkView l;
      l.peer = p;
      l.ok = true;
      l.transport = "shm";
      const bool zeroOne = r + p == 1;
      l.samples = samples({5, 5, 1, 1, zeroOne ? 1.0 : 5.0});
      v.links.push_back(l);
    }
    views.push_back(v);
  }
  MergeSettings s;
  s.bandwidthBytes = 1;
  s.repeat = 5;
  const CheckReport r = mergeViews(4, views, s);
  EXPECT_EQ(r.badLinks(), 0) << r.find(0, 1)->cause;
  EXPECT_EQ(r.find(0, 1)->gbps, 1);
}

TEST(Retry, OnlyFlaggedLinksAreRetriedAndTheRetryDecides) {
  // The first passes flag 0-2: the retry round probes it, and as references
  // the (three) other links of its class.
  const CheckReport first = report(4, 0.1);
  EXPECT_EQ(linksToRetry(first, 1),
            (std::vector<std::pair<int, int>>{{0, 2}, {0, 3}, {1, 2}, {1, 3}}));
  // Its retry finds it at 19 GB/s: a slow spell, not a slow link. The class
  // median still comes from every link's first passes.
  const CheckReport spell = report(4, 0.1, {}, 19);
  const LinkVerdict* l = spell.find(0, 2);
  EXPECT_EQ(l->status, LinkStatus::kOk);
  EXPECT_EQ(l->gbps, 19);
  EXPECT_EQ(l->samples.size(), 4u);  // every sample kept, both rounds
  EXPECT_EQ(spell.find(0, 3)->status, LinkStatus::kOk);
  EXPECT_EQ(l->classMedianGbps, 20);
  EXPECT_TRUE(linksToRetry(spell, 1).empty());
  // Its retry confirms it: SLOW, judged by the retry's samples.
  const CheckReport slow = report(4, 0.1, {}, 0.2);
  l = slow.find(0, 2);
  EXPECT_EQ(l->status, LinkStatus::kSlow);
  EXPECT_NE(l->cause.find("bandwidth 0.20 GB/s, 0.01 x the tcp links probed in the same passes"),
            std::string::npos)
      << l->cause;
  EXPECT_NE(l->cause.find("over 3 samples of the retry"), std::string::npos) << l->cause;
  EXPECT_TRUE(linksToRetry(slow, 1).empty());  // round 1 ran already
  EXPECT_TRUE(linksToRetry(slow, 2).empty());  // confirmed SLOW, not disturbed: no round 2
  // Links that failed are not retried: their cause is known.
  std::vector<std::optional<RankView>> views = {std::nullopt, std::nullopt};
  EXPECT_TRUE(linksToRetry(mergeViews(2, views, MergeSettings{}), 1).empty());
}

// Four ranks, tcp links at 20 GB/s in 5 passes and 3 retry passes, but link 0-2
// at `first` in its passes and `retry` (with the share of time lost) in the retry.
CheckReport withRetry(std::vector<double> first, std::vector<std::pair<double, double>> retry,
                      double firstLost = 0) {
  std::vector<std::optional<RankView>> views;
  for (int r = 0; r < 4; ++r) {
    RankView v;
    v.rank = r;
    for (int p = 0; p < 4; ++p) {
      if (p == r || r / 2 == p / 2) continue;
      LinkView l;
      l.peer = p;
      l.ok = true;
      l.transport = "tcp";
      const bool zeroTwo = r + p == 2 && r != 1;
      for (int i = 0; i < 5; ++i) {
        l.samples.push_back(
            {10, zeroTwo ? first[static_cast<std::size_t>(i)] : 20, zeroTwo ? firstLost : 0, 0, i});
      }
      for (int i = 0; i < 3; ++i) {
        const auto [g, lost] = zeroTwo ? retry[static_cast<std::size_t>(i)] : std::pair{20.0, 0.0};
        l.samples.push_back({10, g, lost, 1, i});
      }
      v.links.push_back(l);
    }
    views.push_back(v);
  }
  MergeSettings s;
  s.bandwidthBytes = 1;
  s.repeat = 5;
  return mergeViews(4, views, s);
}

TEST(Retry, ARetryMostlyDisturbedIsJudgedByTheTrustedSamplesOfBothRounds) {
  // Slow in its passes, and in the one retry sample that kept its time: SLOW.
  const CheckReport slow = withRetry({2, 2, 2, 2, 2}, {{2, 0}, {20, 0.9}, {20, 0.9}});
  EXPECT_EQ(slow.find(0, 2)->status, LinkStatus::kSlow) << slow.find(0, 2)->cause;
  EXPECT_EQ(slow.find(0, 2)->gbps, 2);
  EXPECT_NE(slow.find(0, 2)->cause.find("2 set aside"), std::string::npos)
      << slow.find(0, 2)->cause;
  // The retry alone would have judged by one sample at 20 of three: the first
  // passes, which kept their time, outweigh it.
  const CheckReport disturbed = withRetry({2, 2, 2, 2, 2}, {{20, 0}, {20, 0.9}, {2, 0.9}});
  EXPECT_EQ(disturbed.find(0, 2)->status, LinkStatus::kSlow) << disturbed.find(0, 2)->cause;
  // Level with its class in the retry's trusted samples: ok.
  const CheckReport fine = withRetry({2, 2, 2, 2, 2}, {{20, 0}, {20, 0}, {2, 0.9}});
  EXPECT_EQ(fine.find(0, 2)->status, LinkStatus::kOk) << fine.find(0, 2)->cause;
  EXPECT_TRUE(linksToRetry(fine, 2).empty());
  // Disturbed in every round: UNSTABLE, and another round (on another processor)
  // probes it again with its references; a confirmed SLOW link gets none.
  const CheckReport busy = withRetry({2, 2, 2, 2, 2}, {{2, .9}, {2, .9}, {2, .9}}, 0.9);
  const LinkVerdict* l = busy.find(0, 2);
  EXPECT_EQ(l->status, LinkStatus::kUnstable) << l->cause;
  EXPECT_TRUE(l->disturbed);
  EXPECT_NE(l->cause.find("too disturbed to judge"), std::string::npos) << l->cause;
  EXPECT_EQ(linksToRetry(busy, 2),
            (std::vector<std::pair<int, int>>{{0, 2}, {0, 3}, {1, 2}, {1, 3}}));
  EXPECT_TRUE(linksToRetry(slow, 2).empty());
}

TEST(Naming, LinksAreNamedAsTheRankTableNamesThemWithTheAddressUsed) {
  const CheckReport r = report(4, 0.1,
                               {{"127.0.0.1", "127.0.0.1", "127.0.0.1"},
                                {"127.0.0.2", "127.0.0.1", "127.0.0.1"},
                                {"", "10.0.0.2", "10.0.0.2"},
                                {"10.1.0.4", "10.0.0.2", "node-b"}});
  EXPECT_EQ(r.nameOf(1, "shm"), "127.0.0.2, server 127.0.0.1");
  EXPECT_EQ(r.nameOf(1, "tcp"), "127.0.0.2 via 192.0.2.2, server 127.0.0.1");
  EXPECT_EQ(r.nameOf(2, "tcp"), "10.0.0.2 via 192.0.2.2");  // host_ip and server id alike
  EXPECT_EQ(r.nameOf(3, "shm"), "10.1.0.4, server node-b");
  const auto lines = badLinkLines(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("SLOW rank 0 (127.0.0.1 via 192.0.2.2) <-> rank 2 (10.0.0.2 via "
                           "192.0.2.2): bandwidth 0.1",
                           0),
            0u)
      << lines[0];
  const std::string text = formatReport(r);
  EXPECT_NE(text.find("  rank 1    127.0.0.2, server 127.0.0.1 (tcp on 192.0.2.2)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0.10*"), std::string::npos) << text;  // flagged in the GB/s matrix
}

TEST(Plot, TheMatrixMarksFlaggedLinks) {
  const std::string svg = plotSvg(report(4, 0.1));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("4 ranks, 1 of 6 links flagged"), std::string::npos);
  // Both cells of link 0-2, outlined and lettered S.
  std::size_t outlined = 0;
  for (std::size_t at = 0; (at = svg.find("stroke=\"#000000\"", at)) != std::string::npos; ++at) {
    ++outlined;
  }
  EXPECT_EQ(outlined, 2u);
  EXPECT_NE(svg.find(">S</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>rank 0 &lt;-&gt; rank 2: SLOW: bandwidth"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

}  // namespace
}  // namespace cohort::linkcheck
