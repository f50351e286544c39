// waitIdle: the one wait loop every executor step uses, whatever the
// transports. It spins (a message is often microseconds away), then yields
// (with more ranks than cores, a sleeping rank's wake-up costs tens of
// microseconds while a yield hands the core over at once), then sleeps on the
// connections' wait hints. The stages restart whenever an operation completes.
//
// A job with no more ranks than processors stops yielding for a while once a
// yield gave its processor to a process outside the job (YieldCheck, common/wait.h).
//
// Connections that wait on the kernel (a descriptor hint: tcp) skip the spin:
// measured on this 2-vCPU machine, a busy loop of non-blocking reads made an
// 8-byte TCP ping-pong 4-6x slower (32-49 us half round trip) than a blocking
// read (6.6 us), while a read + sched_yield loop took 7.4 us.
#include <poll.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "common/error.h"
#include "transport/connection.h"

namespace cohort::transport {

namespace {

// Longest single sleep when the hints cannot cover every connection.
constexpr auto kSleepSlice = std::chrono::milliseconds(2);
// How often a sleeping wait looks at its abort flag.
constexpr auto kAbortPoll = std::chrono::milliseconds(50);
// When a slow wait is first reported (WaitControl::onSlow), then how often.
constexpr auto kFirstReport = std::chrono::milliseconds(200);
constexpr auto kReportEvery = std::chrono::seconds(1);
// How often a slow wait asks WaitControl::checkPeers.
constexpr auto kCheckEvery = std::chrono::milliseconds(200);

std::uint64_t completions(Connection* const* conns, std::size_t count) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < count; ++i)
    n += conns[i]->sendsCompleted() + conns[i]->recvsCompleted();
  return n;
}

// Progresses every busy connection once; *idle when none is left busy.
Status advance(Connection* const* conns, std::size_t count, const WaitLabel& what, bool* idle) {
  *idle = true;
  for (std::size_t i = 0; i < count; ++i) {
    Connection* c = conns[i];
    if (c->idle()) continue;
    Status s = c->progress();
    if (!s.ok()) return Status(s.code(), what.str() + ": " + s.message());
    *idle = *idle && c->idle();
  }
  return Status::Ok();
}

// "rank 2 (tcp 10.0.0.2:60001: 1 of 3 sends, 0 of 2 receives pending), rank 3 (...)".
std::string describePending(Connection* const* conns, std::size_t count) {
  std::string pending;
  for (std::size_t i = 0; i < count; ++i) {
    const Connection* c = conns[i];
    if (c->idle()) continue;
    pending += fmt::format("{}rank {} ({} {}: {} of {} sends, {} of {} receives pending)",
                           pending.empty() ? "" : ", ", c->peer(), c->kind(), c->describe(),
                           c->sendsPosted() - c->sendsCompleted(), c->sendsPosted(),
                           c->recvsPosted() - c->recvsCompleted(), c->recvsPosted());
  }
  return pending;
}

Status timedOut(Connection* const* conns, std::size_t count, const WaitLabel& what,
                Clock::duration waited) {
  return makeError(ErrorCode::kTimeout, "{}: timed out after {:.1f} s waiting for {}", what.str(),
                   std::chrono::duration<double>(waited).count(), describePending(conns, count));
}

Status aborted(Connection* const* conns, std::size_t count, const WaitLabel& what) {
  return makeError(ErrorCode::kAborted, "{}: aborted on this rank while waiting for {}", what.str(),
                   describePending(conns, count));
}

// The sleep stage never sleeps past the next abort poll, slow-wait report or check.
Deadline sleepLimit(Deadline deadline, const WaitControl& control, Clock::time_point now,
                    Clock::time_point nextReport, Clock::time_point nextCheck) {
  Clock::time_point until = deadline.at();
  if (control.abort != nullptr) until = std::min(until, now + kAbortPoll);
  if (control.onSlow) until = std::min(until, nextReport);
  if (control.checkPeers) until = std::min(until, nextCheck);
  return until == deadline.at() ? deadline : Deadline::after(until - now);
}

bool anyKernelWait(Connection* const* conns, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (!conns[i]->idle() && conns[i]->waitHint().fd >= 0) return true;
  }
  return false;
}

int pollTimeoutMs(Deadline deadline, std::chrono::milliseconds cap) {
  if (deadline.isNever()) return static_cast<int>(cap.count());
  const auto left =
      std::chrono::duration_cast<std::chrono::microseconds>(deadline.at() - Clock::now());
  if (left.count() <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>(cap.count(), (left.count() + 999) / 1000));
}

struct Hints {
  std::vector<pollfd> fds;
  WaitWord* word = nullptr;
  std::uint32_t snapshot = 0;
  int words = 0;
  bool blind = false;  // a busy connection offers nothing to sleep on
};

Hints gatherHints(Connection* const* conns, std::size_t count) {
  Hints h;
  for (std::size_t i = 0; i < count; ++i) {
    if (conns[i]->idle()) continue;
    const WaitHint hint = conns[i]->waitHint();
    if (hint.fd >= 0) {
      h.fds.push_back(pollfd{hint.fd, POLLIN, 0});
    } else if (hint.word != nullptr) {
      if (h.words++ == 0) {
        h.word = hint.word;
        h.snapshot = hint.snapshot;
      }
    } else {
      h.blind = true;
    }
  }
  return h;
}

void sleepOn(const Hints& h, Deadline deadline) {
  if (!h.fds.empty()) {
    const bool alone = h.words == 0 && !h.blind;
    const auto cap = alone ? kSleepSlice : std::chrono::milliseconds(1);
    ::poll(const_cast<pollfd*>(h.fds.data()), h.fds.size(), pollTimeoutMs(deadline, cap));
  } else if (h.word != nullptr) {
    const Deadline slice = Deadline::after(kSleepSlice);
    const bool alone = h.words == 1 && !h.blind;
    h.word->sleep(h.snapshot, alone || slice.at() > deadline.at() ? deadline : slice);
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

Status waitIdle(Connection* const* conns, std::size_t count, Deadline deadline,
                const WaitLabel& what, const WaitControl& control) {
  static thread_local const WaitPolicy config = WaitPolicy::fromConfig();
  WaitPolicy policy = config;
  policy.ownProcessors = !control.crowded;
  const auto start = Clock::now();
  WaitStages stages(policy, start, !anyKernelWait(conns, count));
  auto nextReport = start + kFirstReport;
  auto nextCheck = start + kCheckEvery;
  std::uint64_t seen = completions(conns, count);
  bool sleeping = false;  // past the spin and yield stages
  for (;;) {
    // In the sleep stage the hints are taken before the last look at the
    // connections, so a wake-up between that look and the sleep is never lost.
    Hints hints;
    if (sleeping) hints = gatherHints(conns, count);
    bool idle = false;
    COHORT_RETURN_IF_ERROR(advance(conns, count, what, &idle));
    if (idle) return Status::Ok();
    const auto now = Clock::now();
    const std::uint64_t done = completions(conns, count);
    if (done != seen) {
      if (control.stopEarly && control.stopEarly()) return Status::Ok();
      seen = done;
      stages.restart(now);
      sleeping = false;
      continue;
    }
    if (deadline.expired()) return timedOut(conns, count, what, now - start);
    if (control.abort != nullptr && control.abort->load(std::memory_order_relaxed)) {
      return aborted(conns, count, what);
    }
    if (control.onSlow && now >= nextReport) {
      control.onSlow(what.str(), describePending(conns, count));
      nextReport = now + kReportEvery;
    }
    if (control.checkPeers && now >= nextCheck) {
      const Status peers = control.checkPeers();
      if (!peers.ok()) return Status(peers.code(), what.str() + ": " + peers.message());
      nextCheck = now + kCheckEvery;
    }
    switch (stages.at(now)) {
      case WaitStages::Stage::kSpin:
        break;
      case WaitStages::Stage::kYield:
        stages.yield();
        break;
      case WaitStages::Stage::kSleep:
        if (sleeping) sleepOn(hints, sleepLimit(deadline, control, now, nextReport, nextCheck));
        sleeping = true;
        break;
    }
  }
}

}  // namespace cohort::transport
