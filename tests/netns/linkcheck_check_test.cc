// The link check with ranks as threads of this process over a MemoryStore
// (tcp over 127.0.0.1: the test runs with COHORT_IF_IP=127.0.0.1). Each rank
// claims a host id, so "nodes" are chosen per test: same host id -> shm.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "test_util.h"
#include "tools/linkcheck/check_limits.h"
#include "tools/linkcheck/link_check.h"
#include "transport/store.h"

namespace cohort::linkcheck {
namespace {

using transport::MemoryStore;

CheckMember member(int rank, int size, const std::string& hostId) {
  CheckMember m;
  m.rank = rank;
  m.size = size;
  m.token = transport::JobToken::fromText("linkcheck-test");
  m.self.rank = rank;
  m.self.hostId = hostId;
  m.self.hostname = "host-" + hostId;
  m.self.pid = static_cast<std::int32_t>(::getpid());
  m.self.address = "127.0.0.1";
  const auto local = transport::Handshake::local(transport::ChannelKind::kLinkCheck, m.token);
  m.self.libraryVersion = local.libraryVersion;
  m.self.protocolVersion = local.protocolVersion;
  m.processors = 1;  // a node's probes one at a time: the gated path, on any machine
  return m;
}

struct ThreadRun {
  std::vector<CheckReport> reports;
  std::vector<Status> statuses;
  double seconds = 0;
};

// Runs the check on the given members, one thread each, over one store.
ThreadRun runThreads(const std::vector<CheckMember>& members, const CheckOptions& options) {
  auto store = std::make_shared<MemoryStore>();
  ThreadRun run;
  run.reports.resize(members.size());
  run.statuses.resize(members.size());
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < members.size(); ++i) {
    threads.emplace_back(
        [&, i] { run.statuses[i] = runLinkCheck(options, store, members[i], &run.reports[i]); });
  }
  for (auto& t : threads) t.join();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

std::string formatLines(const CheckReport& r) {
  std::string out;
  for (const LinkVerdict& l : r.links) out += l.cause + " " + l.detail + "\n";
  return out;
}

CheckOptions quick() {
  CheckOptions o;
  o.timeoutS = 6;
  o.linkTimeoutS = 2;
  o.bandwidthBytes = 1 << 20;
  o.pings = 3;
  o.repeat = 3;
  return o;
}

TEST(LinkCheckThreads, ThreeRanksOnTwoNodesAllLinksOk) {
  const ThreadRun run =
      runThreads({member(0, 3, "node-a"), member(1, 3, "node-a"), member(2, 3, "node-b")}, quick());
  for (int r = 0; r < 3; ++r) {
    ASSERT_OK(run.statuses[static_cast<std::size_t>(r)]);
    const CheckReport& rep = run.reports[static_cast<std::size_t>(r)];
    EXPECT_TRUE(rep.allGood()) << "rank " << r << " problems " << rep.problems.size();
    ASSERT_EQ(rep.links.size(), 3u);
    ASSERT_NE(rep.find(0, 1), nullptr);
    EXPECT_EQ(rep.find(0, 1)->transport, "shm");  // same host id
    EXPECT_EQ(rep.find(0, 2)->transport, "tcp");
    EXPECT_EQ(rep.find(2, 1)->transport, "tcp");
    for (const LinkVerdict& l : rep.links) {
      EXPECT_EQ(l.status, LinkStatus::kOk) << l.a << "-" << l.b << ": " << l.cause << l.detail;
      EXPECT_GT(l.rttUs, 0) << l.a << "-" << l.b;
      EXPECT_GT(l.gbps, 0) << l.a << "-" << l.b;
      // --repeat 3, and as many again if the retry round probed it.
      EXPECT_TRUE(l.samples.size() == 3u || l.samples.size() == 6u) << l.a << "-" << l.b;
    }
  }
  // Every rank received rank 0's verdict, not a view of its own.
  EXPECT_EQ(run.reports[2].toJson(), run.reports[0].toJson());
}

TEST(LinkCheckThreads, WithAProcessorPerRankProbesRunAtOnce) {
  std::vector<CheckMember> members;
  for (int r = 0; r < 4; ++r) {
    members.push_back(member(r, 4, r < 2 ? "node-a" : "node-b"));
    members.back().processors = 4;
  }
  // More probes at once than this machine may have processors for: the figures
  // are not judged, only that every link was probed.
  CheckOptions o = quick();
  o.rules.minRatio = 0;
  const ThreadRun run = runThreads(members, o);
  for (int r = 0; r < 4; ++r) ASSERT_OK(run.statuses[static_cast<std::size_t>(r)]);
  const CheckReport& rep = run.reports[0];
  EXPECT_EQ(rep.badLinks(), 0) << formatLines(rep);
  EXPECT_EQ(rep.repeat, 3);
  for (const LinkVerdict& l : rep.links) EXPECT_GE(l.samples.size(), 3u);
}

TEST(LinkCheckThreads, MissingRankMakesExactlyItsLinksUnreachable) {
  CheckOptions o = quick();
  const ThreadRun run = runThreads({member(0, 3, "a"), member(1, 3, "b")}, o);
  ASSERT_OK(run.statuses[0]);
  ASSERT_OK(run.statuses[1]);
  // Rank 0 waits for rank 2's view until the whole timeout, then sends the verdict; rank 1
  // would give up on it a link timeout later. Everything else takes well under a second.
  EXPECT_LT(run.seconds, o.timeoutS + o.effectiveLinkTimeoutS());
  const CheckReport& rep = run.reports[0];
  EXPECT_FALSE(rep.allGood());
  EXPECT_EQ(rep.badLinks(), 2);
  EXPECT_EQ(rep.find(0, 1)->status, LinkStatus::kOk);
  for (int r : {0, 1}) {
    const LinkVerdict* l = rep.find(r, 2);
    EXPECT_EQ(l->status, LinkStatus::kUnreachable);
    EXPECT_EQ(l->cause, "rank 2 did not join within 2 s");
    EXPECT_NE(l->detail.find("never sent 'peer-info'"), std::string::npos) << l->detail;
  }
  ASSERT_EQ(rep.problems.size(), 1u);
  EXPECT_NE(rep.problems[0].find("rank 2 (address unknown) sent no results"), std::string::npos);
  EXPECT_EQ(run.reports[1].toJson(), rep.toJson());
}

TEST(LinkCheckThreads, SlowLinksAreRetriedThenFlaggedWithTheFloor) {
  CheckOptions o = quick();
  o.rules.minGbps = 1e6;
  const ThreadRun run = runThreads({member(0, 2, "a"), member(1, 2, "b")}, o);
  ASSERT_OK(run.statuses[0]);
  const LinkVerdict* l = run.reports[0].find(0, 1);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->status, LinkStatus::kSlow);
  EXPECT_NE(l->cause.find("GB/s < 1000000.00 GB/s (--min-gbps)"), std::string::npos) << l->cause;
  EXPECT_EQ(l->cause.rfind("bandwidth ", 0), 0u) << l->cause;
  // Flagged by the first passes, it was probed again, and the retry confirmed it. A
  // retry disturbed by other processes (a loaded machine) is taken once more, up to
  // kRetryRounds rounds of --repeat samples in all.
  ASSERT_GE(l->samples.size(), 6u);
  ASSERT_LE(l->samples.size(), 3u * limits::kRetryRounds);
  EXPECT_EQ(l->samples.size() % 3, 0u);
  EXPECT_EQ(l->samples[2].round, 0);
  EXPECT_EQ(l->samples[3].round, 1);
  EXPECT_NE(l->cause.find("over 3 samples of the retry"), std::string::npos) << l->cause;
}

TEST(LinkCheckThreads, VersionMismatchIsTheCauseOnBothEnds) {
  std::vector<CheckMember> members = {member(0, 2, "a"), member(1, 2, "b")};
  members[1].self.libraryVersion = 90909;  // 9.9.9
  const ThreadRun run = runThreads(members, quick());
  ASSERT_OK(run.statuses[0]);
  const LinkVerdict* l = run.reports[0].find(0, 1);
  EXPECT_EQ(l->status, LinkStatus::kBad);
  EXPECT_NE(l->cause.find("rank 1 runs Cohort 9.9.9"), std::string::npos) << l->cause;
}

TEST(LinkCheckThreads, NoProbeStartsAfterTheWholeTimeout) {
  CheckOptions o = quick();
  // Probing ends max(1 s, a tenth) before the whole timeout, so with 1 s it has ended when the
  // check starts, however fast the machine; joining and connecting get a third each (0.3 s).
  o.timeoutS = 1.0;
  const ThreadRun run = runThreads({member(0, 2, "a"), member(1, 2, "a")}, o);
  ASSERT_OK(run.statuses[0]);
  const LinkVerdict* l = run.reports[0].find(0, 1);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->status, LinkStatus::kBad);
  EXPECT_EQ(l->transport, "shm");
  EXPECT_EQ(l->cause, "not probed: the check's 1 s timeout ran out");
}

TEST(LinkCheckThreads, SingleRankHasNoLinks) {
  const ThreadRun run = runThreads({member(0, 1, "a")}, quick());
  ASSERT_OK(run.statuses[0]);
  EXPECT_TRUE(run.reports[0].allGood());
  EXPECT_TRUE(run.reports[0].links.empty());
}

TEST(LinkCheckThreads, WithoutTheVerdictARankKnowsOnlyItsOwnLinks) {
  // Rank 0 never runs: rank 1 sees it missing and receives no verdict.
  CheckOptions o = quick();
  o.timeoutS = 3;
  const ThreadRun run = runThreads({member(1, 2, "b")}, o);
  ASSERT_OK(run.statuses[0]);
  const CheckReport& rep = run.reports[0];
  EXPECT_EQ(rep.find(0, 1)->cause, "rank 0 did not join within 1 s");
  ASSERT_EQ(rep.problems.size(), 1u);
  EXPECT_NE(rep.problems[0].find("rank 0 sent no verdict"), std::string::npos) << rep.problems[0];
}

}  // namespace
}  // namespace cohort::linkcheck
