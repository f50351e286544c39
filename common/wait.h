// Waiting without burning the machine: spin briefly, then sched_yield (or poll,
// after a yield lost the processor to a process outside the job: YieldCheck),
// then sleep on a futex. With more threads or ranks than cores, the yield stage is
// what keeps progress sane (a futex sleep idles the virtual CPU and its wake
// costs tens of microseconds); the sleep stage keeps idle waiters off the CPU.
//
// A WaitWord works inside one process and inside memory shared between
// processes (it uses shared futexes). It holds no pointers, so it may live in a
// shared mapping.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include "cohort/status.h"

namespace cohort {

using Clock = std::chrono::steady_clock;

/// A point in time to stop waiting; never() waits forever.
class Deadline {
 public:
  static Deadline never() { return Deadline(Clock::time_point::max()); }
  static Deadline after(std::chrono::nanoseconds d) { return Deadline(Clock::now() + d); }
  /// after(d) from a reading of the clock that may lag by up to a scheduler tick
  /// (a few ms), at a fraction of the cost: for deadlines of seconds set on
  /// every call.
  static Deadline afterCoarse(std::chrono::nanoseconds d);
  /// timeoutMs < 0: never; 0: already expired (poll); > 0: that many ms from now.
  static Deadline afterMs(long timeoutMs);
  bool isNever() const { return at_ == Clock::time_point::max(); }
  bool expired() const { return !isNever() && Clock::now() >= at_; }
  Clock::time_point at() const { return at_; }
  /// Whichever of the two comes first.
  static Deadline earlier(Deadline a, Deadline b) { return a.at_ < b.at_ ? a : b; }

 private:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  Clock::time_point at_;
};

/// How long each stage lasts; defaults come from COHORT_WAIT_SPIN_US and
/// COHORT_WAIT_YIELD_US.
struct WaitPolicy {
  std::int64_t spinNs;
  std::int64_t yieldNs;
  /// The waiters have a processor each (forPeersFromConfig): the yield stage
  /// stops yielding for a while after a yield gave the processor away for long
  /// (yieldProcessor()).
  bool ownProcessors = false;
  static WaitPolicy fromConfig();
  /// For a thread with nothing to do until someone hands it work (a stream's
  /// worker with an empty queue): the same spin, a yield stage of at most
  /// kIdleYieldNs, then sleep. A long yield stage there keeps a runnable thread
  /// beside the ones doing the work for milliseconds after every hand-off.
  static WaitPolicy idleFromConfig();
  static constexpr std::int64_t kIdleYieldNs = 50'000;
  /// For waits on `peers` threads or processes of this machine that each run
  /// like this one: with more of them than the machine has processors, the one
  /// awaited is likely off-CPU, so the wait yields at once (no spin stage);
  /// with no more, ownProcessors and a yield stage of at most kIdleYieldNs. A
  /// peer that is not there by then is computing, and a yield that finds a
  /// thread of the program's own to run (compute overlapped with the
  /// collective) hands it the processor for a whole time slice; a futex sleep
  /// is woken as soon as the peer comes.
  static WaitPolicy forPeersFromConfig(int peers);
};

/// The processors the ranks of this machine share: COHORT_PROCESSORS, or the
/// online processors when it is not set (a container's CPU quota is not seen).
long processors();
/// Whether `threads` busy threads or processes are more than processors() (then
/// some of them are always waiting for a processor).
bool moreThanProcessors(int threads);
/// The same against `processors` of them (<= 0: unknown, taken as enough).
bool moreThanProcessors(int threads, long processors);

/// Whether a waiting thread should still yield its processor. With no more busy
/// threads or ranks on the machine than processors, the job's own peers each
/// have a processor, so a yield that keeps the thread off its processor for
/// long (kLongYield) gave it to a process outside the job (a CPU hog). Under
/// the kernel's EEVDF scheduler each such yield hands over a whole time slice
/// (~4 ms here), and a wait that keeps yielding gets a few percent of its
/// processor: measured, 2 ranks over tcp with `yes` beside them, 8 KiB
/// allreduce 0.24-1.6 ms per call where OpenMPI, which polls, took 45-50 us
/// (31-57 us with this check).
/// After a long yield, waits poll without yielding for kPollFor, then try a
/// yield again. One per thread; not for crowded jobs (there a long yield ran
/// a peer, which is what the wait needs). A long yield while a kernel of this
/// process ran (computeRunning()) gave the processor to the program's own
/// compute, overlapped with the wait: polling then would take processor time
/// from that compute, so the waits go on yielding.
class YieldCheck {
 public:
  static constexpr std::chrono::microseconds kLongYield{250};
  static constexpr std::chrono::milliseconds kPollFor{200};
  /// Whether to yield now (false while polling after a long yield).
  bool yieldNow(Clock::time_point now) const { return now >= pollUntil_; }
  /// Notes a yield that began at `before` and returned at `after`;
  /// `ownCompute`: a kernel of this process ran at its start or end.
  void yielded(Clock::time_point before, Clock::time_point after, bool ownCompute = false) {
    if (after - before > kLongYield && !ownCompute) pollUntil_ = after + kPollFor;
  }

 private:
  Clock::time_point pollUntil_{};
};

/// Whether a kernel runs on one of this process's threads now. Thread-safe.
bool computeRunning();
/// Counts one running kernel for computeRunning(), from its construction to its
/// destruction: the runtime puts one on the stack of the thread that runs each
/// kernel. Thread-safe (one process-wide count).
class ComputeScope {
 public:
  ComputeScope();
  ~ComputeScope();
  ComputeScope(const ComputeScope&) = delete;
  ComputeScope& operator=(const ComputeScope&) = delete;
};

/// The yield stage of a wait: sched_yield(), except while this thread's
/// YieldCheck says to poll (only when `ownProcessors`: every busy thread or
/// rank of the job has a processor of its own).
void yieldProcessor(bool ownProcessors);
/// Whether this thread's yieldProcessor(true) polls now instead of yielding.
bool yieldProcessorPolls();

/// Where one wait stands under its policy: spinning, yielding or sleeping,
/// counted from the wait's start or from the last progress it saw (restart()).
/// Every staged wait of the library (WaitWord's, transport::waitIdle and the
/// executor's settling of fingerprints through it, a stream's wait tasks) takes
/// its stages from one of these, so that one policy means the same everywhere.
/// A plain value for one wait on one thread.
class WaitStages {
 public:
  enum class Stage : std::uint8_t { kSpin, kYield, kSleep };
  /// `spin` false: no spin stage (the awaited work is known to be off-CPU, or
  /// comes through the kernel).
  WaitStages(const WaitPolicy& policy, Clock::time_point start, bool spin = true)
      : spinNs_(spin ? policy.spinNs : 0),
        yieldEndNs_(spinNs_ + policy.yieldNs),
        ownProcessors_(policy.ownProcessors),
        start_(start) {}
  Stage at(Clock::time_point now) const {
    const std::int64_t waited = std::chrono::nanoseconds(now - start_).count();
    return waited < spinNs_ ? Stage::kSpin : waited < yieldEndNs_ ? Stage::kYield : Stage::kSleep;
  }
  /// Progress was made at `now`: the stages begin again.
  void restart(Clock::time_point now) { start_ = now; }
  /// One step of the yield stage (yieldProcessor under the policy).
  void yield() const { yieldProcessor(ownProcessors_); }

 private:
  std::int64_t spinNs_;
  std::int64_t yieldEndNs_;
  bool ownProcessors_;
  Clock::time_point start_;
};

/// Futex calls on a 32-bit word (shared, so they work across processes).
void futexWait(std::atomic<std::uint32_t>* word, std::uint32_t expected, Deadline deadline);
void futexWakeAll(std::atomic<std::uint32_t>* word);

/// A condition variable without a mutex: the notifier makes its condition true,
/// then calls notifyAll(); a waiter calls waitUntil(ready). Thread-safe.
class WaitWord {
 public:
  void notifyAll() {
    seq_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futexWakeAll(&seq_);
  }

  /// notifyAll() only when someone sleeps, for a condition the caller made true
  /// just before (the fence orders that store before the look at the sleepers;
  /// waitUntil() counts itself a sleeper before its last look at the condition).
  void notifyIfSleeping() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) > 0) notifyAll();
  }

  /// For callers that check their own condition: take a snapshot, check the
  /// condition, then sleep(snapshot) returns once notifyAll() ran after the
  /// snapshot (or the deadline, or at most 100 ms passed).
  std::uint32_t snapshot() const { return seq_.load(std::memory_order_seq_cst); }
  void sleep(std::uint32_t snapshot, Deadline deadline) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (seq_.load(std::memory_order_seq_cst) == snapshot) futexWait(&seq_, snapshot, deadline);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }

  /// Returns true once ready() holds, false if the deadline passes first.
  template <typename Ready>
  bool waitUntil(Ready&& ready, Deadline deadline = Deadline::never()) {
    if (ready()) return true;
    static thread_local const WaitPolicy policy = WaitPolicy::fromConfig();
    return waitUntil(std::forward<Ready>(ready), deadline, policy);
  }
  template <typename Ready>
  bool waitUntil(Ready&& ready, Deadline deadline, const WaitPolicy& policy) {
    return waitSince(std::forward<Ready>(ready), deadline, policy, Clock::now(),
                     policy.spinNs > 0);
  }

  /// The outer loop of a wait that must look at more than its condition now
  /// and then (whether a peer died or left, an abort, the deadline): waitUntil
  /// in slices of at most `every`, and after each slice that ended with ready()
  /// false, between(): std::nullopt waits on, a Status ends the wait with it
  /// (ok: nothing is left to wait for). between() owns the deadline: it must
  /// return a Status once `deadline` passed. Ok as soon as ready() holds. The
  /// policy's stages run once over the whole wait, not again in every slice
  /// (a slice shorter than the yield stage would otherwise never sleep).
  template <typename Ready, typename Between>
  Status waitChecked(Ready&& ready, Deadline deadline, const WaitPolicy& policy,
                     std::chrono::nanoseconds every, Between&& between) {
    const auto start = Clock::now();
    bool first = true;
    for (;;) {
      Deadline slice = Deadline::after(every);
      if (!deadline.isNever() && deadline.at() < slice.at()) slice = deadline;
      // A slice is far longer than the spin stage: only the first spins.
      if (waitSince(ready, slice, policy, start, first && policy.spinNs > 0)) return Status::Ok();
      first = false;
      if (std::optional<Status> s = between()) return *s;
    }
  }

 private:
  static void relax() { __builtin_ia32_pause(); }

  // waitUntil for a wait that began at `start` (its stages count from there),
  // still in its spin stage if `spinning`.
  template <typename Ready>
  bool waitSince(Ready&& ready, Deadline deadline, const WaitPolicy& policy,
                 Clock::time_point start, bool spinning) {
    const WaitStages stages(policy, start);
    for (std::uint32_t i = 0;; ++i) {
      if (ready()) return true;
      // While spinning, the clock is read once in 64 looks.
      if (spinning && (i & 63) != 0) {
        relax();
        continue;
      }
      const auto now = Clock::now();
      if (!deadline.isNever() && now >= deadline.at()) return ready();
      const WaitStages::Stage stage = stages.at(now);
      if (stage == WaitStages::Stage::kSpin) continue;
      spinning = false;  // from here on, every look at the condition is followed by a yield
                         // (none while this thread's YieldCheck polls)
      if (stage == WaitStages::Stage::kYield) {
        stages.yield();
        continue;
      }
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      const std::uint32_t seen = seq_.load(std::memory_order_seq_cst);
      if (!ready()) futexWait(&seq_, seen, deadline);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  std::atomic<std::uint32_t> seq_{0};
  std::atomic<std::uint32_t> sleepers_{0};
};

}  // namespace cohort
