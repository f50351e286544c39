// Surviving a failed rank with real processes over shm and over tcp: a rank killed
// (SIGKILL) or aborting (destroy with abort, its process alive) in the middle of an
// allreduce loop; the survivors agree on the failed rank without being told, shrink,
// and check every element of 100 allreduces among themselves. Before that, every
// survivor's failed call and a call after it give the same agreed failed ranks. No
// process outlives a test.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <thread>

#include "reliability/rank_processes.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;

const std::string kLoop4M = std::to_string(4u << 20);

class ShrinkAfterFailure : public ::testing::TestWithParam<std::string> {
 protected:
  // Four ranks of the worker's "shrink" loop over this test's transport.
  JobSpec shrinkJob() const {
    JobSpec spec;
    spec.ranks = 4;
    spec.args = {"shrink", kLoop4M};
    spec.transport = GetParam();
    return spec;
  }
  // Kills rank r (SIGKILL) and sees it end of it.
  static void kill(Job* job, int r) {
    job->signal(r, SIGKILL);
    EXPECT_EQ(job->wait(r, 5s), 128 + SIGKILL) << "rank " << r;
  }
  void startLoop(Job* job, int n) {
    for (int r = 0; r < n; ++r) {
      ASSERT_TRUE(job->waitFor(r, "looping", 60s)) << "rank " << r << ":\n" << job->log(r);
    }
  }
  // Each survivor (the job's store is rank 0's, so rank 2 is the one that fails)
  // agreed on rank 2, shrank to 3 ranks in the old order and checked 100 allreduces.
  // The loop's failed call and a later one name the agreed rank, as a remote error.
  void expectSurvivorsShrank(Job* job) {
    const int newRank[] = {0, 1, -1, 2};
    const std::string agreed = "; the survivors agree that rank(s) 2 failed";
    for (int r : {0, 1, 3}) {
      EXPECT_EQ(job->wait(r, 30s), 0) << "rank " << r << ":\n" << job->log(r);
      const std::string log = job->log(r);
      for (const std::string call : {"loop error", "later call"}) {
        const std::string line = lineWith(log, "rank " + std::to_string(r) + ": " + call);
        EXPECT_NE(line.find(" code=" + std::to_string(kRemoteError) + ": "), std::string::npos)
            << line;
        EXPECT_NE(line.find(agreed), std::string::npos) << line;
      }
      EXPECT_NE(log.find("shrunk: failed=[2] rank=" + std::to_string(newRank[r]) + " size=3"),
                std::string::npos)
          << "rank " << r << ":\n" << log;
      EXPECT_NE(log.find("after shrink: 100 allreduces OK on 3 ranks"), std::string::npos)
          << "rank " << r << ":\n" << log;
    }
  }
};

TEST_P(ShrinkAfterFailure, SurvivorsOfAKilledRankAgreeOnItShrinkAndGoOn) {
  JobSpec spec = shrinkJob();
  Job job(COHORT_FAULT_WORKER, spec);
  startLoop(&job, 4);
  kill(&job, 2);
  expectSurvivorsShrank(&job);
  EXPECT_EQ(job.leftBehind(), "");
}

// The aborting rank's process lives on (5 s): its note in the store, not its exit,
// tells the survivors, who finish before it exits.
TEST_P(ShrinkAfterFailure, SurvivorsOfAnAbortingRankDoNotWaitForItsProcess) {
  JobSpec spec = shrinkJob();
  spec.rankEnv[2] = {"FAULT_WORKER_ABORT_AT=20"};
  Job job(COHORT_FAULT_WORKER, spec);
  startLoop(&job, 4);
  expectSurvivorsShrank(&job);
  EXPECT_EQ(job.wait(2, 15s), 0) << job.log(2);
  for (int r : {0, 1, 3}) EXPECT_LT(job.rank(r).exitedAt, job.rank(2).exitedAt) << "rank " << r;
  EXPECT_EQ(job.leftBehind(), "");
}

// Rank 3 makes no call when rank 2 dies: the others' errors do not wait for it (it
// lives, which its node's ranks can see), and its next call, 6 s later, reads the
// same agreement.
TEST_P(ShrinkAfterFailure, SurvivorsAgreeWithoutWaitingForARankThatMakesNoCall) {
  JobSpec spec = shrinkJob();
  spec.rankEnv[3] = {"FAULT_WORKER_PAUSE_AT=20"};
  Job job(COHORT_FAULT_WORKER, spec);
  startLoop(&job, 4);
  ASSERT_TRUE(job.waitFor(3, "pausing", 30s)) << job.log(3);
  kill(&job, 2);
  for (int r : {0, 1}) {
    ASSERT_TRUE(job.waitFor(r, "later call", 5s)) << "rank " << r << ":\n" << job.log(r);
    EXPECT_NE(lineWith(job.log(r), "loop error").find("the survivors agree that rank(s) 2 failed"),
              std::string::npos)
        << job.log(r);
  }
  EXPECT_EQ(job.log(3).find("loop error"), std::string::npos) << "rank 3 woke early";
  expectSurvivorsShrank(&job);
  EXPECT_EQ(job.leftBehind(), "");
}

// The job's store is rank 0's (a torchrun-style job): it dies with rank 0, and the
// survivors move to the lowest live rank's standby store to agree and shrink.
TEST_P(ShrinkAfterFailure, SurvivorsOfTheRankServingTheStoreGoOnWithAStandby) {
  JobSpec spec = shrinkJob();
  Job job(COHORT_FAULT_WORKER, spec);
  startLoop(&job, 4);
  kill(&job, 0);
  for (int r : {1, 2, 3}) {
    EXPECT_EQ(job.wait(r, 30s), 0) << "rank " << r << ":\n" << job.log(r);
    const std::string log = job.log(r);
    EXPECT_NE(log.find("the survivors go on with rank 1's standby store"), std::string::npos)
        << "rank " << r << ":\n" << log;
    EXPECT_NE(log.find("shrunk: failed=[0] rank=" + std::to_string(r - 1) + " size=3"),
              std::string::npos)
        << "rank " << r << ":\n" << log;
    EXPECT_NE(log.find("after shrink: 100 allreduces OK on 3 ranks"), std::string::npos)
        << "rank " << r << ":\n" << log;
  }
  EXPECT_EQ(job.leftBehind(), "");
}

INSTANTIATE_TEST_SUITE_P(Transports, ShrinkAfterFailure, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace cohort::testing
