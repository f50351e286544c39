// Options -> plan: rank numbering, devices, the store's place, and every option
// error; rank tables are loaded from files written here.
#include "launcher/launch_plan.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace cohort::launcher {
namespace {

LaunchOptions counts(int n) {
  LaunchOptions o;
  o.ranksPerNode = n;
  o.command = {"prog"};
  return o;
}

std::string writeTable(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kTwoServers = R"({
  "version": "1.0", "status": "completed", "server_count": "2",
  "server_list": [
    {"server_id": "node-a", "device": [
      {"device_id": "4", "device_ip": "192.168.1.4", "rank_id": "0"},
      {"device_id": "6", "device_ip": "192.168.1.6", "rank_id": "1"}]},
    {"server_id": "node-b", "device": [
      {"device_id": "1", "device_ip": "192.168.2.1", "rank_id": "2"},
      {"device_id": "3", "device_ip": "192.168.2.3", "rank_id": "3"}]}]})";

constexpr const char* kOneServer = R"({
  "version": "1.0", "status": "completed", "server_count": "1",
  "server_list": [{"server_id": "solo", "device": [
      {"device_id": "2", "device_ip": "192.168.1.2", "rank_id": "0"},
      {"device_id": "5", "device_ip": "192.168.1.5", "rank_id": "1"}]}]})";

TEST(LaunchPlanTest, OneMachine) {
  LaunchPlan plan;
  ASSERT_OK(makeLaunchPlan(counts(4), &plan));
  EXPECT_EQ(plan.worldSize, 4);
  EXPECT_EQ(plan.localSize, 4);
  EXPECT_EQ(plan.nodeCount, 1);
  ASSERT_EQ(plan.ranks.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.ranks[i].rank, i);
    EXPECT_EQ(plan.ranks[i].localRank, i);
    EXPECT_EQ(plan.ranks[i].deviceId, i);
  }
  EXPECT_TRUE(plan.masterAddr.empty());
  EXPECT_TRUE(plan.servesStore);
  EXPECT_TRUE(plan.ranktablePath.empty());
}

TEST(LaunchPlanTest, CoresAreDealtRoundRobinByLocalRank) {
  LaunchPlan plan;
  ASSERT_OK(makeLaunchPlan(counts(5), &plan));
  bindToCores({3, 5}, &plan);
  const std::vector<std::vector<int>> roundRobin = {{3}, {5}, {3}, {5}, {3}};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(plan.ranks[i].cpus, roundRobin[i]) << i;
  // Fewer ranks than processors: consecutive shares, the first ones larger.
  ASSERT_OK(makeLaunchPlan(counts(3), &plan));
  bindToCores({0, 1, 2, 3, 4, 5, 6, 7}, &plan);
  const std::vector<std::vector<int>> shares = {{0, 1, 2}, {3, 4, 5}, {6, 7}};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(plan.ranks[i].cpus, shares[i]) << i;
  LaunchOptions unbound = counts(2);
  unbound.bindCores = false;
  ASSERT_OK(makeLaunchPlan(unbound, &plan));
  for (const RankSlot& slot : plan.ranks) EXPECT_TRUE(slot.cpus.empty());
  // By default the ranks are bound to the processors this process may use.
  ASSERT_OK(makeLaunchPlan(counts(1), &plan));
  EXPECT_EQ(plan.ranks[0].cpus, allowedCpus());
}

TEST(LaunchPlanTest, OneNodeOfSeveral) {
  LaunchOptions o = counts(4);
  o.nnodes = 3;
  o.nodeRank = 1;
  o.master = "10.0.0.1:29500";
  LaunchPlan plan;
  ASSERT_OK(makeLaunchPlan(o, &plan));
  EXPECT_EQ(plan.worldSize, 12);
  EXPECT_EQ(plan.localSize, 4);
  EXPECT_EQ(plan.nodeRank, 1);
  ASSERT_EQ(plan.ranks.size(), 4u);
  EXPECT_EQ(plan.ranks[0].rank, 4);
  EXPECT_EQ(plan.ranks[3].rank, 7);
  EXPECT_EQ(plan.ranks[3].localRank, 3);
  EXPECT_EQ(plan.ranks[3].deviceId, 3);
  EXPECT_EQ(plan.masterAddr, "10.0.0.1");
  EXPECT_EQ(plan.masterPort, 29500);
  EXPECT_FALSE(plan.servesStore) << "node 0 serves the store";
  o.nodeRank = 0;
  ASSERT_OK(makeLaunchPlan(o, &plan));
  EXPECT_TRUE(plan.servesStore);
}

TEST(LaunchPlanTest, HostPortForms) {
  std::string host;
  int port = 0;
  ASSERT_OK(parseHostPort("[fe80::1]:29500", &host, &port));
  EXPECT_EQ(host, "fe80::1");
  EXPECT_EQ(port, 29500);
  ASSERT_OK(parseHostPort("head-node:1", &host, &port));
  EXPECT_EQ(host, "head-node");
  for (const std::string bad : {"head", "head:0", "head:65536", "head:abc", ":29500", "a b:1"}) {
    EXPECT_ERROR(parseHostPort(bad, &host, &port), kInvalidArgument,
                 "--master '" + bad + "' is not ADDR:PORT");
  }
}

TEST(LaunchPlanTest, BadOptionsNameTheOption) {
  LaunchPlan plan;
  LaunchOptions o = counts(2);
  o.command.clear();
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument, "no program to run");
  EXPECT_ERROR(makeLaunchPlan(counts(0), &plan), kInvalidArgument, "-n 0 must be in 1..1024");
  o = counts(2);
  o.nnodes = 2;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument,
               "a job of 2 nodes needs --master ADDR:PORT");
  o.master = "h:1";
  o.nodeRank = 2;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument, "--node-rank 2 is not below --nnodes 2");
  o = counts(2);
  o.nodeRank = 1;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument, "--node-rank 1 needs --nnodes K");
  o = counts(2);
  o.graceS = -1;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument, "--grace -1 must not be negative");
  o = counts(2);
  o.timeoutS = -2;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument, "--timeout -2 must not be negative");
  o = counts(2);
  o.serverId = "node-a";
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument,
               "--server-id 'node-a' needs --ranktable FILE");
  EXPECT_TRUE(plan.ranks.empty()) << "untouched on error";
}

TEST(LaunchPlanTest, RankTableServers) {
  LaunchOptions o;
  o.command = {"prog"};
  o.ranktable = writeTable("plan_two.json", kTwoServers);
  o.serverId = "node-b";
  o.master = "127.0.0.1:29500";
  LaunchPlan plan;
  ASSERT_OK(makeLaunchPlan(o, &plan));
  EXPECT_EQ(plan.worldSize, 4);
  EXPECT_EQ(plan.localSize, 2);
  EXPECT_EQ(plan.nodeCount, 2);
  EXPECT_EQ(plan.nodeRank, 1);
  ASSERT_EQ(plan.ranks.size(), 2u);
  EXPECT_EQ(plan.ranks[0].rank, 2);
  EXPECT_EQ(plan.ranks[0].deviceId, 1);
  EXPECT_EQ(plan.ranks[1].rank, 3);
  EXPECT_EQ(plan.ranks[1].localRank, 1);
  EXPECT_EQ(plan.ranks[1].deviceId, 3);
  EXPECT_FALSE(plan.servesStore);
  EXPECT_EQ(plan.ranktablePath.front(), '/');
  o.serverId = "node-a";
  ASSERT_OK(makeLaunchPlan(o, &plan));
  EXPECT_TRUE(plan.servesStore) << "node-a holds rank 0";
  EXPECT_EQ(plan.ranks[1].deviceId, 6);
}

TEST(LaunchPlanTest, ASingleServerTableNeedsNoServerIdNorMaster) {
  LaunchOptions o;
  o.command = {"prog"};
  o.ranktable = writeTable("plan_one.json", kOneServer);
  LaunchPlan plan;
  ASSERT_OK(makeLaunchPlan(o, &plan));
  EXPECT_EQ(plan.worldSize, 2);
  EXPECT_EQ(plan.ranks[0].deviceId, 2);
  EXPECT_EQ(plan.ranks[1].deviceId, 5);
  EXPECT_TRUE(plan.masterAddr.empty());
  EXPECT_TRUE(plan.servesStore);
}

TEST(LaunchPlanTest, RankTableContradictionsAndProblems) {
  LaunchOptions o;
  o.command = {"prog"};
  o.ranktable = writeTable("plan_two.json", kTwoServers);
  LaunchPlan plan;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument,
               "has 2 servers ('node-a', 'node-b'): choose this machine's with --server-id ID");
  o.serverId = "node-z";
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument,
               "--server-id 'node-z' is not in the rank table");
  o.serverId = "node-b";
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument,
               "a job of 2 nodes needs --master ADDR:PORT");
  o.master = "127.0.0.1:29500";
  o.ranksPerNode = 3;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument,
               "-n 3 contradicts the rank table " + o.ranktable + ": server 'node-b' has 2 ranks");
  o.ranksPerNode = 0;
  o.nnodes = 3;
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument, "--nnodes 3 contradicts the rank table");
  o.nnodes = 0;
  o.nodeRank = 0;
  EXPECT_ERROR(
      makeLaunchPlan(o, &plan), kInvalidArgument,
      "--node-rank 0 contradicts the rank table " + o.ranktable + ": server 'node-b' is server 1");
  o.nodeRank = -1;
  std::string bad = kTwoServers;
  bad.replace(bad.find("\"rank_id\": \"3\""), 14, "\"rank_id\": \"2\"");
  o.ranktable = writeTable("plan_bad.json", bad);
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kValidationError, "duplicate-rank-id");
  o.ranktable = ::testing::TempDir() + "no_such_table.json";
  EXPECT_ERROR(makeLaunchPlan(o, &plan), kInvalidArgument, "no_such_table.json");
}

}  // namespace
}  // namespace cohort::launcher
