// detectJobEnvironment from variable maps: every source, the order between them,
// and every error (code, variable and value in the message).
#include "transport/jobenv/job_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "cohort/version.h"
#include "test_util.h"

namespace cohort::transport {
namespace {

std::string rootText(const std::string& host, int port, const std::string& secret) {
  RootInfo info;
  info.host = host;
  info.port = static_cast<std::uint16_t>(port);
  info.token = JobToken::fromText(secret);
  info.protocolVersion = COHORT_PROTOCOL_VERSION;
  return info.toText();
}

JobEnvironment detect(const EnvMap& env) {
  JobEnvironment job;
  const Status s = detectJobEnvironment(env, &job);
  EXPECT_TRUE(s.ok()) << s.toString();
  return job;
}

TEST(JobEnvTest, CohortrunVariables) {
  const JobEnvironment job = detect({{"COHORT_ROOT_INFO", rootText("10.0.0.5", 60001, "s")},
                                     {"RANK", "1"},
                                     {"WORLD_SIZE", "4"},
                                     {"LOCAL_RANK", "1"},
                                     {"LOCAL_WORLD_SIZE", "2"},
                                     {"COHORT_JOB_TOKEN", "s"},
                                     {"COHORT_DEVICE_ID", "3"}});
  EXPECT_EQ(job.source, "cohortrun");
  EXPECT_EQ(job.rank, 1);
  EXPECT_EQ(job.size, 4);
  EXPECT_EQ(job.localRank, 1);
  EXPECT_EQ(job.localSize, 2);
  ASSERT_TRUE(job.rootInfo.has_value());
  EXPECT_EQ(job.rootInfo->host, "10.0.0.5");
  EXPECT_EQ(job.rootInfo->port, 60001);
  EXPECT_EQ(job.rootInfo->token, JobToken::fromText("s"));
  EXPECT_EQ(job.jobToken, "s");
  EXPECT_EQ(job.deviceId, 3);
  EXPECT_TRUE(job.masterAddr.empty());
  EXPECT_TRUE(job.nodeList.empty());
}

TEST(JobEnvTest, OpenMpiVariablesWinOverTorchrunStyleOnes) {
  const JobEnvironment job = detect({{"OMPI_COMM_WORLD_RANK", "5"},
                                     {"OMPI_COMM_WORLD_SIZE", "8"},
                                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                     {"RANK", "0"},
                                     {"WORLD_SIZE", "1"},
                                     {"PMIX_RANK", "5"}});
  EXPECT_EQ(job.source, "openmpi");
  EXPECT_EQ(job.rank, 5);
  EXPECT_EQ(job.size, 8);
  EXPECT_EQ(job.localRank, 1);
  EXPECT_EQ(job.localSize, 4);
  EXPECT_EQ(job.deviceId, -1);
}

TEST(JobEnvTest, MpirunWithARootInfoPassedAlong) {
  // mpirun -x COHORT_ROOT_INFO: ranks from OpenMPI, the store from the root info.
  const JobEnvironment job = detect({{"OMPI_COMM_WORLD_RANK", "1"},
                                     {"OMPI_COMM_WORLD_SIZE", "2"},
                                     {"COHORT_ROOT_INFO", rootText("10.0.0.7", 6000, "t")}});
  EXPECT_EQ(job.source, "openmpi");
  ASSERT_TRUE(job.rootInfo.has_value());
  EXPECT_EQ(job.rootInfo->host, "10.0.0.7");
  EXPECT_EQ(job.localRank, -1) << "not given: unknown";
  EXPECT_EQ(job.localSize, 0);
}

TEST(JobEnvTest, PmixRankWithSlurmSizes) {
  const JobEnvironment job = detect({{"PMIX_RANK", "2"},
                                     {"SLURM_NTASKS", "4"},
                                     {"SLURM_LOCALID", "0"},
                                     {"SLURM_NODEID", "1"},
                                     {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}});
  EXPECT_EQ(job.source, "pmix");
  EXPECT_EQ(job.rank, 2);
  EXPECT_EQ(job.size, 4);
  EXPECT_EQ(job.localRank, 0);
  EXPECT_EQ(job.localSize, 2);
}

TEST(JobEnvTest, SlurmVariablesAndNodeList) {
  const JobEnvironment job = detect({{"SLURM_PROCID", "5"},
                                     {"SLURM_NTASKS", "6"},
                                     {"SLURM_LOCALID", "2"},
                                     {"SLURM_NODEID", "1"},
                                     {"SLURM_STEP_TASKS_PER_NODE", "3(x2)"},
                                     {"SLURM_STEP_NODELIST", "node[01-02]"},
                                     {"SLURM_JOB_NODELIST", "node[01-09]"}});
  EXPECT_EQ(job.source, "slurm");
  EXPECT_EQ(job.rank, 5);
  EXPECT_EQ(job.size, 6);
  EXPECT_EQ(job.localRank, 2);
  EXPECT_EQ(job.localSize, 3);
  EXPECT_EQ(job.nodeList, (std::vector<std::string>{"node01", "node02"})) << "the step's nodes";
}

TEST(JobEnvTest, SlurmUnevenNodesAndTheJobNodeList) {
  const JobEnvironment job = detect({{"SLURM_PROCID", "2"},
                                     {"SLURM_NTASKS", "3"},
                                     {"SLURM_LOCALID", "0"},
                                     {"SLURM_NODEID", "1"},
                                     {"SLURM_TASKS_PER_NODE", "2,1"},
                                     {"SLURM_JOB_NODELIST", "a,b"}});
  EXPECT_EQ(job.localSize, 1);
  EXPECT_EQ(job.nodeList, (std::vector<std::string>{"a", "b"}));
}

TEST(JobEnvTest, SlurmWithoutNodeIdLeavesTheLocalSizeUnknown) {
  const JobEnvironment job = detect({{"SLURM_PROCID", "2"},
                                     {"SLURM_NTASKS", "3"},
                                     {"SLURM_LOCALID", "0"},
                                     {"SLURM_TASKS_PER_NODE", "2,1"}});
  EXPECT_EQ(job.localRank, 0);
  EXPECT_EQ(job.localSize, 0);
}

TEST(JobEnvTest, TorchrunStyleVariables) {
  const JobEnvironment job = detect({{"RANK", "3"},
                                     {"WORLD_SIZE", "4"},
                                     {"LOCAL_RANK", "1"},
                                     {"LOCAL_WORLD_SIZE", "2"},
                                     {"MASTER_ADDR", "head-node"},
                                     {"MASTER_PORT", "29500"}});
  EXPECT_EQ(job.source, "torchrun/env");
  EXPECT_EQ(job.rank, 3);
  EXPECT_EQ(job.size, 4);
  EXPECT_EQ(job.localRank, 1);
  EXPECT_EQ(job.localSize, 2);
  EXPECT_FALSE(job.rootInfo.has_value());
  EXPECT_EQ(job.masterAddr, "head-node");
  EXPECT_EQ(job.masterPort, 29500);
}

TEST(JobEnvTest, NoLauncherIsUnavailable) {
  JobEnvironment job;
  job.rank = 42;
  EXPECT_ERROR(detectJobEnvironment({{"HOME", "/root"}}, &job), kUnavailable, "no job environment");
  EXPECT_EQ(job.rank, 42) << "untouched on error";
}

struct BadCase {
  EnvMap env;
  ErrorCode code;
  std::string message;
};

class JobEnvErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(JobEnvErrorTest, NamesTheVariableAndValue) {
  JobEnvironment job;
  const Status s = detectJobEnvironment(GetParam().env, &job);
  EXPECT_EQ(s.code(), GetParam().code) << s.toString();
  EXPECT_NE(s.message().find(GetParam().message), std::string::npos) << s.toString();
  EXPECT_EQ(job.rank, -1);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JobEnvErrorTest,
    ::testing::Values(
        BadCase{{{"RANK", "7"}, {"WORLD_SIZE", "4"}},
                ErrorCode::kConfigError,
                "RANK=7 is not below WORLD_SIZE=4"},
        BadCase{{{"RANK", "abc"}, {"WORLD_SIZE", "4"}},
                ErrorCode::kConfigError,
                "RANK='abc' is not a non-negative integer"},
        BadCase{{{"RANK", "-1"}, {"WORLD_SIZE", "4"}},
                ErrorCode::kConfigError,
                "RANK='-1' is not a non-negative integer"},
        BadCase{{{"RANK", "0"}, {"WORLD_SIZE", "0"}},
                ErrorCode::kConfigError,
                "WORLD_SIZE=0 must be at least 1"},
        BadCase{{{"RANK", "0"}}, ErrorCode::kConfigError, "RANK=0 is set but WORLD_SIZE is not"},
        BadCase{
            {{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}},
            ErrorCode::kConfigError,
            "LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2"},
        BadCase{{{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "8"}},
                ErrorCode::kConfigError,
                "LOCAL_WORLD_SIZE=8 is not in 1..WORLD_SIZE=4"},
        BadCase{{{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "4"}},
                ErrorCode::kConfigError,
                "LOCAL_RANK=4 is not below WORLD_SIZE=4"},
        BadCase{{{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}},
                ErrorCode::kConfigError,
                "OMPI_COMM_WORLD_RANK=4 is not below OMPI_COMM_WORLD_SIZE=4"},
        BadCase{{{"OMPI_COMM_WORLD_RANK", "1"}},
                ErrorCode::kConfigError,
                "OMPI_COMM_WORLD_RANK=1 is set but OMPI_COMM_WORLD_SIZE is not (openmpi launch)"},
        BadCase{{{"PMIX_RANK", "2"}},
                ErrorCode::kConfigError,
                "PMIX_RANK=2 is set but WORLD_SIZE or SLURM_NTASKS is not"},
        BadCase{{{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "4"}},
                ErrorCode::kConfigError,
                "SLURM_PROCID=9 is not below SLURM_NTASKS=4"},
        BadCase{{{"SLURM_PROCID", "1"},
                 {"SLURM_NTASKS", "4"},
                 {"SLURM_LOCALID", "1"},
                 {"SLURM_NODEID", "3"},
                 {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}},
                ErrorCode::kConfigError,
                "SLURM_NODEID=3 is not below the 2 nodes of SLURM_STEP_TASKS_PER_NODE='2(x2)'"},
        BadCase{{{"SLURM_PROCID", "1"},
                 {"SLURM_NTASKS", "4"},
                 {"SLURM_LOCALID", "1"},
                 {"SLURM_STEP_TASKS_PER_NODE", "2(x"}},
                ErrorCode::kConfigError,
                "SLURM_STEP_TASKS_PER_NODE='2(x' is not a valid Slurm list"},
        BadCase{{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_NODELIST", "n[1-"}},
                ErrorCode::kConfigError,
                "SLURM_STEP_NODELIST='n[1-' is not a valid Slurm list: unclosed '['"},
        BadCase{{{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"COHORT_ROOT_INFO", "garbage"}},
                ErrorCode::kInvalidArgument,
                "COHORT_ROOT_INFO: root info text 'garbage'"},
        BadCase{{{"RANK", "0"},
                 {"WORLD_SIZE", "1"},
                 {"COHORT_ROOT_INFO", "cohort99:00000000000000000000000000000000@h:1"}},
                ErrorCode::kVersionMismatch,
                "protocol version 99"},
        BadCase{{{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_ADDR", "h"}},
                ErrorCode::kConfigError,
                "MASTER_ADDR='h' is set but MASTER_PORT is not"},
        BadCase{{{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "29500"}},
                ErrorCode::kConfigError,
                "MASTER_PORT='29500' is set but MASTER_ADDR is not"},
        BadCase{
            {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}},
            ErrorCode::kConfigError,
            "MASTER_PORT='70000' is not a port number (1..65535)"},
        BadCase{{{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_ADDR", ""}, {"MASTER_PORT", "1"}},
                ErrorCode::kConfigError,
                "MASTER_ADDR='' is not a host name or address"},
        BadCase{{{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"COHORT_DEVICE_ID", "x"}},
                ErrorCode::kConfigError,
                "COHORT_DEVICE_ID='x' is not a non-negative integer"}));

TEST(JobEnvTest, JobVariablesPicksTheLaunchersNamesFromTheProcess) {
  ::setenv("SLURM_JOB_NODELIST", "jobenv-test[1-2]", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  ::setenv("UNRELATED_JOBENV_TEST", "x", 1);
  const EnvMap env = jobVariables();
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "jobenv-test[1-2]");
  EXPECT_EQ(env.count("UNRELATED_JOBENV_TEST"), 0u);
  JobEnvironment job;
  ASSERT_OK(detectJobEnvironment(&job));
  EXPECT_EQ(job.source, "openmpi");
  EXPECT_EQ(job.nodeList, (std::vector<std::string>{"jobenv-test1", "jobenv-test2"}));
  for (const char* name : {"SLURM_JOB_NODELIST", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                           "UNRELATED_JOBENV_TEST"}) {
    ::unsetenv(name);
  }
}

}  // namespace
}  // namespace cohort::transport
