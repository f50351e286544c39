#include "common/wait.h"

#include "common/trace.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include "common/config.h"

namespace cohort {

Deadline Deadline::afterCoarse(std::chrono::nanoseconds d) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // the clock steady_clock reads, coarsely
  const auto now = Clock::time_point(std::chrono::duration_cast<Clock::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
  return Deadline(now + d);
}

Deadline Deadline::afterMs(long timeoutMs) {
  if (timeoutMs < 0) return never();
  return after(std::chrono::milliseconds(timeoutMs));
}

WaitPolicy WaitPolicy::fromConfig() {
  const Config& c = Config::global();
  return WaitPolicy{static_cast<std::int64_t>(c.waitSpinUs) * 1000,
                    static_cast<std::int64_t>(c.waitYieldUs) * 1000};
}

WaitPolicy WaitPolicy::idleFromConfig() {
  WaitPolicy p = fromConfig();
  if (p.yieldNs > kIdleYieldNs) p.yieldNs = kIdleYieldNs;
  return p;
}

long processors() {
  static const long count = Config::global().processors > 0 ? Config::global().processors
                                                             : sysconf(_SC_NPROCESSORS_ONLN);
  return count;
}

bool moreThanProcessors(int threads, long processors) {
  return processors > 0 && threads > processors;
}

bool moreThanProcessors(int threads) { return moreThanProcessors(threads, processors()); }

WaitPolicy WaitPolicy::forPeersFromConfig(int peers) {
  WaitPolicy p = fromConfig();
  if (moreThanProcessors(peers)) {
    p.spinNs = 0;
  } else {
    p.ownProcessors = true;
    if (p.yieldNs > kIdleYieldNs) p.yieldNs = kIdleYieldNs;
  }
  return p;
}

void futexWait(std::atomic<std::uint32_t>* word, std::uint32_t expected, Deadline deadline) {
  // Sleep at most 100 ms at a time so a deadline is honoured even if a wake is
  // lost to a peer process that died between its store and its wake.
  auto remaining = std::chrono::nanoseconds(std::chrono::milliseconds(100));
  if (!deadline.isNever()) {
    auto left = deadline.at() - Clock::now();
    if (left <= std::chrono::nanoseconds::zero()) return;
    if (left < remaining) remaining = std::chrono::duration_cast<std::chrono::nanoseconds>(left);
  }
  trace::Span span("wait", "futex sleep");
  timespec ts;
  ts.tv_sec = static_cast<time_t>(remaining.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(remaining.count() % 1000000000);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr,
          0);
}

void futexWakeAll(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr,
          nullptr, 0);
}

namespace {
thread_local YieldCheck tYieldCheck;
std::atomic<int> gComputeRunning{0};
}  // namespace

bool computeRunning() { return gComputeRunning.load(std::memory_order_relaxed) > 0; }
ComputeScope::ComputeScope() { gComputeRunning.fetch_add(1, std::memory_order_relaxed); }
ComputeScope::~ComputeScope() { gComputeRunning.fetch_sub(1, std::memory_order_relaxed); }

bool yieldProcessorPolls() { return !tYieldCheck.yieldNow(Clock::now()); }

void yieldProcessor(bool ownProcessors) {
  if (!ownProcessors) {
    sched_yield();
    return;
  }
  YieldCheck& check = tYieldCheck;
  const auto before = Clock::now();
  if (!check.yieldNow(before)) return;  // polling: the caller looks again at once
  const bool computing = computeRunning();
  sched_yield();
  check.yielded(before, Clock::now(), computing || computeRunning());
}

}  // namespace cohort
