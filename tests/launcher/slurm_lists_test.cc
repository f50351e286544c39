// Slurm's compact host and tasks-per-node lists.
#include <gtest/gtest.h>

#include "test_util.h"
#include "transport/jobenv/job_env.h"

namespace cohort::transport {
namespace {

using Names = std::vector<std::string>;

Names expand(const std::string& text) {
  Names names;
  const Status s = expandSlurmNodeList("SLURM_STEP_NODELIST", text, &names);
  EXPECT_TRUE(s.ok()) << s.toString();
  return names;
}

TEST(SlurmListsTest, ExpandsRangesListsAndPadding) {
  EXPECT_EQ(expand("node[01-03,07],gpu5"), (Names{"node01", "node02", "node03", "node07", "gpu5"}));
  EXPECT_EQ(expand("host"), (Names{"host"}));
  EXPECT_EQ(expand("n[8-11]"), (Names{"n8", "n9", "n10", "n11"}));
  EXPECT_EQ(expand("n[008-010]"), (Names{"n008", "n009", "n010"}));
  EXPECT_EQ(expand("x[1-2]-ib"), (Names{"x1-ib", "x2-ib"}));
  EXPECT_EQ(expand("r[1-2]n[1-2]"), (Names{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand("a[3],b[1,5-6]"), (Names{"a3", "b1", "b5", "b6"}));
}

TEST(SlurmListsTest, MalformedListsNameTheVariableTextAndProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"node[01-03", "unclosed '['"},
      {"node01]", "']' without '['"},
      {"node[3-1]", "range '3-1' runs backwards"},
      {"node[a-b]", "holds 'a-b', not a number or a range a-b"},
      {"node[]", "holds '', not a number"},
      {"a,,b", "an empty host name"},
      {"a,", "an empty host name"},
      {"n[[1]]", "unclosed '['"},
      {"n[0-99999999]", "more than a million names"},
      {"n[0-9999]m[0-9999]", "more than a million names"},
  };
  for (const auto& [text, why] : cases) {
    Names names = {"untouched"};
    const Status s = expandSlurmNodeList("SLURM_JOB_NODELIST", text, &names);
    EXPECT_EQ(s.code(), ErrorCode::kConfigError) << text;
    EXPECT_NE(s.message().find("SLURM_JOB_NODELIST='" + text + "' is not a valid Slurm list"),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
    EXPECT_EQ(names, Names{"untouched"});
  }
}

TEST(SlurmListsTest, TasksPerNode) {
  std::vector<int> counts;
  ASSERT_OK(expandSlurmTasksPerNode("SLURM_TASKS_PER_NODE", "2(x3),1", &counts));
  EXPECT_EQ(counts, (std::vector<int>{2, 2, 2, 1}));
  ASSERT_OK(expandSlurmTasksPerNode("SLURM_TASKS_PER_NODE", "4", &counts));
  EXPECT_EQ(counts, (std::vector<int>{4}));
  for (const std::string bad : {"2(x3", "x", "2(y3)", "", "1,,2", "-1"}) {
    EXPECT_ERROR(expandSlurmTasksPerNode("SLURM_TASKS_PER_NODE", bad, &counts), kConfigError,
                 "SLURM_TASKS_PER_NODE='" + bad + "' is not a valid Slurm list");
  }
}

}  // namespace
}  // namespace cohort::transport
