// cohortrun end to end, stopping a job: a failed rank, a rank killed by a
// signal, ranks ignoring SIGTERM, --timeout, signals to cohortrun, cohortrun
// killed itself. Every case checks the exit status, the one-line reason and
// that no process of the job is left.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <vector>

#include "cohortrun_harness.h"
#include "test_util.h"

namespace cohort::launcher::testing {
namespace {

TEST(CohortrunTest, AFailedRankStopsTheOthersWithItsExitCode) {
  const std::string marker = uniqueMarker("fail");
  Cohortrun job(rankJob({"-n", "3"}, marker, {"1=exit:3:300", "*=sleep"}));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 3);
  const auto reasons = linesStartingWith(r.err, "cohortrun: ");
  ASSERT_EQ(reasons.size(), 1u) << r.err;
  EXPECT_CONTAINS(reasons[0], "cohortrun: rank 1 (pid ");
  EXPECT_CONTAINS(reasons[0], ") exited with code 3; stopping the others");
  EXPECT_LT(r.seconds, 4.0) << "the others stop on SIGTERM, well within the 5 s grace";
  EXPECT_EQ(reportedPids(r.out).size(), 3u) << r.out;
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, ARankKilledBySignalGives128PlusSignal) {
  const std::string marker = uniqueMarker("segv");
  Cohortrun job(rankJob({"-n", "3"}, marker, {"2=segv:300", "*=sleep"}));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 128 + SIGSEGV);
  EXPECT_CONTAINS(r.err, "cohortrun: rank 2 (pid ");
  EXPECT_CONTAINS(r.err, ") was killed by signal 11 (SIGSEGV); stopping the others");
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, RanksIgnoringSigtermAreKilledAfterTheGraceTime) {
  const std::string marker = uniqueMarker("grace");
  Cohortrun job(rankJob({"-n", "3", "--grace", "0.5"}, marker, {"0=exit:1:300", "*=ignore-term"}));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_CONTAINS(r.err, "cohortrun: rank 0 (pid ");
  EXPECT_CONTAINS(r.err,
                  "cohortrun: ranks 1, 2 still running 0.5 s after the stop signal; "
                  "sending SIGKILL");
  EXPECT_GE(r.seconds, 0.8);  // 0.3 s before the failure + 0.5 s grace
  EXPECT_LT(r.seconds, 4.0);
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, TimeoutStopsTheJobWith124) {
  const std::string marker = uniqueMarker("timeout");
  Cohortrun job(rankJob({"-n", "2", "--timeout", "1"}, marker, {"*=sleep"}));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 124);
  EXPECT_CONTAINS(r.err, "cohortrun: the job ran longer than --timeout 1 s; stopping every rank");
  EXPECT_GE(r.seconds, 1.0);
  EXPECT_LT(r.seconds, 4.0);
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, SigtermToCohortrunReachesEveryRank) {
  const std::string marker = uniqueMarker("sigterm");
  Cohortrun job(rankJob({"-n", "3"}, marker, {"*=sleep"}));
  ASSERT_TRUE(job.waitReadyThenSignal(3, SIGTERM));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 128 + SIGTERM);
  EXPECT_CONTAINS(r.err, "cohortrun: received SIGTERM; forwarding it to every rank");
  EXPECT_LT(r.seconds, 4.0);
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, SigintToCohortrunReachesEveryRank) {
  const std::string marker = uniqueMarker("sigint");
  Cohortrun job(rankJob({"-n", "2"}, marker, {"*=sleep"}));
  ASSERT_TRUE(job.waitReadyThenSignal(2, SIGINT));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 128 + SIGINT);
  EXPECT_CONTAINS(r.err, "cohortrun: received SIGINT; forwarding it to every rank");
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, ASecondSignalKillsAtOnce) {
  const std::string marker = uniqueMarker("twice");
  Cohortrun job(rankJob({"-n", "2", "--grace", "30"}, marker, {"*=ignore-term"}));
  ASSERT_TRUE(job.waitReadyThenSignal(2, SIGTERM));
  usleep(200 * 1000);
  ::kill(job.pid(), SIGINT);
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 128 + SIGTERM) << "the first cause decides the exit code";
  EXPECT_CONTAINS(r.err, "cohortrun: received SIGINT while stopping; killing every rank (SIGKILL)");
  EXPECT_LT(r.seconds, 5.0);
  expectNothingLeft(marker, r);
}

TEST(CohortrunTest, KillingCohortrunWithSigkillLeavesNoOrphans) {
  const std::string marker = uniqueMarker("kill9");
  Cohortrun job(rankJob({"-n", "3"}, marker, {"*=sleep"}));
  ASSERT_TRUE(job.waitReadyThenSignal(3, SIGKILL));
  const RunResult r = job.finish();
  EXPECT_EQ(r.termSignal, SIGKILL);
  expectNothingLeft(marker, r);  // PR_SET_PDEATHSIG
}

TEST(CohortrunTest, WhatARankStartedDiesWithIt) {
  const std::string marker = uniqueMarker("spawn");
  Cohortrun job(rankJob({"-n", "2"}, marker, {"*=spawn"}));
  ASSERT_TRUE(job.waitReadyThenSignal(2, SIGTERM));
  const RunResult r = job.finish();
  EXPECT_EQ(r.exitCode, 128 + SIGTERM);
  EXPECT_EQ(reportedPids(r.out).size(), 4u) << r.out;  // two ranks, two grandchildren
  expectNothingLeft(marker, r);
}

}  // namespace
}  // namespace cohort::launcher::testing
