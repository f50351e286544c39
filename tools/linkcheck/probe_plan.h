// Who probes whom, and when. Pure rank arithmetic (as UCC keeps its patterns
// apart from its executors): every rank computes the same plan from the same
// inputs, which rank 0 publishes after the join.
//
// A pass is a round-robin tournament: in each round every rank meets at most
// one peer, so probes never wait in a cycle and never share a rank's processor.
// A node with more ranks than processors would still run more probe ends at once
// than it has processors (two ranks of one node probing each other use two), so
// its rounds are split into steps that fit, and its ranks wait for the ranks of
// the node's previous step before starting theirs ("gated" nodes). Passes
// repeat the same steps: a link's samples are spread over the whole check.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cohort/status.h"

namespace cohort::linkcheck {

/// Round-robin tournament: this rank's peer in `round` (0 .. roundCount-1), or -1
/// when it sits the round out. Symmetric: roundPeer(roundPeer(r, k), k) == r.
int roundPeer(int rank, int round, int size);
int roundCount(int size);

/// What the plan is made from. A plain value.
struct PlanInput {
  int size = 0;
  std::vector<int> nodeOf;  ///< per rank: its node's index (0 .. nodes-1)
  std::vector<int> slots;   ///< per node: the processors its probes may use
  int passes = 1;           ///< passes over every pair
  /// Not empty: the pairs (a < b) to probe, in the tournament's order, one per
  /// step; the others are left out (the retry round).
  std::vector<std::pair<int, int>> only;
};

/// What the plan needs to know of one rank.
struct PlanMember {
  int processors = 0;  ///< its machine's processors for probes; < 1: unknown
  std::string box;     ///< its machine (boot id); "" = unknown
  std::string hostId;  ///< its node; "" = it did not join
};

/// The plan's nodes are the machines whose processors the probes share: by box
/// where known (the network namespaces and containers of one machine have host
/// ids of their own but one kernel), else by host id. A rank that did not join
/// is a node of its own, so that it gates nobody. A node's slots are the fewest
/// processors any of its ranks reported (1 when none did).
PlanInput makePlanInput(const std::vector<PlanMember>& members, int passes);

/// "size passes\nnode of each rank\nslots of each node": what rank 0 publishes.
std::string planText(const PlanInput& input);
/// kParseError when the text is not a plan.
Status planFromText(const std::string& text, PlanInput* out);

/// One step of this rank's plan.
struct PlanStep {
  int step = 0;  ///< index among all the steps of the check (same on every rank)
  int pass = 0;
  int peer = -1;
  /// Which of the node's processors this end takes (0 .. slots-1): distinct for
  /// the ends that run at once on one node, so that no two share a processor.
  int processor = 0;
  /// Gated nodes only: the ranks of this node that take part in step `after`,
  /// the node's last busy step before this one; wait until they are done with it.
  int after = -1;
  std::vector<int> waitFor;
};

/// The steps of one rank. A plain value.
class ProbePlan {
 public:
  ProbePlan() = default;
  static ProbePlan forRank(const PlanInput& input, int rank);

  /// In step order: every step where this rank probes.
  const std::vector<PlanStep>& steps() const { return steps_; }
  /// Whether this rank's node waits between steps.
  bool gated() const { return gated_; }
  int stepCount() const { return stepCount_; }

  /// The steps of a whole pass, each a list of pairs (a < b): for tests and for
  /// the printed time bound.
  static std::vector<std::vector<std::pair<int, int>>> passSteps(const PlanInput& input);

 private:
  std::vector<PlanStep> steps_;
  bool gated_ = false;
  int stepCount_ = 0;
};

}  // namespace cohort::linkcheck
