// The pure parts of cohort-linkcheck: judging links from both ends' views, the
// JSON forms, the printed report and the short causes.
#include <gtest/gtest.h>

#include "test_util.h"
#include "tools/linkcheck/link_views.h"
#include "tools/linkcheck/pair_link.h"
#include "tools/linkcheck/report_text.h"

namespace cohort::linkcheck {
namespace {

// A measured link: five samples of `gbps` and 20 us.
LinkView good(int peer, double gbps = 2.5) {
  LinkView v;
  v.peer = peer;
  v.ok = true;
  v.transport = "tcp";
  v.samples.assign(5, LinkSample{20, gbps, 0});
  return v;
}

LinkView bad(int peer, Stage stage, const std::string& cause) {
  LinkView v;
  v.peer = peer;
  v.stage = stage;
  v.transport = "tcp";
  v.cause = cause;
  v.detail = "detail of " + cause;
  return v;
}

RankView view(int rank, std::vector<LinkView> links) {
  RankView v;
  v.rank = rank;
  v.address = "10.0.0." + std::to_string(rank + 1);
  v.hostname = "node" + std::to_string(rank);
  v.links = std::move(links);
  return v;
}

MergeSettings settings() {
  MergeSettings s;
  s.timeoutS = 30;
  s.linkTimeoutS = 10;
  s.bandwidthBytes = 4 << 20;
  s.pings = 5;
  s.repeat = 5;
  return s;
}

TEST(MergeViews, TheEarliestFailingStageGivesTheCause) {
  std::vector<std::optional<RankView>> views = {
      view(0, {good(1), bad(2, Stage::kProbe, "connection closed by the peer")}),
      view(1, {good(0), good(2)}),
      view(2, {bad(0, Stage::kConnect, "timed out after 10 s"), good(1)})};
  const CheckReport r = mergeViews(3, views, settings());
  ASSERT_EQ(r.links.size(), 3u);
  EXPECT_EQ(r.find(0, 1)->status, LinkStatus::kOk);
  EXPECT_EQ(r.find(1, 2)->status, LinkStatus::kOk);
  const LinkVerdict* l = r.find(2, 0);
  EXPECT_EQ(l->status, LinkStatus::kBad);
  EXPECT_EQ(l->cause, "timed out after 10 s");
  EXPECT_EQ(l->detail, "detail of timed out after 10 s");
  EXPECT_EQ(r.badLinks(), 1);
  EXPECT_TRUE(r.problems.empty());
}

TEST(MergeViews, OnATieTheLowerRankIsBelieved) {
  std::vector<std::optional<RankView>> views = {view(0, {bad(1, Stage::kProbe, "lower")}),
                                                view(1, {bad(0, Stage::kProbe, "higher")})};
  EXPECT_EQ(mergeViews(2, views, settings()).find(0, 1)->cause, "lower");
}

TEST(MergeViews, OneEndsProbeProvesTheLinkButASilentRankIsAProblem) {
  std::vector<std::optional<RankView>> views = {view(0, {good(1, 1.5)}), std::nullopt};
  MergeSettings s = settings();
  s.table = {{"10.0.0.1", "", "node-0"}, {"10.0.0.2", "", "node-0"}};
  const CheckReport r = mergeViews(2, views, s);
  EXPECT_EQ(r.find(0, 1)->status, LinkStatus::kOk);
  EXPECT_DOUBLE_EQ(r.find(0, 1)->gbps, 1.5);
  EXPECT_EQ(r.find(0, 1)->samples.size(), 5u);
  EXPECT_FALSE(r.allGood());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("rank 1 (10.0.0.2, server node-0) sent no results within the 30 s "
                               "timeout"),
            std::string::npos)
      << r.problems[0];
}

TEST(MergeViews, NoViewAtAllIsUnreachable) {
  const CheckReport r = mergeViews(2, {std::nullopt, std::nullopt}, settings());
  EXPECT_EQ(r.find(0, 1)->status, LinkStatus::kUnreachable);
  EXPECT_EQ(r.find(0, 1)->cause, "neither rank 0 nor rank 1 reported results");
  EXPECT_EQ(r.nameOf(1), "address unknown");
}

TEST(MergeViews, SilenceIsUnreachableAndTheFloorMakesSlow) {
  LinkView silent = bad(2, Stage::kProbe, "rank 2 stopped answering: no answer within 10 s");
  silent.unreachable = true;
  MergeSettings s = settings();
  s.rules.minGbps = 1.0;
  s.rules.minRatio = 0;  // the floor alone
  std::vector<std::optional<RankView>> views = {view(0, {good(1, 0.2), silent}),
                                                view(1, {good(0, 0.2), good(2)}),
                                                view(2, {good(0), good(1)})};
  const CheckReport r = mergeViews(3, views, s);
  EXPECT_EQ(r.find(0, 1)->status, LinkStatus::kSlow);
  EXPECT_EQ(
      r.find(0, 1)->cause.rfind("bandwidth 0.20 GB/s < 1.00 GB/s (--min-gbps); tcp median", 0), 0u)
      << r.find(0, 1)->cause;
  EXPECT_EQ(r.find(0, 2)->status, LinkStatus::kUnreachable);
  EXPECT_EQ(r.find(1, 2)->status, LinkStatus::kOk);
  EXPECT_EQ(r.badLinks(), 2);
  // Without a bandwidth probe there is no bandwidth to judge.
  s.bandwidthBytes = 0;
  EXPECT_EQ(mergeViews(3, views, s).find(0, 1)->status, LinkStatus::kOk);
}

TEST(ReportText, BadLinesNameBothRanksTheirAddressesAndTheCause) {
  std::vector<std::optional<RankView>> views = {
      view(0, {good(1), bad(2, Stage::kConnect, "timed out after 10 s")}),
      view(1, {good(0), good(2)}), view(2, {good(1), bad(0, Stage::kConnect, "x")})};
  const CheckReport r = mergeViews(3, views, settings());
  const auto lines = badLinkLines(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "BAD rank 0 (10.0.0.1) <-> rank 2 (10.0.0.3): timed out after 10 s");
  EXPECT_TRUE(badLinkLines(r, 1).empty());
  EXPECT_EQ(badLinkLines(r, 2).size(), 1u);
  const std::string text = formatReport(r);
  EXPECT_NE(
      text.find("status           0        1        2\n        0        -      tcp      BAD\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  ok rank 0 (10.0.0.1) <-> rank 1 (10.0.0.2): tcp, 20.0 us, 2.50 GB/s ±0% "
                      "over 5 samples (1.00 x the tcp median)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  BAD rank 0 (10.0.0.1) <-> rank 2 (10.0.0.3): timed out after 10 s\n"
                      "    detail: detail of timed out after 10 s\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("result: 1 of 3 links bad\n"), std::string::npos) << text;
}

TEST(ReportJson, RoundTripsAndKeepsOneLinkPerLineWithEverySample) {
  std::vector<std::optional<RankView>> views = {
      view(0, {bad(1, Stage::kJoin, "rank 1 did not join within 10 s")}), std::nullopt};
  const CheckReport r = mergeViews(2, views, settings());
  const std::string json = r.toJson();
  EXPECT_NE(json.find("\n{\"a\":0,\"addressA\":\"10.0.0.1\",\"addressB\":\"\",\"b\":1,"
                      "\"cause\":\"rank 1 did not join within 10 s\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ok\": false"), std::string::npos);
  CheckReport back;
  ASSERT_OK(CheckReport::fromJson(json, &back));
  EXPECT_EQ(back.toJson(), json);
  // A measured link carries every sample: [round trip us, GB/s, share lost, round, pass].
  LinkView l = good(1, 3.0);
  l.samples[2] = {25, 1.5, 0.6, 0};
  const CheckReport m = mergeViews(2, {view(0, {l}), view(1, {good(0)})}, settings());
  EXPECT_NE(
      m.toJson().find("\"samples\":[[20.0,3.0,0.0,0,0],[20.0,3.0,0.0,0,0],[25.0,1.5,0.6,0,0],"),
      std::string::npos)
      << m.toJson();
  ASSERT_OK(CheckReport::fromJson(m.toJson(), &back));
  EXPECT_EQ(back.toJson(), m.toJson());
  EXPECT_ERROR(CheckReport::fromJson("{\"size\": 2}", &back), kParseError,
               "the link check report is not valid");
}

TEST(ReportJson, RankViewRoundTripsAndRejectsGarbage) {
  RankView v = view(1, {good(0), bad(2, Stage::kSetup, "s")});
  v.pid = 77;
  RankView back;
  ASSERT_OK(RankView::fromJson(v.toJson(), &back));
  EXPECT_EQ(back.toJson(), v.toJson());
  EXPECT_EQ(back.links[1].stage, Stage::kSetup);
  EXPECT_ERROR(RankView::fromJson("not json", &back), kParseError, "a rank's link view");
}

TEST(ShortCause, NamesTheUsualFailures) {
  EXPECT_EQ(shortCause(Status(ErrorCode::kTimeout, "rank 0 -> rank 2: timed out after 9.9 s"), 10),
            "timed out after 10 s");
  EXPECT_EQ(shortCause(Status(ErrorCode::kConnectionError, "x: connection refused (retried)"), 10),
            "connection refused");
  EXPECT_EQ(shortCause(Status(ErrorCode::kConnectionError,
                              "handshake from a (rank 1): token mismatch: the peer belongs to "
                              "another job"),
                       10),
            "token mismatch");
  EXPECT_EQ(
      shortCause(Status(ErrorCode::kConnectionError, "connect failed: Network is unreachable"), 10),
      "network unreachable");
  EXPECT_EQ(shortCause(Status(ErrorCode::kRemoteError, "a reset by the peer (socket 0 of 2)"), 10),
            "connection reset by the peer");
  EXPECT_EQ(
      shortCause(Status(ErrorCode::kRemoteError, "remote rank 1 died (process 7 is gone)"), 10),
      "the peer process died");
  EXPECT_EQ(shortCause(Status(ErrorCode::kInternal, "something else"), 10), "internal error");
}

}  // namespace
}  // namespace cohort::linkcheck
