// Median and spread in the style of Gloo's 8-line median: sort a copy. The
// spread is the median absolute deviation because a link's samples are few
// (5 by default) and one of them may have met a busy processor: a range or a
// standard deviation would call that link noisy, the MAD does not.
//
// Noise only ever slows a sample down, so a healthy link has fast samples even
// on a busy machine; a slow link has none. That is why the verdict asks the
// upper quartile before it calls a link SLOW: measured beside a CPU hog and
// builds (load 8 on 2 processors), 6% of samples fell under half their class
// median, and a median of 5 fell there about once in 500 links.
#include "tools/linkcheck/link_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cohort::linkcheck {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double upperQuartile(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto reach = static_cast<std::size_t>(std::ceil(v.size() / 4.0));  // values at or above
  return v[v.size() - reach];
}

double spreadOf(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = median(values);
  if (m <= 0) return 0;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - m));
  return median(deviations) / m;
}

LinkFigures LinkFigures::of(const std::vector<LinkSample>& samples,
                            const PassReference& reference) {
  LinkFigures f;
  f.samples = static_cast<int>(samples.size());
  int untrusted = 0;
  for (const LinkSample& s : samples) untrusted += s.lost > limits::kMaxTrustedLost;
  const int needed = std::min(limits::kMinTrustedSamples, (f.samples + 1) / 2);
  const bool setAside = f.samples - untrusted >= needed;
  f.disturbed = untrusted > 0 && !setAside;
  std::vector<double> rtts, gbps, ratios;
  for (const LinkSample& s : samples) {
    if (setAside && s.lost > limits::kMaxTrustedLost) continue;
    rtts.push_back(s.rttUs);
    gbps.push_back(s.gbps);
    const double ref = reference ? reference(s) : 0;
    if (ref > 0) ratios.push_back(s.gbps / ref);
  }
  f.setAside = setAside ? untrusted : 0;
  f.rttUs = median(rtts);
  f.gbps = median(gbps);
  f.upper = upperQuartile(gbps);
  f.spread = spreadOf(gbps);
  f.ratio = median(ratios);
  f.upperRatio = upperQuartile(ratios);
  return f;
}

std::string gbpsText(double gbps) {
  return gbps >= 0.1 || gbps == 0 ? fmt::format("{:.2f}", gbps) : fmt::format("{:.3g}", gbps);
}

namespace {

// "0.75", "0.0025": a link's share of its class.
std::string ratioText(double r) {
  return r >= 0.1 || r == 0 ? fmt::format("{:.2f}", r) : fmt::format("{:.2g}", r);
}

}  // namespace

namespace {

// "spread ±4% over 5 samples of the retry, 1 set aside (...)"
std::string spreadText(const LinkFigures& f, bool retried) {
  std::string out = fmt::format("spread ±{:.0f}% over {} samples{}", f.spread * 100, f.samples,
                                retried ? " of the retry" : "");
  if (f.setAside > 0) {
    out += fmt::format(", {} set aside (other processes took over half its time)", f.setAside);
  }
  if (f.disturbed) out += ", most of them lost over half their time to other processes";
  return out;
}

std::string classText(const ClassFigure& c) {
  if (c.links == 0) return "";
  return fmt::format("; {} median {} GB/s over {} link{}", c.transport, gbpsText(c.medianGbps),
                     c.links, c.links == 1 ? "" : "s");
}

}  // namespace

Judgement judgeFigures(const LinkFigures& f, const ClassFigure& cls, const VerdictRules& rules,
                       bool bandwidth, bool retried) {
  Judgement j;
  const std::string how = f.disturbed ? "disturbed" : "scattered";
  if (bandwidth && rules.minRatio > 0 && cls.comparable() && f.ratio > 0 &&
      f.ratio < rules.minRatio) {
    const std::string figure =
        fmt::format("bandwidth {} GB/s, {} x the {} links probed in the same passes",
                    gbpsText(f.gbps), ratioText(f.ratio), cls.transport);
    if (f.upperRatio >= rules.minRatio || f.disturbed) {
      j.call = Call::kUnstable;
      j.cause = fmt::format(
          "{}, but a quarter of its samples reach {} x, {}: too {} to judge against {:.2f} x{}",
          figure, ratioText(f.upperRatio), spreadText(f, retried), how, rules.minRatio,
          classText(cls));
    } else {
      j.call = Call::kSlow;
      j.cause = fmt::format("{} (< {:.2f}){}; {}", figure, rules.minRatio, classText(cls),
                            spreadText(f, retried));
    }
    return j;
  }
  if (bandwidth && rules.minGbps > 0 && f.gbps < rules.minGbps) {
    const std::string bound = fmt::format("{} GB/s (--min-gbps)", gbpsText(rules.minGbps));
    if (f.upper >= rules.minGbps || f.disturbed) {
      j.call = Call::kUnstable;
      j.cause = fmt::format(
          "bandwidth {} GB/s but a quarter of its samples reach {} GB/s, {}: too {} to judge "
          "against {}{}",
          gbpsText(f.gbps), gbpsText(f.upper), spreadText(f, retried), how, bound, classText(cls));
    } else {
      j.call = Call::kSlow;
      j.cause = fmt::format("bandwidth {} GB/s < {}{}; {}", gbpsText(f.gbps), bound, classText(cls),
                            spreadText(f, retried));
    }
    return j;
  }
  if (rules.maxRttUs > 0 && f.rttUs > rules.maxRttUs) {
    j.call = Call::kSlow;
    j.cause = fmt::format("latency {:.1f} us > {:g} us (--max-rtt-us) over {} samples", f.rttUs,
                          rules.maxRttUs, f.samples);
  }
  return j;
}

}  // namespace cohort::linkcheck
