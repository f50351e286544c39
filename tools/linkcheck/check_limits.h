// Every default, size and threshold of cohort-linkcheck, in one place, with the
// reason for its value. Figures quoted were measured on a 2-processor VM shared
// with other builds (issue 29): shm links 1.2-31.6 GB/s across checks of one
// node when four probes ran at once on two processors.
#pragma once

#include <cstddef>

namespace cohort::linkcheck::limits {

/// Samples per link (--repeat). Each sample is taken in a pass of its own over
/// all the pairs, so a disturbance (another process, a compiler starting) hits
/// one sample of many links rather than every sample of one link; the median of
/// 5 still holds when 2 of them were disturbed.
constexpr int kDefaultRepeat = 5;
constexpr int kMaxRepeat = 100;

/// --min-ratio: a link below this share of the median of its class (every link
/// of its transport) is SLOW. 0.5 flags a link at half the speed of its peers,
/// which is well outside the noise of a median of kDefaultRepeat samples; a
/// 100 Mbit/s link among 10 Gbit/s ones is at 0.01.
constexpr double kDefaultMinRatio = 0.5;
/// The relative check needs a class to compare with: with fewer measured links
/// than this, the class median is the link's own figure.
constexpr int kMinClassLinks = 2;

/// A link that the first --repeat passes flag is probed again, in a retry round
/// of --repeat passes over the flagged links (and references) only, while the
/// check's time lasts: it is SLOW only when the retry confirms it (UNSTABLE when
/// the retry's samples straddle its threshold). A busy machine, or a tcp
/// connection in a slow spell (measured between namespaces: 2.7 GB/s for
/// several samples where its peers moved 5), passes the second look. Links
/// that other processes still disturbed too much to judge get up to this many
/// rounds in all, each on another processor.
constexpr int kRetryRounds = 3;
/// The retry round also probes this many unflagged links of a flagged link's
/// class (those nearest its median): the references it is compared with, probed
/// in the same passes, under the same load.
constexpr std::size_t kRetryReferences = 3;

/// A sample whose transfer lost more than this share of its time to other
/// processes (the probe leaves that time out, but such an estimate is rough) is
/// set aside when kMinTrustedSamples others are left (or half of them, if
/// fewer); otherwise the link is retried. Beside a CPU hog, samples that lost
/// 75-94% were most of those under half their class median.
constexpr double kMaxTrustedLost = 0.5;
constexpr int kMinTrustedSamples = 3;

/// Processors a node keeps out of its probes (when it has more than this): the
/// rest of the machine (the store, the other ranks' waits, another process)
/// runs there instead of beside a probe. With two processors and a CPU hog
/// beside the check, probes on both took 0.35 GB/s and 12 ms round trips; on
/// one, the hog moved to the other.
constexpr int kReservedProcessors = 1;

/// Defaults of the probe itself.
constexpr int kDefaultPings = 5;
constexpr std::size_t kDefaultBandwidthBytes = 4 << 20;
constexpr double kDefaultLinkTimeoutS = 10;

/// The whole check's time bound when --timeout is not given: a base for the
/// join, connect and report phases, plus a budget per probe step. A rank takes
/// part in (ranks - 1) steps per pass, so the bound grows linearly with the
/// ranks: with the default --repeat 5, 33.5 s for 8 ranks, 61.5 s for 64 and
/// 541.5 s for 1,024. A step of 4 MiB twice over 10 GbE takes about 7 ms, so
/// the budget leaves room for links 10 times slower, and for the retries.
constexpr double kBaseTimeoutS = 30;
constexpr double kStepBudgetS = 0.1;

/// Probing stops this long before the whole timeout (at least), so that rank 0
/// still receives every view in time.
constexpr double kReportMarginS = 1;
constexpr double kReportMarginShare = 0.1;

/// The default whole-check timeout for `ranks` ranks and `repeat` samples.
constexpr double defaultTimeoutS(int ranks, int repeat) {
  return kBaseTimeoutS + kStepBudgetS * repeat * (ranks > 1 ? ranks - 1 : 0);
}

}  // namespace cohort::linkcheck::limits
