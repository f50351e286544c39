// processEnded: a live child, a zombie nobody has reaped, and a reaped one.
#include "common/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace cohort {
namespace {

TEST(ProcessEnded, AZombieCountsAsEndedBeforeItsParentReapsIt) {
  EXPECT_FALSE(processEnded(::getpid()));
  EXPECT_FALSE(processEnded(0));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_FALSE(processEnded(child));
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  // Not reaped: a zombie, which kill(pid, 0) alone still finds.
  for (int i = 0; i < 2000 && !processEnded(child); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(processEnded(child));
  EXPECT_EQ(::kill(child, 0), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(processEnded(child));
}

}  // namespace
}  // namespace cohort
