// The stop policy without processes: first cause wins, exact messages.
#include "launcher/job_outcome.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

namespace cohort::launcher {
namespace {

using Action = JobOutcome::Action;

TEST(JobOutcomeTest, SuccessfulRanksChangeNothing) {
  JobOutcome outcome;
  const auto d = outcome.rankEnded(0, 100, W_EXITCODE(0, 0), 2);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_TRUE(d.message.empty());
  EXPECT_FALSE(outcome.stopping());
  EXPECT_EQ(outcome.exitCode(), 0);
}

TEST(JobOutcomeTest, TheFirstFailedRankDecidesTheExitCode) {
  JobOutcome outcome;
  auto d = outcome.rankEnded(2, 1234, W_EXITCODE(3, 0), 2);
  EXPECT_EQ(d.action, Action::kSignal);
  EXPECT_EQ(d.signal, SIGTERM);
  EXPECT_EQ(d.message, "cohortrun: rank 2 (pid 1234) exited with code 3; stopping the others");
  EXPECT_EQ(outcome.exitCode(), 3);
  // The others then die of the SIGTERM: expected, silent, and the code stays.
  d = outcome.rankEnded(0, 1230, W_EXITCODE(0, SIGTERM), 1);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_TRUE(d.message.empty());
  EXPECT_EQ(outcome.exitCode(), 3);
  EXPECT_EQ(outcome.timedOut(10).action, Action::kNone);
}

// --keep-going: a failed rank stops no other, and its code is still the job's.
TEST(JobOutcomeTest, KeepGoingLetsTheOthersRunAndKeepsTheFirstCode) {
  JobOutcome outcome;
  outcome.keepGoing(true);
  auto d = outcome.rankEnded(2, 1234, W_EXITCODE(0, SIGKILL), 3);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_EQ(d.message,
            "cohortrun: rank 2 (pid 1234) was killed by signal 9 (SIGKILL); the others go on "
            "(--keep-going)");
  EXPECT_FALSE(outcome.stopping());
  d = outcome.rankEnded(3, 1235, W_EXITCODE(5, 0), 2);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_EQ(outcome.rankEnded(0, 1230, W_EXITCODE(0, 0), 1).action, Action::kNone);
  EXPECT_EQ(outcome.exitCode(), 128 + SIGKILL);
  // A timeout still stops them.
  EXPECT_EQ(outcome.timedOut(10).action, Action::kSignal);
  EXPECT_EQ(outcome.exitCode(), 124);
}

TEST(JobOutcomeTest, ARankKilledBySignal) {
  JobOutcome outcome;
  const auto d = outcome.rankEnded(1, 77, W_EXITCODE(0, SIGSEGV), 0);
  EXPECT_EQ(d.message, "cohortrun: rank 1 (pid 77) was killed by signal 11 (SIGSEGV)");
  EXPECT_EQ(outcome.exitCode(), 128 + SIGSEGV);
  EXPECT_EQ(describeWaitStatus(W_EXITCODE(0, SIGABRT) | WCOREFLAG),
            "was killed by signal 6 (SIGABRT), core dumped");
}

TEST(JobOutcomeTest, SignalsAreForwardedThenEscalated) {
  JobOutcome outcome;
  auto d = outcome.signalReceived(SIGINT);
  EXPECT_EQ(d.action, Action::kSignal);
  EXPECT_EQ(d.signal, SIGINT);
  EXPECT_EQ(d.message, "cohortrun: received SIGINT; forwarding it to every rank");
  EXPECT_EQ(outcome.exitCode(), 130);
  d = outcome.signalReceived(SIGTERM);
  EXPECT_EQ(d.action, Action::kKill);
  EXPECT_EQ(d.signal, SIGKILL);
  EXPECT_EQ(d.message, "cohortrun: received SIGTERM while stopping; killing every rank (SIGKILL)");
  EXPECT_EQ(outcome.exitCode(), 130);
}

TEST(JobOutcomeTest, TimeoutAndGrace) {
  JobOutcome outcome;
  auto d = outcome.timedOut(2.5);
  EXPECT_EQ(d.action, Action::kSignal);
  EXPECT_EQ(d.signal, SIGTERM);
  EXPECT_EQ(d.message, "cohortrun: the job ran longer than --timeout 2.5 s; stopping every rank");
  EXPECT_EQ(outcome.exitCode(), 124);
  d = outcome.graceExpired({1, 3}, 5);
  EXPECT_EQ(d.action, Action::kKill);
  EXPECT_EQ(d.message,
            "cohortrun: ranks 1, 3 still running 5 s after the stop signal; sending SIGKILL");
  EXPECT_EQ(outcome.graceExpired({4}, 0.5).message,
            "cohortrun: rank 4 still running 0.5 s after the stop signal; sending SIGKILL");
  EXPECT_EQ(outcome.graceExpired({}, 5).action, Action::kNone);
  EXPECT_EQ(outcome.exitCode(), 124);
}

TEST(JobOutcomeTest, ARankThatCannotStart) {
  JobOutcome outcome;
  const auto d = outcome.spawnFailed(3, "cannot execute '/x': Permission denied", 3);
  EXPECT_EQ(d.action, Action::kSignal);
  EXPECT_EQ(d.message,
            "cohortrun: rank 3 could not be started: cannot execute '/x': Permission denied; "
            "stopping the others");
  EXPECT_EQ(outcome.exitCode(), 127);
}

TEST(JobOutcomeTest, SignalNames) {
  EXPECT_EQ(signalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(signalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(signalName(200), "signal 200");
  EXPECT_EQ(describeWaitStatus(W_EXITCODE(42, 0)), "exited with code 42");
}

}  // namespace
}  // namespace cohort::launcher
