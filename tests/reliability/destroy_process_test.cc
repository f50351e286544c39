// Nothing lost at destroy, ranks as processes: the destroy cases over shm and
// tcp, and a leaver that exits right after its sync without destroying. Every rank checks
// every element and every destroy; no process outlives a test.
#include <gtest/gtest.h>

#include <string>

#include "reliability/rank_processes.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;

class DestroyProcesses : public ::testing::TestWithParam<std::string> {};

void expectEveryRankOk(Job* job, int ranks, const char* marker) {
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(job->wait(r, 240s), 0) << "rank " << r << ":\n" << job->log(r);
    EXPECT_NE(job->log(r).find(marker), std::string::npos) << "rank " << r << ":\n"
                                                             << job->log(r);
  }
  EXPECT_EQ(job->leftBehind(), "");
}

TEST_P(DestroyProcesses, LeaverNeverBreaksItsPeers) {
  JobSpec spec;
  spec.ranks = 3;
  spec.args = {"cases", "7", "12345"};
  spec.transport = GetParam();
  Job job(COHORT_DESTROY_WORKER, spec);
  expectEveryRankOk(&job, spec.ranks, "cases OK");
}

TEST_P(DestroyProcesses, LeaverThatExitsAfterItsSyncBreaksNobody) {
  JobSpec spec;
  spec.ranks = 3;
  spec.args = {"exit", "7"};
  spec.transport = GetParam();
  Job job(COHORT_DESTROY_WORKER, spec);
  expectEveryRankOk(&job, spec.ranks, "cases OK");
}

INSTANTIATE_TEST_SUITE_P(Transports, DestroyProcesses, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace cohort::testing
