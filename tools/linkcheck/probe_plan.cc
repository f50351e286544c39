// Packing a round into steps is first fit: a pair goes into the first step of
// its round where both of its nodes still have a processor for it. The two ends
// of a pair within one node share a processor: they take turns (a receiver
// waits for the sender's data), and two ends on two processors measured 3x
// less than on one. A node's capacity is its slots when it has more ranks than
// slots; otherwise unlimited, because a round gives every rank one peer at most
// and so can never exceed it.
#include "tools/linkcheck/probe_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"

namespace cohort::linkcheck {

int roundCount(int size) { return size % 2 == 0 ? size - 1 : size; }

int roundPeer(int rank, int round, int size) {
  const int players = size % 2 == 0 ? size : size + 1;  // plus a "bye" when odd
  const int fixed = players - 1;
  const int m = players - 1;
  int peer = rank == fixed ? round : ((2 * round - rank) % m + m) % m;
  if (rank != fixed && peer == rank) peer = fixed;
  return peer >= size ? -1 : peer;
}

namespace {

using Pairs = std::vector<std::pair<int, int>>;

int nodeCount(const PlanInput& in) {
  return in.nodeOf.empty() ? 0 : *std::max_element(in.nodeOf.begin(), in.nodeOf.end()) + 1;
}

// Per node: the ends it may run at once.
std::vector<int> capacities(const PlanInput& in) {
  std::vector<int> ranks(static_cast<std::size_t>(nodeCount(in)), 0);
  for (int node : in.nodeOf) ++ranks[static_cast<std::size_t>(node)];
  std::vector<int> cap(ranks.size(), std::numeric_limits<int>::max());
  for (std::size_t n = 0; n < ranks.size(); ++n) {
    const int slots = n < in.slots.size() ? std::max(1, in.slots[n]) : 1;
    if (ranks[n] > slots) cap[n] = slots;
  }
  return cap;
}

// The steps of one round (of the pairs in `only`, when it is not empty: then one pair
// per step, so that a link a verdict suspects is measured again alone, not beside
// another suspect's probe on the same processors).
std::vector<Pairs> packRound(const PlanInput& in, const std::vector<int>& cap,
                             const std::set<std::pair<int, int>>& only, int round) {
  std::vector<Pairs> steps;
  std::vector<std::vector<int>> load;  // per step, per node: ends in use
  for (int a = 0; a < in.size; ++a) {
    const int b = roundPeer(a, round, in.size);
    if (b <= a || (!only.empty() && only.count({a, b}) == 0)) continue;
    if (!only.empty()) {
      steps.push_back({{a, b}});
      continue;
    }
    const auto na = static_cast<std::size_t>(in.nodeOf[static_cast<std::size_t>(a)]);
    const auto nb = static_cast<std::size_t>(in.nodeOf[static_cast<std::size_t>(b)]);
    std::size_t s = 0;
    for (; s < steps.size(); ++s) {
      if (load[s][na] < cap[na] && load[s][nb] < cap[nb]) break;
    }
    if (s == steps.size()) {
      steps.emplace_back();
      load.emplace_back(cap.size(), 0);
    }
    steps[s].push_back({a, b});
    ++load[s][na];
    if (nb != na) ++load[s][nb];
  }
  return steps;
}

}  // namespace

PlanInput makePlanInput(const std::vector<PlanMember>& members, int passes) {
  PlanInput in;
  in.size = static_cast<int>(members.size());
  in.passes = passes;
  std::map<std::string, int> nodes;
  for (std::size_t r = 0; r < members.size(); ++r) {
    const PlanMember& m = members[r];
    const std::string id = !m.box.empty()      ? "box " + m.box
                           : !m.hostId.empty() ? "host " + m.hostId
                                               : "absent " + std::to_string(r);
    const auto [it, added] = nodes.emplace(id, static_cast<int>(nodes.size()));
    in.nodeOf.push_back(it->second);
    if (added) in.slots.push_back(0);
    int& slots = in.slots[static_cast<std::size_t>(it->second)];
    if (m.processors > 0) slots = slots == 0 ? m.processors : std::min(slots, m.processors);
  }
  for (int& s : in.slots) s = std::max(1, s);
  return in;
}

std::string planText(const PlanInput& in) {
  std::ostringstream out;
  out << in.size << ' ' << in.passes << '\n';
  for (int n : in.nodeOf) out << n << ' ';
  out << '\n';
  for (int s : in.slots) out << s << ' ';
  return out.str();
}

Status planFromText(const std::string& text, PlanInput* out) {
  std::istringstream in(text);
  PlanInput p;
  const bool head = static_cast<bool>(in >> p.size >> p.passes);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  std::istringstream nodes(line);
  for (int n; nodes >> n;) p.nodeOf.push_back(n);
  for (int s; in >> s;) p.slots.push_back(s);
  const bool valid =
      head && p.size >= 0 && p.passes >= 1 && static_cast<int>(p.nodeOf.size()) == p.size &&
      std::all_of(p.nodeOf.begin(), p.nodeOf.end(),
                  [&](int n) { return n >= 0 && n < static_cast<int>(p.slots.size()); });
  if (!valid) return makeError(ErrorCode::kParseError, "not a probe plan: '{}'", text);
  *out = std::move(p);
  return Status::Ok();
}

std::vector<Pairs> ProbePlan::passSteps(const PlanInput& in) {
  const std::vector<int> cap = capacities(in);
  const std::set<std::pair<int, int>> only(in.only.begin(), in.only.end());
  std::vector<Pairs> all;
  for (int round = 0; round < roundCount(in.size); ++round) {
    for (Pairs& step : packRound(in, cap, only, round)) all.push_back(std::move(step));
  }
  return all;
}

ProbePlan ProbePlan::forRank(const PlanInput& in, int rank) {
  ProbePlan plan;
  if (in.size < 2) return plan;
  const std::vector<int> cap = capacities(in);
  const int myNode = in.nodeOf[static_cast<std::size_t>(rank)];
  plan.gated_ = cap[static_cast<std::size_t>(myNode)] != std::numeric_limits<int>::max();
  const std::vector<Pairs> pass = passSteps(in);
  // Off gated nodes every rank of the node may probe at once: each keeps the
  // processor of its place among the node's ranks (the lower end's, for a pair
  // within the node).
  const auto placeOf = [&](int r) {
    return static_cast<int>(std::count(in.nodeOf.begin(), in.nodeOf.begin() + r, myNode));
  };
  int lastBusy = -1;        // the node's last step with a probe in it
  std::vector<int> lastIn;  // the node's ranks in that step
  for (int p = 0; p < in.passes; ++p) {
    for (std::size_t i = 0; i < pass.size(); ++i) {
      const int step = p * static_cast<int>(pass.size()) + static_cast<int>(i);
      PlanStep mine{step, p, -1, 0, lastBusy, {}};
      std::vector<int> nodeIn;
      int used = 0;  // the node's processors taken by this step's pairs so far
      for (const auto& [a, b] : pass[i]) {
        const bool inA = in.nodeOf[static_cast<std::size_t>(a)] == myNode;
        const bool inB = in.nodeOf[static_cast<std::size_t>(b)] == myNode;
        if (!inA && !inB) continue;
        if (plan.gated_ && (a == rank || b == rank)) mine.processor = used;
        ++used;
        if (inA) nodeIn.push_back(a);
        if (inB) nodeIn.push_back(b);
        if (a == rank) mine.peer = b;
        if (b == rank) mine.peer = a;
      }
      if (nodeIn.empty()) continue;
      if (mine.peer >= 0) {
        // The node's ranks of its last busy step waited for theirs in turn, so
        // waiting for them alone orders this step after every earlier one.
        if (plan.gated_) {
          for (int r : lastIn) {
            if (r != rank) mine.waitFor.push_back(r);
          }
        } else {
          const bool local = in.nodeOf[static_cast<std::size_t>(mine.peer)] == myNode;
          mine.processor = placeOf(local ? std::min(rank, mine.peer) : rank);
          mine.after = -1;
        }
        plan.steps_.push_back(std::move(mine));
      }
      lastBusy = step;
      lastIn = std::move(nodeIn);
    }
  }
  plan.stepCount_ = in.passes * static_cast<int>(pass.size());
  return plan;
}

}  // namespace cohort::linkcheck
