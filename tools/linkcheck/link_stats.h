// The numbers behind a link's verdict: the median and spread of its samples,
// and the judgement of those figures against the absolute bounds and against
// the median of the link's class (every measured link of its transport). Pure
// functions of made-up or measured samples; no I/O.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tools/linkcheck/check_limits.h"

namespace cohort::linkcheck {

/// One probe of a link: the median round trip of its pings and, with a
/// bandwidth probe, the one-way bandwidth (0 without).
struct LinkSample {
  double rttUs = 0;
  double gbps = 0;
  double lost = 0;  ///< share of the counted transfer's time other processes took (not counted)
  int round = 0;    ///< 0: the first passes; 1, 2, ...: the retry rounds
  int pass = 0;     ///< the pass of its round it was taken in
};

/// Per sample, what its class's links moved in the same pass of the same round
/// (the median of their samples there); 0 = unknown.
using PassReference = std::function<double(const LinkSample&)>;

/// The median (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);
/// The upper quartile: the smallest value that at least a quarter of the values
/// reach (the 4th of 5, the 8th of 10); 0 when empty.
double upperQuartile(std::vector<double> values);

/// How widely the values scatter, relative to their median: the median absolute
/// deviation over the median (0.1 = "±10%"). Robust: one wild sample of five
/// leaves it unchanged. 0 with fewer than two values or a zero median.
double spreadOf(const std::vector<double>& values);

/// A link's figures from its samples. Samples that lost more than
/// limits::kMaxTrustedLost of their time to other processes are set aside when
/// enough others are left; otherwise every sample counts and the link is
/// `disturbed`.
struct LinkFigures {
  double rttUs = 0;        ///< median round trip
  double gbps = 0;         ///< median bandwidth
  double upper = 0;        ///< upper quartile of the bandwidths
  double spread = 0;       ///< spreadOf the bandwidths
  double ratio = 0;        ///< median of each sample over its pass reference; 0: none known
  double upperRatio = 0;   ///< upper quartile of those
  int samples = 0;         ///< all of them
  int setAside = 0;        ///< of which not counted
  bool disturbed = false;  ///< too few samples kept their time to set the others aside

  static LinkFigures of(const std::vector<LinkSample>& samples,
                        const PassReference& reference = {});
};

/// What a link is judged against. 0 turns a bound off.
struct VerdictRules {
  double minGbps = 0;                          ///< --min-gbps
  double maxRttUs = 0;                         ///< --max-rtt-us
  double minRatio = limits::kDefaultMinRatio;  ///< --min-ratio, of the class median
};

/// A link's class: the median of the medians of its measured links.
struct ClassFigure {
  std::string transport;  ///< "shm", "tcp", "rdma"
  double medianGbps = 0;
  int links = 0;
  /// Whether the relative check applies (enough links to compare with).
  bool comparable() const { return links >= limits::kMinClassLinks && medianGbps > 0; }
};

enum class Call { kOk, kSlow, kUnstable };

struct Judgement {
  Call call = Call::kOk;
  std::string cause;  ///< "" when ok: the figure, the bound, the class median, the spread
};

/// Judges a measured link, first against its class: its samples over what the
/// class's links moved in the same passes (ratio) under minRatio; then against
/// --min-gbps. A figure under its bound is SLOW when even its upper quartile is
/// under it too; otherwise the samples straddle the bound, too widely to judge:
/// UNSTABLE. A median round trip over --max-rtt-us is SLOW. `bandwidth`: whether
/// a bandwidth probe ran; `retried`: whether the figures are the retry round's.
Judgement judgeFigures(const LinkFigures& figures, const ClassFigure& cls,
                       const VerdictRules& rules, bool bandwidth, bool retried);

/// "12.34", "0.25", "0.0125": bandwidths in GB/s from 100 Mbit/s to 100 GB/s.
std::string gbpsText(double gbps);

}  // namespace cohort::linkcheck
