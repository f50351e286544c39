// The link check over a TCP pair and its JSON report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tcp_pair.h"
#include "test_util.h"
#include "transport/link_report.h"

namespace cohort::transport::testing {
namespace {

TEST(LinkProbe, MeasuresLatencyAndBandwidthAtBothEnds) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  LinkResult r[2];
  r[0].rank = 0;
  r[1].rank = 1;
  const auto st = onBoth([&](int rank) {
    Connection& c = rank == 0 ? pair.a() : pair.b();
    return probeLink(c, rank == 0, 5, 4 << 20, Deadline::afterMs(10000), &r[rank]);
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(r[i].ok);
    EXPECT_EQ(r[i].transport, "tcp");
    EXPECT_EQ(r[i].peer, 1 - i);
    EXPECT_GT(r[i].rttUs, 0.0);
    EXPECT_LT(r[i].rttUs, 1e6);
    EXPECT_GT(r[i].gbps, 0.0);
    EXPECT_EQ(r[i].error, "");
  }
  // Both report the initiator's figures; each end's "local" is the other's "remote".
  EXPECT_EQ(r[0].rttUs, r[1].rttUs);
  EXPECT_EQ(r[0].gbps, r[1].gbps);
  // At least the warm-up and one more transfer; more (at most 4) only while every
  // one lost time to other processes, whose share both ends report alike.
  EXPECT_GE(r[0].transfers, 2);
  EXPECT_LE(r[0].transfers, 4);
  EXPECT_EQ(r[0].transfers, r[1].transfers);
  EXPECT_GE(r[0].lostShare, 0.0);
  EXPECT_LE(r[0].lostShare, 1.0);
  EXPECT_EQ(r[0].lostShare, r[1].lostShare);
  EXPECT_EQ(r[0].local, r[1].remote);
  EXPECT_EQ(r[1].local, r[0].remote);
  EXPECT_EQ(r[0].remote, pair.a().describe());

  LinkReport report;
  report.links = {r[0], r[1]};
  const auto j = nlohmann::json::parse(report.toJson());
  ASSERT_EQ(j["links"].size(), 2u);
  EXPECT_EQ(j["links"][0]["rank"], 0);
  EXPECT_EQ(j["links"][0]["peer"], 1);
  EXPECT_EQ(j["links"][0]["transport"], "tcp");
  EXPECT_EQ(j["links"][0]["ok"], true);
  EXPECT_EQ(j["links"][1]["remote"], pair.b().describe());
  EXPECT_DOUBLE_EQ(j["links"][1]["rttUs"].get<double>(), r[1].rttUs);
  EXPECT_DOUBLE_EQ(j["links"][1]["gbps"].get<double>(), r[1].gbps);
  EXPECT_EQ(j["links"][1]["transfers"].get<int>(), r[1].transfers);
}

TEST(LinkProbe, PingsOnlyLeaveBandwidthZero) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  LinkResult r[2];
  const auto st = onBoth([&](int rank) {
    return probeLink(rank == 0 ? pair.a() : pair.b(), rank == 1, 3, 0, Deadline::afterMs(5000),
                     &r[rank]);
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  EXPECT_GT(r[0].rttUs, 0.0);
  EXPECT_EQ(r[0].gbps, 0.0);
  EXPECT_EQ(r[1].gbps, 0.0);
}

TEST(LinkProbe, DeadPeerIsABadLink) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  pair.ranks[1].conns[0].reset();
  LinkResult r;
  const Status s = probeLink(pair.a(), true, 3, 0, Deadline::afterMs(5000), &r);
  EXPECT_ERROR(s, kRemoteError, "link check with rank 1 (127.0.0.1:");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, s.message());
  const auto j = nlohmann::json::parse(LinkReport{{r}}.toJson());
  EXPECT_EQ(j["links"][0]["ok"], false);
  EXPECT_EQ(j["links"][0]["error"], s.message());
}

TEST(LinkProbe, SilentPeerTimesOut) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  LinkResult r;
  const Status s = probeLink(pair.a(), true, 3, 0, Deadline::afterMs(300), &r);
  EXPECT_ERROR(s, kTimeout, "waiting for rank 1");
  // The time is measured (0.3 s, more when the machine is slow to wake the wait).
  std::smatch m;
  const std::string message = s.message();
  ASSERT_TRUE(std::regex_search(message, m, std::regex(R"(timed out after (\d+\.\d) s)")))
      << message;
  EXPECT_GE(std::stod(m[1]), 0.1) << message;
  EXPECT_LT(std::stod(m[1]), 3.0) << message;
  EXPECT_FALSE(r.ok);
}

TEST(LinkReport, EmptyReportIsAnEmptyList) {
  EXPECT_EQ(nlohmann::json::parse(LinkReport{}.toJson()), nlohmann::json::parse(R"({"links":[]})"));
}

}  // namespace
}  // namespace cohort::transport::testing
