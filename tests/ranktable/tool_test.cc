// cohort-ranktable end to end: exit codes and output of each command.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include "tests/ranktable/ranktable_test_util.h"

namespace cohort::ranktable {
namespace {

using test::dataPath;

struct ToolRun {
  int exitCode = -1;
  std::string output;  // stdout and stderr
};

ToolRun runTool(const std::string& arguments) {
  const std::string command = std::string(COHORT_RANKTABLE_TOOL) + " " + arguments + " 2>&1";
  ToolRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    run.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string scratch(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + name;
}

TEST(Tool, ValidatePrintsASummary) {
  const ToolRun run = runTool("validate " + dataPath("good_cluster.yaml"));
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("servers: 2  ranks: 8  devices per server: 4  super pods: 1"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("server 1 \"node-1\" host 10.0.0.2 super pod \"pod-0\": ranks 4..7"),
            std::string::npos)
      << run.output;
}

TEST(Tool, ValidateListsEveryError) {
  const ToolRun run = runTool("validate " + dataPath("bad_many.json"));
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("4 errors"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("/server_list/1/device/0/rank_id: duplicate-rank-id"),
            std::string::npos)
      << run.output;
}

TEST(Tool, ValidateWithRankAndProfile) {
  EXPECT_EQ(runTool("validate -q --rank 3 " + dataPath("good_v1_0.json")).exitCode, 0);
  const ToolRun outside = runTool("validate --rank 4 " + dataPath("good_v1_0.json"));
  EXPECT_EQ(outside.exitCode, 1);
  EXPECT_NE(outside.output.find("rank-not-in-table"), std::string::npos) << outside.output;
  EXPECT_EQ(runTool("validate " + dataPath("good_three_devices.json")).exitCode, 0);
  const ToolRun strict = runTool("validate --profile 910 " + dataPath("good_three_devices.json"));
  EXPECT_EQ(strict.exitCode, 1);
  EXPECT_NE(strict.output.find("bad-devices-per-server"), std::string::npos) << strict.output;
}

TEST(Tool, ValidateDoesNotWaitUnlessAsked) {
  const ToolRun run = runTool("validate " + dataPath("initializing.json"));
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("status-initializing"), std::string::npos) << run.output;
}

TEST(Tool, GenerateThenValidateBothFormats) {
  for (const char* format : {"json", "yaml"}) {
    const std::string path = scratch(std::string("generated.") + format);
    const ToolRun generate = runTool(std::string("generate --servers 4 --devices 8 --format ") +
                                     format + " --super-pod-size 2 -o " + path);
    ASSERT_EQ(generate.exitCode, 0) << generate.output;
    const ToolRun validate = runTool("validate --profile 910 " + path);
    EXPECT_EQ(validate.exitCode, 0) << validate.output;
    EXPECT_NE(validate.output.find("ranks: 32"), std::string::npos) << validate.output;
    EXPECT_NE(validate.output.find("super pods: 2"), std::string::npos) << validate.output;
    std::remove(path.c_str());
  }
}

TEST(Tool, GenerateWritesToStdout) {
  const ToolRun run = runTool("generate --servers 1 --devices 2 --ip-base 172.16.0.10");
  EXPECT_EQ(run.exitCode, 0);
  ClusterSpec spec;
  ASSERT_TRUE(parseRankTableJson(run.output, test::quietOptions(), &spec).ok()) << run.output;
  EXPECT_EQ(spec.ranks[1].deviceIp, "172.16.0.11");
}

TEST(Tool, ConvertKeepsTheCluster) {
  const std::string yaml = scratch("converted.yaml");
  const ToolRun run = runTool("convert " + dataPath("good_v1_2.json") + " --to yaml -o " + yaml);
  ASSERT_EQ(run.exitCode, 0) << run.output;
  ClusterSpec original;
  ClusterSpec converted;
  ASSERT_TRUE(loadClusterFile(dataPath("good_v1_2.json"), test::quietOptions(), &original).ok());
  ASSERT_TRUE(loadClusterFile(yaml, test::quietOptions(), &converted).ok());
  EXPECT_EQ(original, converted);
  std::remove(yaml.c_str());
  const ToolRun legacy = runTool("convert " + dataPath("good_legacy.json") + " --to json");
  EXPECT_EQ(legacy.exitCode, 0);
  EXPECT_NE(legacy.output.find("\"version\": \"1.0\""), std::string::npos) << legacy.output;
}

TEST(Tool, ConvertRefusesABadTable) {
  const ToolRun run = runTool("convert " + dataPath("bad_duplicate_ip.json") + " --to yaml");
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("duplicate-ip"), std::string::npos) << run.output;
}

TEST(Tool, BadCommandLinesExitWithTwo) {
  EXPECT_EQ(runTool("").exitCode, 2);
  EXPECT_EQ(runTool("generate --servers 0 --devices 8").exitCode, 2);
  EXPECT_EQ(runTool("convert x.json --to xml").exitCode, 2);
  EXPECT_EQ(runTool("validate").exitCode, 2);
  EXPECT_EQ(runTool("--help").exitCode, 0);
}

}  // namespace
}  // namespace cohort::ranktable
