// One rank's probe phase: walks its ProbePlan over its links. The first probe of
// a link waits for the peer's word on how its end connected (so a one-sided
// failure is never probed); on a gated node each step waits, through the store,
// until the node's ranks of its previous busy step are done ("step/S/R" keys).
// Waits for a peer last as long as it lives (Heartbeat), not a fixed time: a
// peer late because it waits for a dead one must not be taken for dead too.
#pragma once

#include <memory>
#include <set>
#include <vector>

#include "common/wait.h"
#include "tools/linkcheck/heartbeat.h"
#include "tools/linkcheck/pair_link.h"
#include "tools/linkcheck/probe_plan.h"
#include "transport/bootstrap.h"

namespace cohort::linkcheck {

/// The machine's processors a probe may run on, in order: this process's cgroup
/// cpuset (cgroup v2), else the online processors, else its affinity mask. A
/// launcher that bound the rank to one processor (cohortrun --bind-to core) does
/// not narrow it: the plan, which knows which ranks share the machine, places
/// the probes.
std::vector<int> machineProcessors();
/// What this machine's probes may use: COHORT_PROCESSORS (else the online
/// processors), no more than machineProcessors(), less the reserve
/// (limits::kReservedProcessors), at least one.
int usableProcessors();
/// This machine's kernel boot id ("" when unreadable): the same in every network
/// namespace and container of the machine, so it tells which ranks share processors.
std::string bootId();

/// What the probes are: the same on every rank.
struct ProbeSettings {
  int pings = 0;
  std::size_t bandwidthBytes = 0;
  double linkTimeoutS = 0;
};

/// Not thread-safe: the thread of the check drives it. Borrows the links, the
/// bootstrap and the store for the duration of run().
class ProbeRunner {
 public:
  /// `links` by peer (null: none); `connectEnd`: when the peers' connect phase
  /// ends at the latest; `probeEnd`: no probe starts, or waits, past it;
  /// `heartbeat` tells which peers still live (waits for a live one go on).
  ProbeRunner(const ProbeSettings& settings, int rank, transport::Bootstrap* bootstrap,
              std::vector<std::unique_ptr<PairLink>>* links, Heartbeat* heartbeat,
              Clock::time_point connectEnd, Clock::time_point probeEnd, double checkTimeoutS);

  /// Walks `plan` as `round` (0: the first passes; 1, 2, ...: retry rounds,
  /// whose samples are marked and whose store keys are apart).
  void run(const ProbePlan& plan, int round);

 private:
  void awaitNodeRanks(const PlanStep& step);
  bool openLink(PairLink& link);
  void probeOnce(PairLink& link, const PlanStep& step, bool warmUp);
  PairLink* link(int p) const;
  std::string stepKey(int step, int rank) const;

  const ProbeSettings s_;
  const int rank_;
  transport::Bootstrap* bootstrap_;
  std::vector<std::unique_ptr<PairLink>>* links_;
  Heartbeat* heartbeat_;
  const Clock::time_point connectEnd_;
  const Clock::time_point probeEnd_;
  const double checkTimeoutS_;
  int round_ = 0;             // in run(): the round it walks
  std::vector<bool> opened_;  // by peer: the peer's word on its end was received
  std::set<int> given_up_;    // ranks of this node that stopped living
  std::vector<int> machine_;  // machineProcessors() when the run began
};

}  // namespace cohort::linkcheck
