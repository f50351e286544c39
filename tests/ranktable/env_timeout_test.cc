// COHORT_RANKTABLE_TIMEOUT (set to 1 for this binary) bounds the wait for an
// "initializing" table when LoadOptions::timeoutMs is left at -1.
#include <chrono>

#include "tests/ranktable/ranktable_test_util.h"

namespace cohort::ranktable {
namespace {

TEST(EnvTimeout, DefaultTimeoutComesFromTheEnvironment) {
  LoadOptions options;
  options.logWarnings = false;
  options.pollIntervalMs = 100;
  ASSERT_EQ(options.timeoutMs, -1);
  const auto start = std::chrono::steady_clock::now();
  ClusterSpec spec;
  const Status status = loadClusterFile(test::dataPath("initializing.json"), options, &spec);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  EXPECT_EQ(status.code(), ErrorCode::kTimeout) << status.toString();
  EXPECT_NE(status.message().find("after 1000 ms"), std::string::npos) << status.message();
  EXPECT_GE(ms, 1000);
  EXPECT_LT(ms, 10000);
}

}  // namespace
}  // namespace cohort::ranktable
