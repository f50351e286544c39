#include "common/wait.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace cohort {
namespace {

// Whether a waiter wakes when another thread sets its flag after `delayUs`:
// with the default policy (`policy` null) or the given one.
bool wakesAfter(int delayUs, const WaitPolicy* policy) {
  WaitWord word;
  std::atomic<bool> flag{false};
  std::thread notifier([&] {
    std::this_thread::sleep_for(std::chrono::microseconds(delayUs));
    flag = true;
    word.notifyAll();
  });
  auto ready = [&] { return flag.load(); };
  const Deadline deadline = Deadline::after(std::chrono::seconds(10));
  const bool woke =
      policy == nullptr ? word.waitUntil(ready, deadline) : word.waitUntil(ready, deadline, *policy);
  notifier.join();
  return woke;
}

TEST(WaitWordTest, WakesWaitersInEveryStage) {
  // Delays that land in the spin, yield and futex stages of the wait.
  for (int delayUs : {0, 100, 5000}) EXPECT_TRUE(wakesAfter(delayUs, nullptr)) << delayUs;
}

// The explicit-policy form wakes in every stage too: no spin stage (a node with
// more ranks than processors) and the idle workers' short yield stage.
TEST(WaitWordTest, PoliciesWithoutSpinOrWithAShortYieldStillWake) {
  const WaitPolicy noSpin{0, 1000000};
  const WaitPolicy idle = WaitPolicy::idleFromConfig();
  for (const WaitPolicy& policy : {noSpin, idle}) {
    for (int delayUs : {0, 30, 3000}) EXPECT_TRUE(wakesAfter(delayUs, &policy)) << delayUs;
  }
}

TEST(WaitPolicyTest, IdleAndCrowdedForms) {
  const WaitPolicy base = WaitPolicy::fromConfig();
  const WaitPolicy idle = WaitPolicy::idleFromConfig();
  EXPECT_EQ(idle.spinNs, base.spinNs);
  EXPECT_EQ(idle.yieldNs, std::min(base.yieldNs, WaitPolicy::kIdleYieldNs));
  const int processors = static_cast<int>(std::thread::hardware_concurrency());
  ASSERT_GT(processors, 0);
  EXPECT_FALSE(moreThanProcessors(1));
  EXPECT_FALSE(moreThanProcessors(processors));
  EXPECT_TRUE(moreThanProcessors(processors + 1));
  EXPECT_EQ(WaitPolicy::forPeersFromConfig(processors).spinNs, base.spinNs);
  EXPECT_EQ(WaitPolicy::forPeersFromConfig(processors + 1).spinNs, 0);
  EXPECT_EQ(WaitPolicy::forPeersFromConfig(processors + 1).yieldNs, base.yieldNs);
}

TEST(WaitWordTest, DeadlineExpires) {
  WaitWord word;
  const auto start = Clock::now();
  EXPECT_FALSE(word.waitUntil([] { return false; }, Deadline::afterMs(50)));
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  EXPECT_LT(waited, std::chrono::seconds(2));
}

TEST(WaitWordTest, ManyWaitersManyRounds) {
  WaitWord word;
  std::atomic<int> round{0};
  constexpr int kRounds = 200;
  std::vector<std::thread> waiters;
  std::atomic<int> seen{0};
  for (int t = 0; t < 4; ++t) {
    waiters.emplace_back([&] {
      for (int r = 1; r <= kRounds; ++r) {
        word.waitUntil([&] { return round.load() >= r; });
        seen.fetch_add(1);
      }
    });
  }
  for (int r = 1; r <= kRounds; ++r) {
    round = r;
    word.notifyAll();
  }
  for (auto& t : waiters) t.join();
  EXPECT_EQ(seen.load(), 4 * kRounds);
}

TEST(DeadlineTest, Forms) {
  EXPECT_TRUE(Deadline::afterMs(-1).isNever());
  EXPECT_TRUE(Deadline::afterMs(0).expired());
  EXPECT_FALSE(Deadline::afterMs(10000).expired());
}

}  // namespace
}  // namespace cohort
