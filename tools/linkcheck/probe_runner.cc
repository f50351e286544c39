// Deadlines: a probe gets a link timeout once both ends have met, cut at the end
// of probing; meeting, and waiting for the node's previous step, last while the
// ranks awaited live (their heartbeat), up to the end of probing. A rank found
// dead is not waited for again, so a stopped process costs each rank about one
// link timeout.
//
// Each probe runs pinned to the processor its plan step names, because where the
// scheduler puts the two ends decides what a shm link measures: on a 2-processor
// VM, unpinned, two ends that met on one core moved 25 GB/s (the data stays in
// its cache, the ends take turns), two ends on two cores 7-8 GB/s, so every
// check drew its own placement and the links of one node differed 3x. The two
// ends of a link within a node share their processor (probe_plan.h).
#include "tools/linkcheck/probe_runner.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/log.h"

namespace cohort::linkcheck {

namespace {

Deadline at(Clock::time_point t) { return Deadline::after(t - Clock::now()); }

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Pins the calling thread to one processor for its lifetime, then restores the
// mask it had. Does nothing when the mask cannot be read or set (a processor
// outside the thread's cpuset).
class PinnedThread {
 public:
  explicit PinnedThread(int processor) {
    CPU_ZERO(&saved_);
    if (processor < 0 || sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(processor, &one);
    pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~PinnedThread() {
    if (pinned_) (void)sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  PinnedThread(const PinnedThread&) = delete;
  PinnedThread& operator=(const PinnedThread&) = delete;

 private:
  cpu_set_t saved_;
  bool pinned_ = false;
};

// "0-3,8,10-11" -> 0 1 2 3 8 10 11.
std::vector<int> parseList(const std::string& text) {
  std::vector<int> out;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    int a = 0, b = 0;
    const char* p = part.c_str();
    if (std::sscanf(p, "%d-%d", &a, &b) == 2) {
      for (int c = a; c <= b && c < CPU_SETSIZE; ++c) out.push_back(c);
    } else if (std::sscanf(p, "%d", &a) == 1 && a >= 0 && a < CPU_SETSIZE) {
      out.push_back(a);
    }
  }
  return out;
}

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<int> affinityMask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

}  // namespace

std::string bootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

std::vector<int> machineProcessors() {
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    if (line.rfind("0::", 0) != 0) continue;  // cgroup v2
    const std::vector<int> cpus =
        parseList(firstLine("/sys/fs/cgroup" + line.substr(3) + "/cpuset.cpus.effective"));
    if (!cpus.empty()) return cpus;
  }
  const std::vector<int> online = parseList(firstLine("/sys/devices/system/cpu/online"));
  return online.empty() ? affinityMask() : online;
}

int usableProcessors() {
  const long configured = processors();
  const auto machine = static_cast<long>(machineProcessors().size());
  const long usable = machine > 0 ? std::min(configured, machine) : configured;
  return static_cast<int>(std::max(1L, usable - limits::kReservedProcessors));
}

ProbeRunner::ProbeRunner(const ProbeSettings& settings, int rank, transport::Bootstrap* bootstrap,
                         std::vector<std::unique_ptr<PairLink>>* links, Heartbeat* heartbeat,
                         Clock::time_point connectEnd, Clock::time_point probeEnd,
                         double checkTimeoutS)
    : s_(settings),
      rank_(rank),
      bootstrap_(bootstrap),
      links_(links),
      heartbeat_(heartbeat),
      connectEnd_(connectEnd),
      probeEnd_(probeEnd),
      checkTimeoutS_(checkTimeoutS),
      opened_(links->size(), false),
      machine_(machineProcessors()) {}

std::string ProbeRunner::stepKey(int step, int rank) const {
  return fmt::format("round/{}/step/{}/{}", round_, step, rank);
}

PairLink* ProbeRunner::link(int p) const {
  return p < 0 ? nullptr : (*links_)[static_cast<std::size_t>(p)].get();
}

void ProbeRunner::run(const ProbePlan& plan, int round) {
  round_ = round;
  std::vector<bool> warm(links_->size(), false);  // by peer: probed in this round
  for (const PlanStep& step : plan.steps()) {
    if (Clock::now() >= probeEnd_) break;
    if (plan.gated()) awaitNodeRanks(step);
    PairLink* l = link(step.peer);
    if (l != nullptr && l->connected()) {
      // Always the same processors: a process beside the check moves off them
      // once (the scheduler balances it away from a pinned busy thread); moving
      // the probes at every pass made it move back each time, and the first
      // probe of every pass ran beside it (its links were flagged at 0.5 x).
      probeOnce(*l, step, !warm[static_cast<std::size_t>(step.peer)]);
      warm[static_cast<std::size_t>(step.peer)] = true;
    }
    if (plan.gated()) (void)bootstrap_->store().set(stepKey(step.step, rank_), {1});
  }
  // A link that never got a sample ran out of time before its turn.
  for (auto& l : *links_) {
    if (l == nullptr || !l->connected() || !l->view().samples.empty()) continue;
    l->fail(Stage::kProbe,
            makeError(ErrorCode::kTimeout, "the check's {:g} s ran out before the probe",
                      checkTimeoutS_),
            fmt::format("not probed: the check's {:g} s timeout ran out", checkTimeoutS_), false);
  }
}

void ProbeRunner::awaitNodeRanks(const PlanStep& step) {
  constexpr auto kSlice = std::chrono::milliseconds(50);
  std::vector<int> ranks;
  for (int r : step.waitFor) {
    if (given_up_.count(r) == 0) ranks.push_back(r);
  }
  while (!ranks.empty() && Clock::now() < probeEnd_) {
    std::vector<std::string> keys;
    for (int r : ranks) keys.push_back(stepKey(step.after, r));
    if (bootstrap_->store().wait(keys, at(std::min(probeEnd_, Clock::now() + kSlice))).ok()) {
      return;
    }
    std::vector<int> left;
    for (int r : ranks) {
      bool done = false;
      if (bootstrap_->store().check(stepKey(step.after, r), &done).ok() && done) continue;
      if (heartbeat_->alive(r)) {
        left.push_back(r);
        continue;
      }
      COHORT_LOG(kInfo, "linkcheck", "rank {}: rank {} stopped living; not waiting for it again",
                 rank_, r);
      given_up_.insert(r);
    }
    ranks = std::move(left);
  }
}

// A peer with a link that cannot connect says how its ends went only when its
// connect phase ends, a link timeout after it began (with ours: both start when
// the last rank has joined). Wait for that plus a link timeout, not a link
// timeout from now, or a healthy link to that peer is reported dead.
bool ProbeRunner::openLink(PairLink& l) {
  const int p = l.peer();
  opened_[static_cast<std::size_t>(p)] = true;
  const auto answerBy = std::max(Clock::now(), connectEnd_) + seconds(s_.linkTimeoutS);
  transport::Bytes theirs;
  Status s = bootstrap_->recv(p, "connected", &theirs, at(std::min(probeEnd_, answerBy)));
  if (!s.ok()) {
    l.fail(Stage::kConnect, s,
           fmt::format("rank {} stopped answering ({})", p, shortCause(s, s_.linkTimeoutS)), true);
    return false;
  }
  // "ok", or "fail\n<unreachable 0|1>\n<cause>\n<detail>".
  const std::string text(theirs.begin(), theirs.end());
  if (text == "ok") return true;
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t nl = text.find('\n', from);
    parts.push_back(text.substr(from, nl == std::string::npos ? nl : nl - from));
    from = nl == std::string::npos ? text.size() : nl + 1;
  }
  l.fail(Stage::kConnect, Status(ErrorCode::kConnectionError, text.substr(from)), parts[2],
         parts[1] == "1");
  l.close();
  return false;
}

void ProbeRunner::probeOnce(PairLink& l, const PlanStep& step, bool warmUp) {
  if (!opened_[static_cast<std::size_t>(l.peer())] && !openLink(l)) return;
  const int peer = l.peer();
  if (given_up_.count(peer) != 0 || !l.meet(probeEnd_, [&] { return heartbeat_->alive(peer); })) {
    if (!l.failed()) {
      l.fail(Stage::kProbe, makeError(ErrorCode::kTimeout, "rank {} stopped living", peer),
             fmt::format("rank {} stopped answering: no sign of life for {:g} s", peer,
                         heartbeat_->silentS()),
             true);
    }
    l.close();
    return;
  }
  // Each retry round takes the next processor: a processor busy with another
  // process for a while (a CPU hog the scheduler left there) slowed the first
  // look at a link; it must not confirm it too.
  const std::size_t slot = static_cast<std::size_t>(step.processor + round_);
  const PinnedThread pin(machine_.empty() ? -1 : machine_[slot % machine_.size()]);
  // The first transfer of a link in a round is slower (fresh pages, a cold or
  // idle connection): it warms the link up and is not a sample.
  for (int i = warmUp ? 0 : 1; i < 2 && l.connected(); ++i) {
    // The probe's own link timeout starts now, however long the answer took.
    const auto own = Clock::now() + seconds(s_.linkTimeoutS);
    l.probe(s_.pings, s_.bandwidthBytes, at(std::min(probeEnd_, own)), probeEnd_ < own, i == 1,
            round_, step.pass);
  }
}

}  // namespace cohort::linkcheck
