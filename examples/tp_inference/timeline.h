// When compute kernels and collectives ran, and how much of the communication
// time was hidden behind compute (the overlap efficiency).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace tp {

/// [begin, end) in seconds of the steady clock.
struct Interval {
  double begin = 0;
  double end = 0;
};

inline double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Communication time, and the part of it during which the device computed.
struct OverlapStats {
  double commSeconds = 0;
  double hiddenSeconds = 0;
  double share() const { return commSeconds > 0 ? hiddenSeconds / commSeconds : 0.0; }
};

/// `compute` comes from one in-order stream: sorted and disjoint. Each comm
/// interval counts the time it shares with any compute interval.
inline OverlapStats measureOverlap(const std::vector<Interval>& compute,
                                   const std::vector<Interval>& comm) {
  OverlapStats stats;
  std::size_t first = 0;  // first compute interval that may still overlap
  for (const Interval& c : comm) {
    stats.commSeconds += c.end - c.begin;
    while (first < compute.size() && compute[first].end <= c.begin) ++first;
    for (std::size_t i = first; i < compute.size() && compute[i].begin < c.end; ++i) {
      stats.hiddenSeconds +=
          std::max(0.0, std::min(c.end, compute[i].end) - std::max(c.begin, compute[i].begin));
    }
  }
  return stats;
}

}  // namespace tp
