// The link check run on every new connection: both ends exchange how each sees
// the other, ping-pong small messages (the median round trip is the latency),
// and optionally time a one-way transfer; the initiator's figures are sent to
// the other end so both report the same numbers.
//
// A transfer is slow for two reasons: the link, or an end that lost its
// processor to another process (a time slice is milliseconds; a 4 MiB shm
// transfer takes a fifth of one). Both ends read their scheduler counters
// across each timed transfer (the receiver's ride on its ack) to tell.
//
// On a shm link the ends do all of a transfer's work themselves, so the time
// other processes took is left out of the figure: the time neither end ran
// when both share a processor (they take turns, so each waits for the other by
// design), but no more than their run-queue waits together; the ends' run-queue
// wait when each has its own. Measured on a 2-processor VM busy with builds: a
// transfer of 196 us lost 91 us.
//
// On a network link the kernel's own threads (softirq) do part of the work and
// cannot be told apart from other processes, so the figure stays the wall
// clock's: leaving their time out made loopback tcp look 2x faster than it was.
// The time lost is still known well enough to distrust a transfer: an end's
// run-queue wait beyond the other end's run time. Beside a CPU hog, 4 MiB over
// tcp took 1.0-1.3 ms with a sender's wait 30 us beyond the receiver's run, and
// 3-10 ms with 2.6-7.4 ms beyond: the transfer is taken again, and the fastest
// trusted one counts.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/error.h"
#include "transport/connection.h"
#include "transport/link_report.h"

namespace cohort::transport {

namespace {

constexpr std::size_t kNameBytes = 128;
constexpr int kBandwidthRounds = 2;     // the first warms the connection up; the best counts
constexpr int kMaxBandwidthRounds = 4;  // more while every round lost more than kQuietShare
constexpr double kQuietShare = 0.1;     // of a round's time, lost to other processes
constexpr double kTrustedShare = 0.5;   // a round that lost more is counted only if all did
constexpr double kMaxLostShare = 0.75;  // at most this much is taken off a round's time

// What the scheduler says of this thread: time on a processor, time runnable but
// waiting for one (ns), and the processor it is on. All 0 where not readable.
struct SchedCounters {
  std::uint64_t runNs = 0;
  std::uint64_t waitNs = 0;
  std::uint64_t cpu = 0;

  // The run time from the thread's CPU clock: schedstat's own lags behind for a
  // running thread (it showed 10 us for a 4 MiB copy); its run-queue wait is
  // settled whenever the thread gets a processor, so it is current for us.
  static SchedCounters now() {
    SchedCounters c;
    timespec t{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) {
      c.runNs = static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull +
                static_cast<std::uint64_t>(t.tv_nsec);
    }
    if (std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r")) {
      unsigned long long run = 0, wait = 0;
      if (std::fscanf(f, "%llu %llu", &run, &wait) == 2) c.waitNs = wait;
      std::fclose(f);
    }
    const int cpu = sched_getcpu();
    c.cpu = cpu < 0 ? 0 : static_cast<std::uint64_t>(cpu);
    return c;
  }
  SchedCounters since(const SchedCounters& before) const {
    return {runNs - before.runNs, waitNs - before.waitNs, cpu};
  }
};

// The share of a transfer of `seconds` that other processes took from its ends.
// `selfContained`: the ends do all of the transfer's work (shm).
double lostShare(const SchedCounters& mine, const SchedCounters& theirs, double seconds,
                 bool selfContained) {
  const double wall = seconds * 1e9;
  const auto runA = static_cast<double>(mine.runNs), runB = static_cast<double>(theirs.runNs);
  const auto waitA = static_cast<double>(mine.waitNs), waitB = static_cast<double>(theirs.waitNs);
  double lost = std::max(waitA, waitB);
  if (mine.cpu == theirs.cpu) {
    lost = selfContained ? std::min(wall - runA - runB, waitA + waitB)
                         : std::max(waitA - runB, waitB - runA);
  }
  return wall > 0 ? std::clamp(lost / wall, 0.0, 1.0) : 0;
}

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Sends `out` and receives `in` (same size) at once.
Status exchange(Connection& c, const void* out, void* in, std::size_t bytes, Deadline deadline,
                const std::string& what) {
  COHORT_RETURN_IF_ERROR(c.postSend(out, bytes));
  COHORT_RETURN_IF_ERROR(c.postRecv(in, bytes));
  Connection* one = &c;
  return waitIdle(&one, 1, deadline, what);
}

Status sendOne(Connection& c, const void* data, std::size_t bytes, Deadline deadline,
               const std::string& what) {
  COHORT_RETURN_IF_ERROR(c.postSend(data, bytes));
  Connection* one = &c;
  return waitIdle(&one, 1, deadline, what);
}

Status recvOne(Connection& c, void* data, std::size_t bytes, Deadline deadline,
               const std::string& what) {
  COHORT_RETURN_IF_ERROR(c.postRecv(data, bytes));
  Connection* one = &c;
  return waitIdle(&one, 1, deadline, what);
}

// One round trip: the initiator pings, the other end answers. Returns seconds.
Status pingOnce(Connection& c, bool initiator, Deadline deadline, const std::string& what,
                double* seconds) {
  std::uint64_t ping = 0x70696e67, pong = 0;
  const auto t0 = Clock::now();
  if (initiator) {
    COHORT_RETURN_IF_ERROR(exchange(c, &ping, &pong, sizeof(ping), deadline, what));
  } else {
    COHORT_RETURN_IF_ERROR(recvOne(c, &pong, sizeof(pong), deadline, what));
    COHORT_RETURN_IF_ERROR(sendOne(c, &pong, sizeof(pong), deadline, what));
  }
  *seconds = secondsSince(t0);
  return Status::Ok();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Rounds go on while the initiator says so (a word after each ack): at least
// kBandwidthRounds, more while every round so far lost time to others. The
// fastest trusted round counts (shm: by its own time), else the fastest.
Status bandwidth(Connection& c, bool initiator, std::size_t bytes, Deadline deadline,
                 const std::string& what, LinkResult* r) {
  std::vector<std::uint8_t> buffer(bytes, 0x5a);  // touched before the clock starts
  const bool selfContained = std::strcmp(c.kind(), "shm") == 0;
  double best = 0, bestLost = 0;
  bool trusted = false, quiet = false;
  std::uint64_t more = 1;
  int round = 0;
  for (; more != 0; ++round) {
    SchedCounters theirs;  // the receiver's, during the round (its ack)
    const SchedCounters before = SchedCounters::now();
    const auto t0 = Clock::now();
    if (initiator) {
      COHORT_RETURN_IF_ERROR(c.postSend(buffer.data(), bytes));
      COHORT_RETURN_IF_ERROR(recvOne(c, &theirs, sizeof(theirs), deadline, what));
    } else {
      COHORT_RETURN_IF_ERROR(recvOne(c, buffer.data(), bytes, deadline, what));
      theirs = SchedCounters::now().since(before);
      COHORT_RETURN_IF_ERROR(sendOne(c, &theirs, sizeof(theirs), deadline, what));
    }
    const double wall = secondsSince(t0);
    if (initiator) {
      const double lost =
          lostShare(SchedCounters::now().since(before), theirs, wall, selfContained);
      const double counted = selfContained ? wall * (1 - std::min(lost, kMaxLostShare)) : wall;
      const bool trust = lost <= kTrustedShare;
      if (round == 0 || (trust && !trusted) || (trust == trusted && counted < best)) {
        best = counted;
        bestLost = lost;
        trusted = trust;
      }
      quiet = quiet || lost <= kQuietShare;
      more = round + 1 < kBandwidthRounds || (!quiet && round + 1 < kMaxBandwidthRounds);
      COHORT_RETURN_IF_ERROR(sendOne(c, &more, sizeof(more), deadline, what));
    } else {
      COHORT_RETURN_IF_ERROR(recvOne(c, &more, sizeof(more), deadline, what));
    }
  }
  r->transfers = round;
  r->lostShare = bestLost;
  r->gbps = static_cast<double>(bytes) / best / 1e9;
  return Status::Ok();
}

Status runProbe(Connection& c, bool initiator, int pings, std::size_t bandwidthBytes,
                Deadline deadline, LinkResult* r) {
  const std::string what = fmt::format("link check with rank {} ({})", c.peer(), c.describe());
  char mine[kNameBytes] = {}, theirs[kNameBytes] = {};
  std::strncpy(mine, c.describe().c_str(), kNameBytes - 1);
  COHORT_RETURN_IF_ERROR(exchange(c, mine, theirs, kNameBytes, deadline, what + ", hello"));
  r->local.assign(theirs, strnlen(theirs, kNameBytes));
  std::vector<double> rtts;
  for (int i = 0; i <= pings && pings > 0; ++i) {  // ping 0 warms up
    double s = 0;
    COHORT_RETURN_IF_ERROR(
        pingOnce(c, initiator, deadline, fmt::format("{}, ping {}", what, i), &s));
    if (i > 0) rtts.push_back(s);
  }
  if (bandwidthBytes > 0) {
    COHORT_RETURN_IF_ERROR(
        bandwidth(c, initiator, bandwidthBytes, deadline, what + ", bandwidth", r));
  }
  // The initiator's figures: round trip, bandwidth, transfers, lost share.
  double figures[4] = {median(rtts) * 1e6, r->gbps, double(r->transfers), r->lostShare};
  if (initiator) {
    COHORT_RETURN_IF_ERROR(sendOne(c, figures, sizeof(figures), deadline, what + ", results"));
  } else {
    COHORT_RETURN_IF_ERROR(recvOne(c, figures, sizeof(figures), deadline, what + ", results"));
  }
  r->rttUs = figures[0];
  r->gbps = figures[1];
  r->transfers = static_cast<int>(figures[2]);
  r->lostShare = figures[3];
  return Status::Ok();
}

}  // namespace

Status probeLink(Connection& conn, bool initiator, int pings, std::size_t bandwidthBytes,
                 Deadline deadline, LinkResult* result) {
  result->peer = conn.peer();
  result->transport = conn.kind();
  result->remote = conn.describe();
  result->rttUs = 0;
  result->gbps = 0;
  result->transfers = 0;
  result->lostShare = 0;
  Status s = runProbe(conn, initiator, pings, bandwidthBytes, deadline, result);
  result->ok = s.ok();
  result->error = s.ok() ? "" : s.message();
  return s;
}

std::string LinkReport::toJson() const {
  nlohmann::json links = nlohmann::json::array();
  for (const LinkResult& l : this->links) {
    links.push_back({{"rank", l.rank},
                     {"peer", l.peer},
                     {"transport", l.transport},
                     {"local", l.local},
                     {"remote", l.remote},
                     {"ok", l.ok},
                     {"rttUs", l.rttUs},
                     {"gbps", l.gbps},
                     {"transfers", l.transfers},
                     {"lostShare", l.lostShare},
                     {"error", l.error}});
  }
  return nlohmann::json{{"links", links}}.dump(2);
}

}  // namespace cohort::transport
