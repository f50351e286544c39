#include "common/wait.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <optional>
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
  EXPECT_FALSE(base.ownProcessors);  // unknown: yield as always
  EXPECT_FALSE(idle.ownProcessors);
  EXPECT_TRUE(WaitPolicy::forPeersFromConfig(1).ownProcessors);
  EXPECT_TRUE(WaitPolicy::forPeersFromConfig(processors).ownProcessors);
  EXPECT_FALSE(WaitPolicy::forPeersFromConfig(processors + 1).ownProcessors);
}

// A yield longer than kLongYield makes the waits poll for kPollFor after it
// returned, then yield again; short yields change nothing.
TEST(YieldCheckTest, PollsForAWhileAfterALongYield) {
  YieldCheck check;
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(check.yieldNow(t0));
  check.yielded(t0, t0 + YieldCheck::kLongYield);  // not longer than the limit
  EXPECT_TRUE(check.yieldNow(t0 + YieldCheck::kLongYield));
  const Clock::time_point back = t0 + YieldCheck::kLongYield + std::chrono::microseconds(1);
  check.yielded(t0, back);
  EXPECT_FALSE(check.yieldNow(back));
  EXPECT_FALSE(check.yieldNow(back + YieldCheck::kPollFor - std::chrono::microseconds(1)));
  EXPECT_TRUE(check.yieldNow(back + YieldCheck::kPollFor));
  // A later short yield does not cut a poll window short, nor start one.
  const Clock::time_point t1 = back + YieldCheck::kPollFor;
  check.yielded(t1, t1 + std::chrono::microseconds(10));
  EXPECT_TRUE(check.yieldNow(t1 + std::chrono::microseconds(10)));
}

// A long yield that ran a kernel of this process (at its start or end) gave
// the processor to the program's own compute: no polling after it.
TEST(YieldCheckTest, ALongYieldToOwnComputeKeepsYielding) {
  YieldCheck check;
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point back = t0 + 10 * YieldCheck::kLongYield;
  check.yielded(t0, back, /*ownCompute=*/true);
  EXPECT_TRUE(check.yieldNow(back));
  check.yielded(back, back + 10 * YieldCheck::kLongYield, /*ownCompute=*/false);
  EXPECT_FALSE(check.yieldNow(back + 10 * YieldCheck::kLongYield));
}

TEST(ComputeScopeTest, CountsNestedAndConcurrentScopes) {
  EXPECT_FALSE(computeRunning());
  {
    ComputeScope outer;
    EXPECT_TRUE(computeRunning());
    std::thread other([] {
      ComputeScope inner;
      EXPECT_TRUE(computeRunning());
    });
    other.join();
    EXPECT_TRUE(computeRunning()) << "the other thread's end does not end this one";
  }
  EXPECT_FALSE(computeRunning());
}

// The case it is for: a busy thread outside the job on this thread's
// processor. Both are pinned to one processor; a yield there runs the busy
// thread for a time slice (milliseconds), so within a few yields the thread
// polls instead, and yieldProcessor(false) (a crowded job) never does.
TEST(YieldCheckTest, AThreadSharingItsProcessorWithABusyOneStopsYielding) {
  cpu_set_t one;
  CPU_ZERO(&one);
  const int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  CPU_SET(cpu, &one);
  std::atomic<bool> stop{false}, spinning{false};
  std::thread hog([&] {
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    spinning = true;
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  cpu_set_t saved;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
  while (!spinning.load()) yieldProcessor(false);
  EXPECT_FALSE(yieldProcessorPolls());
  for (int i = 0; i < 20; ++i) yieldProcessor(false);
  EXPECT_FALSE(yieldProcessorPolls()) << "a crowded job's yields are not watched";
  int yields = 0;
  while (!yieldProcessorPolls() && yields < 200) {
    yieldProcessor(true);
    ++yields;
  }
  const bool polls = yieldProcessorPolls();
  stop = true;
  hog.join();
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  EXPECT_TRUE(polls) << "no yield in " << yields << " gave the processor away for long";
}

TEST(WaitWordTest, DeadlineExpires) {
  WaitWord word;
  const auto start = Clock::now();
  EXPECT_FALSE(word.waitUntil([] { return false; }, Deadline::afterMs(50)));
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  EXPECT_LT(waited, std::chrono::seconds(2));
}

// waitChecked: ok once ready, between()'s status otherwise, called after each
// slice that ended unready.
TEST(WaitWordTest, WaitCheckedEndsWithReadyOrWithBetween) {
  WaitWord word;
  const WaitPolicy policy{0, 0};
  int calls = 0;
  EXPECT_TRUE(word.waitChecked([] { return true; }, Deadline::never(), policy,
                               std::chrono::milliseconds(1), [&]() -> std::optional<Status> {
                                 ++calls;
                                 return std::nullopt;
                               })
                  .ok());
  EXPECT_EQ(calls, 0);
  const Status s = word.waitChecked(
      [] { return false; }, Deadline::never(), policy, std::chrono::milliseconds(1),
      [&]() -> std::optional<Status> {
        if (++calls < 3) return std::nullopt;
        return Status(ErrorCode::kTimeout, "third slice");
      });
  EXPECT_EQ(s.code(), ErrorCode::kTimeout);
  EXPECT_EQ(calls, 3);
}

// The policy's stages run once over a waitChecked, not in every slice: with
// slices shorter than the yield stage, a wait that restarted them would yield
// (and burn its processor) for the whole wait instead of sleeping.
TEST(WaitWordTest, WaitCheckedSleepsOncePastTheYieldStage) {
  WaitWord word;
  const WaitPolicy policy{0, 20'000'000};  // no spin, a 20 ms yield stage
  const auto cpu = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
  };
  const auto cpuBefore = cpu();
  const Deadline end = Deadline::after(std::chrono::milliseconds(300));
  const Status s = word.waitChecked([] { return false; }, Deadline::never(), policy,
                                    std::chrono::milliseconds(5), [&]() -> std::optional<Status> {
                                      if (!end.expired()) return std::nullopt;
                                      return Status::Ok();
                                    });
  EXPECT_TRUE(s.ok());
  // About 20 ms of yields, then sleeps; restarting the stages took ~300 ms.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(cpu() - cpuBefore).count(), 150);
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
