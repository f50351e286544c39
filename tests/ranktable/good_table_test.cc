// Good tables: what they load into, their warnings, and round trips through
// the writers.
#include "tests/ranktable/ranktable_test_util.h"

namespace cohort::ranktable {
namespace {

using test::dataPath;
using test::describe;

ClusterSpec loadGood(const std::string& name, Diagnostics* diagnostics = nullptr) {
  Diagnostics local;
  Diagnostics* d = diagnostics != nullptr ? diagnostics : &local;
  ClusterSpec spec;
  const Status status = loadClusterFile(dataPath(name), test::quietOptions(), &spec, d);
  EXPECT_TRUE(status.ok()) << name << ": " << status.toString();
  return spec;
}

TEST(GoodTable, Version10) {
  const ClusterSpec spec = loadGood("good_v1_0.json");
  EXPECT_EQ(spec.version, "1.0");
  ASSERT_EQ(spec.serverCount(), 2);
  ASSERT_EQ(spec.rankCount(), 4);
  EXPECT_EQ(spec.ranksPerServer(), 2);
  EXPECT_EQ(spec.servers[0].serverId, "node-0");
  EXPECT_EQ(spec.servers[0].transport, Transport::kAuto);
  EXPECT_EQ(spec.servers[1].transport, Transport::kRdma);
  EXPECT_EQ(spec.localRanks(1), (std::vector<int>{2, 3}));
  const RankInfo& r3 = spec.ranks[3];
  EXPECT_EQ(r3.rankId, 3);
  EXPECT_EQ(r3.serverIndex, 1);
  EXPECT_EQ(r3.localRank, 1);
  EXPECT_EQ(r3.deviceId, 1);
  EXPECT_EQ(r3.deviceIp, "192.168.1.4");
  EXPECT_EQ(r3.devicePort, 16666);
  EXPECT_EQ(r3.hostIp, "10.0.0.2");
  EXPECT_EQ(r3.hostPort, 60001);
  EXPECT_EQ(r3.superDeviceId, -1);
  EXPECT_TRUE(spec.superPods.empty());
  EXPECT_EQ(spec.serverOf(3), 1);
  EXPECT_EQ(spec.serverOf(4), -1);
  EXPECT_EQ(spec.superPodOf(0), -1);
}

TEST(GoodTable, Version12WithSuperPods) {
  const ClusterSpec spec = loadGood("good_v1_2.json");
  EXPECT_EQ(spec.version, "1.2");
  ASSERT_EQ(spec.superPods.size(), 1u);
  EXPECT_EQ(spec.superPods[0].superPodId, "0");
  EXPECT_EQ(spec.superPods[0].servers, (std::vector<int>{0, 1}));
  EXPECT_EQ(spec.servers[1].superPodId, "0");
  EXPECT_EQ(spec.superPodOf(1), 0);
  EXPECT_EQ(spec.ranks[2].superDeviceId, 2);
  EXPECT_EQ(spec.ranks[2].backupDeviceIp, "192.168.2.3");
  EXPECT_EQ(spec.ranks[2].backupDevicePort, 16667);
}

// Pods on one server_id form one server; ranks follow the device order.
TEST(GoodTable, LegacyTemplateMergesPodsOfOneServer) {
  const ClusterSpec spec = loadGood("good_legacy.json");
  EXPECT_EQ(spec.version, "1.0");
  ASSERT_EQ(spec.serverCount(), 2);
  EXPECT_EQ(spec.servers[0].serverId, "10.0.0.1");
  EXPECT_EQ(spec.localRanks(0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(spec.ranks[2].deviceId, 2);
  EXPECT_EQ(spec.ranks[2].deviceIp, "192.168.1.3");
  EXPECT_EQ(spec.ranks[5].serverIndex, 1);
  EXPECT_EQ(spec.ranks[5].localRank, 2);
}

TEST(GoodTable, YamlClusterFile) {
  Diagnostics diagnostics;
  const ClusterSpec spec = loadGood("good_cluster.yaml", &diagnostics);
  EXPECT_TRUE(diagnostics.all().empty()) << describe(diagnostics);
  EXPECT_EQ(spec.version, "1.2");
  EXPECT_EQ(spec.rankCount(), 8);
  EXPECT_EQ(spec.ranksPerServer(), 4);
  EXPECT_EQ(spec.servers[0].transport, Transport::kRdma);
  EXPECT_EQ(spec.servers[1].transport, Transport::kTcp);
  ASSERT_EQ(spec.superPods.size(), 1u);
  EXPECT_EQ(spec.superPods[0].servers, (std::vector<int>{0, 1}));
  EXPECT_EQ(spec.ranks[4].backupDeviceIp, "192.168.2.5");
  EXPECT_EQ(spec.ranks[4].hostPort, 60000);
  EXPECT_EQ(spec.ranks[7].superDeviceId, 7);
}

TEST(GoodTable, YamlRanksFollowFileOrderWhenOmitted) {
  const ClusterSpec spec = loadGood("good_implicit_ranks.yaml");
  ASSERT_EQ(spec.rankCount(), 4);
  EXPECT_EQ(spec.ranks[2].serverIndex, 1);
  EXPECT_EQ(spec.ranks[2].deviceId, 0);
  EXPECT_EQ(spec.ranks[3].localRank, 1);
}

TEST(GoodTable, NumbersAreAcceptedWithAWarningEach) {
  Diagnostics diagnostics;
  const ClusterSpec spec = loadGood("good_numbers.json", &diagnostics);
  EXPECT_EQ(spec.rankCount(), 2);
  const std::vector<Diagnostic> warnings = diagnostics.warnings();
  ASSERT_EQ(warnings.size(), 4u) << describe(diagnostics);
  for (const auto& w : warnings) EXPECT_EQ(w.rule, Rule::kNumberValue);
  EXPECT_EQ(warnings[0].location.pointer, "/server_count");
  EXPECT_EQ(warnings[2].location.pointer, "/server_list/0/device/0/rank_id");
  EXPECT_EQ(warnings[2].found, "0 (a number)");
}

TEST(GoodTable, YamlWarnsAboutUnknownAndIgnoredKeys) {
  Diagnostics diagnostics;
  const ClusterSpec spec = loadGood("good_warnings.yaml", &diagnostics);
  EXPECT_TRUE(spec.servers[0].hostIp.empty());
  EXPECT_TRUE(spec.superPods.empty()) << "1.2 fields are dropped from a 1.0 file";
  const std::vector<Diagnostic> warnings = diagnostics.warnings();
  ASSERT_EQ(warnings.size(), 2u) << describe(diagnostics);
  EXPECT_EQ(warnings[0].rule, Rule::kUnknownKey);
  EXPECT_EQ(warnings[0].location.pointer, "/servers/0/hostip");
  EXPECT_EQ(warnings[0].location.line, 4);
  EXPECT_EQ(warnings[0].location.column, 5);
  EXPECT_EQ(warnings[1].rule, Rule::kIgnoredKey);
  EXPECT_EQ(warnings[1].location.pointer, "/servers/0/super_pod");
}

TEST(GoodTable, ProfileDefaultAcceptsThreeDevicesPerServer) {
  const ClusterSpec spec = loadGood("good_three_devices.json");
  EXPECT_EQ(spec.ranksPerServer(), 3);
}

class RoundTripTest : public ::testing::TestWithParam<const char*> {};

// file -> spec -> YAML -> spec and file -> spec -> JSON -> spec give equal specs.
TEST_P(RoundTripTest, ThroughYamlAndJson) {
  const ClusterSpec spec = loadGood(GetParam());
  const LoadOptions options = test::quietOptions();
  ClusterSpec fromYaml;
  Diagnostics diagnostics;
  const std::string yaml = toYaml(spec);
  ASSERT_TRUE(parseClusterYaml(yaml, options, &fromYaml, &diagnostics).ok())
      << yaml << describe(diagnostics);
  EXPECT_TRUE(diagnostics.all().empty()) << describe(diagnostics);
  EXPECT_EQ(fromYaml, spec) << yaml;
  ClusterSpec fromJson;
  const std::string json = toJson(spec);
  ASSERT_TRUE(parseRankTableJson(json, options, &fromJson, &diagnostics).ok())
      << json << describe(diagnostics);
  EXPECT_TRUE(diagnostics.all().empty()) << describe(diagnostics);
  EXPECT_EQ(fromJson, spec) << json;
}

INSTANTIATE_TEST_SUITE_P(GoodFiles, RoundTripTest,
                         ::testing::Values("good_v1_0.json", "good_v1_2.json", "good_legacy.json",
                                           "good_numbers.json", "good_cluster.yaml",
                                           "good_implicit_ranks.yaml", "good_three_devices.json"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = std::isalnum(c) ? c : '_';
                           return name;
                         });

// HCCL writes every value as a string; so does toJson.
TEST(Writer, JsonValuesAreStrings) {
  const ClusterSpec spec = loadGood("good_v1_2.json");
  const std::string json = toJson(spec);
  EXPECT_NE(json.find("\"rank_id\": \"3\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"server_count\": \"2\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"super_pod_list\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"status\": \"completed\""), std::string::npos) << json;
}

TEST(Generate, RegularClusterIsValidInBothFormats) {
  GenerateOptions options;
  options.servers = 3;
  options.devicesPerServer = 4;
  options.serversPerSuperPod = 2;
  ClusterSpec spec;
  ASSERT_TRUE(generateCluster(options, &spec).ok());
  EXPECT_EQ(spec.version, "1.2");
  EXPECT_EQ(spec.rankCount(), 12);
  ASSERT_EQ(spec.superPods.size(), 2u);
  EXPECT_EQ(spec.superPods[1].servers, (std::vector<int>{2}));
  EXPECT_EQ(spec.ranks[11].deviceIp, "192.168.100.12");
  EXPECT_EQ(spec.servers[2].hostIp, "10.0.0.3");
  LoadOptions load = test::quietOptions();
  load.profile = Profile::k910;
  ClusterSpec parsed;
  ASSERT_TRUE(parseRankTableJson(toJson(spec), load, &parsed).ok());
  EXPECT_EQ(parsed, spec);
  ASSERT_TRUE(parseClusterYaml(toYaml(spec), load, &parsed).ok());
  EXPECT_EQ(parsed, spec);
}

TEST(Generate, RejectsBadOptions) {
  ClusterSpec spec;
  GenerateOptions options;
  options.servers = 0;
  EXPECT_EQ(generateCluster(options, &spec).code(), ErrorCode::kInvalidArgument);
  options = GenerateOptions();
  options.deviceIpBase = "fe80::1";
  EXPECT_EQ(generateCluster(options, &spec).code(), ErrorCode::kInvalidArgument);
  options = GenerateOptions();
  options.deviceIpBase = "255.255.255.250";  // 8 devices do not fit
  EXPECT_EQ(generateCluster(options, &spec).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace cohort::ranktable
