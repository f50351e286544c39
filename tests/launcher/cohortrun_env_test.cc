// cohortrun end to end, starting a job: each rank's environment, output
// prefixes and log files, the job's store, several nodes, rank tables and
// command-line errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <vector>

#include "cohortrun_harness.h"
#include "free_port.h"
#include "launcher/launch_plan.h"
#include "test_util.h"
#include "transport/root_info.h"

namespace cohort::launcher::testing {
namespace {

TEST(CohortrunTest, SetsTheEnvironmentOfEveryRankAndPrefixesItsLines) {
  const std::string marker = uniqueMarker("env");
  Cohortrun job(rankJob({"-n", "3"}, marker, {"*=print"}));
  const RunResult r = job.finish();
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string token;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string p = "[" + std::to_string(rank) + "] ";
    const auto lines = linesStartingWith(r.out, p + "env ");
    ASSERT_EQ(lines.size(), 1u) << r.out;
    const std::string& line = lines[0];
    EXPECT_CONTAINS(line, "RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank) +
                              " WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 COHORT_DEVICE_ID=" +
                              std::to_string(rank) + " ");
    EXPECT_CONTAINS(line, "MASTER_ADDR=(unset)");
    EXPECT_CONTAINS(line, "COHORT_RANKTABLE=(unset)");
    // The root info parses and carries the job token the rank was given.
    const std::size_t at = line.find("COHORT_ROOT_INFO=") + 17;
    transport::RootInfo info;
    ASSERT_OK(transport::RootInfo::fromText(line.substr(at, line.find(' ', at) - at), &info));
    EXPECT_EQ(info.host, "127.0.0.1");
    EXPECT_CONTAINS(line, "COHORT_JOB_TOKEN=" + info.token.hex());
    if (rank > 0) {
      EXPECT_EQ(info.token.hex(), token) << "ranks of one job share one token";
    }
    token = info.token.hex();
    // stdout and stderr stay separate, each prefixed; partial last lines are flushed.
    EXPECT_CONTAINS(r.out, p + "partial-out\n");
    EXPECT_CONTAINS(r.err, p + "to-stderr rank " + std::to_string(rank) + "\n");
    EXPECT_CONTAINS(r.err, p + "partial-err\n");
  }
  EXPECT_FALSE(contains(r.out, "to-stderr"));
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, RanksMeetAtTheStoreItHosts) {
  const std::string marker = uniqueMarker("store");
  Cohortrun job(rankJob({"-n", "4"}, marker, {"*=store"}));
  const RunResult r = job.finish();
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_CONTAINS(r.out, "[" + std::to_string(rank) + "] store ok rank=" + std::to_string(rank) +
                               " size=4 source=cohortrun");
  }
}

TEST(CohortrunTest, LogDirGetsOneFilePerRank) {
  const std::string marker = uniqueMarker("logs");
  const std::string dir = ::testing::TempDir() + marker;
  Cohortrun job(rankJob({"-n", "2", "--log-dir", dir}, marker, {"*=print"}));
  const RunResult r = job.finish();
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream file(dir + "/rank-" + std::to_string(rank) + ".log");
    const std::string text((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
    EXPECT_EQ(text.rfind("env RANK=" + std::to_string(rank) + " ", 0), 0u) << text;
    EXPECT_CONTAINS(text, "to-stderr rank " + std::to_string(rank) + "\n");
    EXPECT_CONTAINS(text, "partial-out\n");
    EXPECT_FALSE(contains(text, "[" + std::to_string(rank) + "]")) << "log files are unprefixed";
  }
}

TEST(CohortrunTest, AMissingProgramIsExit127) {
  Cohortrun job({"-n", "2", "--", "no-such-program-xyz"});
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 127);
  EXPECT_CONTAINS(r.err, "cohortrun: 'no-such-program-xyz': command not found (searched PATH)");
}

TEST(CohortrunTest, TheProgramMayFollowTheOptionsWithoutDashes) {
  Cohortrun job({"-n", "2", TEST_RANK_PATH, uniqueMarker("nodash"), "*=print"});
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(linesStartingWith(r.out, "[1] env RANK=1 ").size(), 1u) << r.out;
}

// The processors each rank may run on, from its own /proc/self/status.
std::vector<std::string> allowedLists(const RunResult& r, int ranks) {
  std::vector<std::string> lists;
  for (int rank = 0; rank < ranks; ++rank) {
    const auto lines = linesStartingWith(r.out, "[" + std::to_string(rank) + "] Cpus_allowed_list:");
    lists.push_back(lines.size() == 1 ? lines[0].substr(lines[0].find(':') + 1) : "?");
  }
  return lists;
}

TEST(CohortrunTest, BindsEachRankToOneProcessorRoundRobinUnlessToldNot) {
  const std::vector<int> cpus = allowedCpus();
  ASSERT_FALSE(cpus.empty());
  const std::string script = "grep Cpus_allowed_list /proc/self/status";
  const int n = static_cast<int>(cpus.size()) + 1;  // one more rank than processors
  {
    Cohortrun job({"-n", std::to_string(n), "--", "/bin/sh", "-c", script});
    const RunResult r = job.finish();
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto lists = allowedLists(r, n);
    for (int rank = 0; rank < n; ++rank) {
      EXPECT_EQ(lists[rank], "\t" + std::to_string(cpus[rank % cpus.size()])) << r.out;
    }
  }
  {
    Cohortrun job({"-n", "2", "--bind-to", "none", "--", "/bin/sh", "-c", script});
    const RunResult r = job.finish();
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::string own;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) own = line.substr(line.find(':') + 1);
    }
    for (const auto& list : allowedLists(r, 2)) EXPECT_EQ(list, own) << r.out;
  }
  Cohortrun bad({"-n", "2", "--bind-to", "socket", "--", "true"});
  const RunResult r = bad.finish();
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_CONTAINS(r.err, "--bind-to: socket not in {core,none}");
}

TEST(CohortrunTest, AnUnknownOptionIsExit2) {
  Cohortrun job({"-n", "2", "--bogus", TEST_RANK_PATH});
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_CONTAINS(r.err, "cohortrun: unknown option '--bogus'");
}

TEST(CohortrunTest, SeveralNodesShareOneStoreAtTheMaster) {
  const std::string marker = uniqueMarker("nodes");
  const std::string master = "127.0.0.1:" + std::to_string(::cohort::test::freePort());
  const std::vector<std::string> env = {"COHORT_JOB_TOKEN=launcher-test-secret"};
  Cohortrun node0(rankJob({"-n", "2", "--nnodes", "2", "--node-rank", "0", "--master", master},
                          marker, {"*=store"}),
                  env);
  Cohortrun node1(rankJob({"-n", "2", "--nnodes", "2", "--node-rank", "1", "--master", master},
                          marker, {"*=store"}),
                  env);
  const RunResult r1 = node1.finish();
  const RunResult r0 = node0.finish();
  ASSERT_EQ(r0.exitCode, 0) << r0.out << r0.err;
  ASSERT_EQ(r1.exitCode, 0) << r1.out << r1.err;
  const std::string token = "token=" + transport::JobToken::fromText("launcher-test-secret").hex();
  for (int rank = 0; rank < 4; ++rank) {
    const std::string& out = rank < 2 ? r0.out : r1.out;
    EXPECT_CONTAINS(out, "[" + std::to_string(rank) + "] store ok rank=" + std::to_string(rank) +
                             " size=4 source=cohortrun " + token);
  }
  expectNothingLeft(marker, r0);
}

TEST(CohortrunTest, TheServingNodeWaitsUntilTheOtherNodesAreDone) {
  const std::string marker = uniqueMarker("linger");
  const std::string master = "127.0.0.1:" + std::to_string(::cohort::test::freePort());
  const auto node = [&](const char* rank, const char* spec) {
    return rankJob({"-n", "2", "--nnodes", "2", "--node-rank", rank, "--master", master}, marker,
                   {spec});
  };
  Cohortrun node0(node("0", "*=store"));
  Cohortrun node1(node("1", "*=store-late:1500"));  // uses the store after node 0's ranks end
  const RunResult r1 = node1.finish();
  const RunResult r0 = node0.finish();
  ASSERT_EQ(r1.exitCode, 0) << r1.out << r1.err;
  EXPECT_EQ(linesStartingWith(r1.out, "[3] late ok").size(), 1u) << r1.out;
  EXPECT_EQ(r0.exitCode, 0) << r0.err;
  EXPECT_GE(r0.seconds, 1.4) << "node 0 kept serving until node 1 was done";
  expectNothingLeft(marker, r0);
}

TEST(CohortrunTest, TheServingNodeHearsAnotherNodesFailure) {
  const std::string marker = uniqueMarker("nodefail");
  const std::string master = "127.0.0.1:" + std::to_string(::cohort::test::freePort());
  Cohortrun node0(rankJob({"-n", "2", "--nnodes", "2", "--node-rank", "0", "--master", master},
                          marker, {"*=print"}));
  Cohortrun node1(rankJob({"-n", "2", "--nnodes", "2", "--node-rank", "1", "--master", master},
                          marker, {"3=exit:3:300", "*=sleep"}));
  const RunResult r1 = node1.finish();
  const RunResult r0 = node0.finish();
  EXPECT_EQ(r1.exitCode, 3);
  EXPECT_CONTAINS(r1.err, "cohortrun: rank 3 (pid ");
  EXPECT_EQ(r0.exitCode, 0) << "node 0's own ranks succeeded";
  EXPECT_CONTAINS(r0.err, "cohortrun: node 1 ended with exit code 3");
  expectNothingLeft(marker, r0);
}

TEST(CohortrunTest, AServingNodeWaitingForOthersCanBeInterrupted) {
  const std::string marker = uniqueMarker("waitint");
  const std::string master = "127.0.0.1:" + std::to_string(::cohort::test::freePort());
  Cohortrun node0(rankJob({"-n", "2", "--nnodes", "2", "--node-rank", "0", "--master", master},
                          marker, {"*=exit:0:0"}));  // node 1 never comes
  ASSERT_TRUE(node0.waitReadyThenSignal(2, 0));
  usleep(300 * 1000);
  ::kill(node0.pid(), SIGTERM);
  const RunResult r = node0.finish();
  EXPECT_EQ(r.exitCode, 128 + SIGTERM);
  EXPECT_LT(r.seconds, 3.0);
}

TEST(CohortrunTest, ANodeOfSeveralSetsMasterVariables) {
  const std::string marker = uniqueMarker("node1");
  Cohortrun job(
      rankJob({"-n", "2", "--nnodes", "3", "--node-rank", "2", "--master", "127.0.0.1:29999"},
              marker, {"*=print"}));
  const RunResult r = job.finish();
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_CONTAINS(r.out,
                  "[4] env RANK=4 LOCAL_RANK=0 WORLD_SIZE=6 LOCAL_WORLD_SIZE=2 "
                  "COHORT_DEVICE_ID=0 ");
  EXPECT_CONTAINS(r.out,
                  "[5] env RANK=5 LOCAL_RANK=1 WORLD_SIZE=6 LOCAL_WORLD_SIZE=2 "
                  "COHORT_DEVICE_ID=1 ");
  EXPECT_CONTAINS(r.out, "MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 ");
  EXPECT_CONTAINS(r.out, "@127.0.0.1:29999 ");            // the root info names the master
  EXPECT_CONTAINS(r.err, "COHORT_JOB_TOKEN is not set");  // the hashed token is warned about
}

TEST(CohortrunTest, BadOptionsExitWithAMessage) {
  const std::string marker = uniqueMarker("badopt");
  Cohortrun job(rankJob({"-n", "2", "--nnodes", "2"}, marker, {"*=print"}));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_CONTAINS(r.err, "cohortrun: a job of 2 nodes needs --master ADDR:PORT");
  EXPECT_TRUE(r.out.empty()) << "no rank started";
}

std::string writeFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// Two servers of two devices; the device ids are not the local ranks.
constexpr const char* kTwoServers = R"({
  "version": "1.0", "status": "completed", "server_count": "2",
  "server_list": [
    {"server_id": "node-a", "host_ip": "10.1.0.1", "device": [
      {"device_id": "4", "device_ip": "192.168.1.4", "rank_id": "0"},
      {"device_id": "6", "device_ip": "192.168.1.6", "rank_id": "1"}]},
    {"server_id": "node-b", "host_ip": "10.1.0.2", "device": [
      {"device_id": "1", "device_ip": "192.168.2.1", "rank_id": "2"},
      {"device_id": "3", "device_ip": "192.168.2.3", "rank_id": "3"}]}]})";

TEST(CohortrunTest, ARankTableGivesRankIdsAndDevices) {
  const std::string marker = uniqueMarker("table");
  const std::string table = writeFile(marker + ".json", kTwoServers);
  Cohortrun job(
      rankJob({"--ranktable", table, "--server-id", "node-b", "--master", "127.0.0.1:29998"},
              marker, {"*=print"}));
  const RunResult r = job.finish();
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_CONTAINS(r.out,
                  "[2] env RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 "
                  "COHORT_DEVICE_ID=1 ");
  EXPECT_CONTAINS(r.out,
                  "[3] env RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 "
                  "COHORT_DEVICE_ID=3 ");
  EXPECT_CONTAINS(r.out, "COHORT_RANKTABLE=" + table);
  EXPECT_TRUE(linesStartingWith(r.out, "[0]").empty()) << "node-a's ranks run elsewhere";
}

TEST(CohortrunTest, AnInvalidRankTableListsEveryErrorAndStartsNothing) {
  const std::string marker = uniqueMarker("badtable");
  std::string text = kTwoServers;
  text.replace(text.find("\"rank_id\": \"3\""), 14, "\"rank_id\": \"2\"");  // duplicate
  text.replace(text.find("\"6\""), 3, "\"4\"");  // duplicate device on node-a
  const std::string table = writeFile(marker + ".json", text);
  Cohortrun job(rankJob({"--ranktable", table, "--server-id", "node-a"}, marker, {"*=print"}));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_CONTAINS(r.err, "cohortrun: ");
  EXPECT_CONTAINS(r.err, "duplicate-rank-id");
  EXPECT_CONTAINS(r.err, "duplicate-device-id");
  EXPECT_CONTAINS(r.err, table);
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CohortrunTest, AServerIdNotInTheTableIsNamed) {
  const std::string marker = uniqueMarker("noserver");
  const std::string table = writeFile(marker + ".json", kTwoServers);
  Cohortrun job(rankJob({"--ranktable", table, "--server-id", "node-z"}, marker, {"*=print"}));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_CONTAINS(r.err, "--server-id 'node-z' is not in the rank table");
  EXPECT_CONTAINS(r.err, "'node-a', 'node-b'");
}

}  // namespace
}  // namespace cohort::launcher::testing
