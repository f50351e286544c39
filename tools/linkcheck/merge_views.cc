// Rank 0's judgement of every link from the views of both of its ends. A probe
// needs both ends, so one end's success proves the link even when the other end
// sent no view; a rank that sent none is still a problem of the check. Measured
// links are judged last, together, because the relative check compares each
// with the median of its class.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "tools/linkcheck/link_views.h"

namespace cohort::linkcheck {

namespace {

using ViewIndex = std::map<std::pair<int, int>, const LinkView*>;  // (rank, peer)

ViewIndex indexViews(const std::vector<std::optional<RankView>>& views) {
  ViewIndex index;
  for (const auto& v : views) {
    if (!v) continue;
    for (const LinkView& l : v->links) index[{v->rank, l.peer}] = &l;
  }
  return index;
}

const LinkView* lookup(const ViewIndex& index, int rank, int peer) {
  auto it = index.find({rank, peer});
  return it == index.end() ? nullptr : it->second;
}

// The failing end whose stage came first (the lower rank on a tie).
const LinkView* firstFailure(const LinkView* a, const LinkView* b) {
  const bool aFailed = a != nullptr && !a->ok;
  const bool bFailed = b != nullptr && !b->ok;
  if (aFailed && bFailed) return static_cast<int>(b->stage) < static_cast<int>(a->stage) ? b : a;
  return aFailed ? a : bFailed ? b : nullptr;
}

LinkVerdict judgeEnds(int a, int b, const ViewIndex& index) {
  LinkVerdict out;
  out.a = a;
  out.b = b;
  const LinkView* va = lookup(index, a, b);
  const LinkView* vb = lookup(index, b, a);
  if (const LinkView* failed = firstFailure(va, vb)) {
    out.status = failed->unreachable ? LinkStatus::kUnreachable : LinkStatus::kBad;
    out.transport = failed->transport;
    out.samples = failed->samples;
    out.cause = failed->cause;
    out.detail = failed->detail;
    return out;
  }
  if (va != nullptr || vb != nullptr) {
    const LinkView& v = va != nullptr ? *va : *vb;
    out.status = LinkStatus::kOk;  // measured: judgeMeasured decides
    out.transport = v.transport;
    out.samples = v.samples;
    return out;
  }
  out.status = LinkStatus::kUnreachable;
  out.cause = fmt::format("neither rank {} nor rank {} reported results", a, b);
  return out;
}

// The samples of one round (0: the first passes).
std::vector<LinkSample> ofRound(const std::vector<LinkSample>& all, int round) {
  std::vector<LinkSample> out;
  for (const LinkSample& s : all) {
    if (s.round == round) out.push_back(s);
  }
  return out;
}

int lastRound(const std::vector<LinkSample>& all) {
  int last = 0;
  for (const LinkSample& s : all) last = std::max(last, s.round);
  return last;
}

// What each class's links moved in each pass of each round: the median of the
// samples there of the links that `counts`.
class PassReferences {
 public:
  template <typename Counts>
  PassReferences(const std::vector<LinkVerdict>& links, Counts&& counts) {
    std::map<Key, std::vector<double>> samples;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const LinkVerdict& l = links[i];
      if (l.status != LinkStatus::kOk) continue;
      for (const LinkSample& s : l.samples) {
        if (counts(i, s.round)) samples[{l.transport, s.round, s.pass}].push_back(s.gbps);
      }
    }
    for (auto& [key, values] : samples) medians_[key] = median(std::move(values));
  }
  PassReference of(const std::string& transport) const {
    return [this, transport](const LinkSample& s) {
      const auto it = medians_.find({transport, s.round, s.pass});
      return it == medians_.end() ? 0.0 : it->second;
    };
  }

 private:
  using Key = std::tuple<std::string, int, int>;  // transport, round, pass
  std::map<Key, double> medians_;
};

LinkStatus statusOf(Call c) {
  return c == Call::kSlow       ? LinkStatus::kSlow
         : c == Call::kUnstable ? LinkStatus::kUnstable
                                : LinkStatus::kOk;
}

void show(const LinkFigures& f, LinkVerdict* l) {
  l->rttUs = f.rttUs;
  l->gbps = f.gbps;
  l->spread = f.spread;
  l->disturbed = f.disturbed;
}

// Every measured link against its class and the bounds, by its first passes:
// each sample over what the class's links moved in the same pass, so that a
// spell of load on the machine, which slows every link probed in it, flags
// none. A link the first passes flag and a retry round probed again is judged
// by its last retry, against the links probed beside it as references (those
// the first passes did not flag); by every round when other processes disturbed
// most of the last.
void judgeMeasured(CheckReport* r, const MergeSettings& s) {
  const bool bandwidth = s.bandwidthBytes > 0;
  std::map<std::string, std::vector<double>> medians;  // per transport
  for (LinkVerdict& l : r->links) {
    if (l.status != LinkStatus::kOk) continue;
    medians[l.transport].push_back(LinkFigures::of(ofRound(l.samples, 0)).gbps);
  }
  const PassReferences first(r->links, [](std::size_t, int round) { return round == 0; });
  std::vector<Judgement> firstCall(r->links.size());
  for (std::size_t i = 0; i < r->links.size(); ++i) {
    LinkVerdict& l = r->links[i];
    if (l.status != LinkStatus::kOk) continue;
    ClassFigure cls;
    cls.transport = l.transport;
    if (bandwidth) {
      cls.links = static_cast<int>(medians[l.transport].size());
      cls.medianGbps = median(medians[l.transport]);
      l.classLinks = cls.links;
      l.classMedianGbps = cls.medianGbps;
    }
    const LinkFigures f = LinkFigures::of(ofRound(l.samples, 0), first.of(l.transport));
    show(f, &l);
    firstCall[i] = judgeFigures(f, cls, s.rules, bandwidth, false);
  }
  // A retry round's references: the links it probed that the first passes did not flag.
  const PassReferences again(r->links, [&](std::size_t i, int round) {
    return round == 0 || firstCall[i].call == Call::kOk;
  });
  for (std::size_t i = 0; i < r->links.size(); ++i) {
    LinkVerdict& l = r->links[i];
    if (l.status != LinkStatus::kOk) continue;
    Judgement j = firstCall[i];
    const int last = lastRound(l.samples);
    if (j.call != Call::kOk && last > 0) {
      const PassReference ref = again.of(l.transport);
      LinkFigures f = LinkFigures::of(ofRound(l.samples, last), ref);
      if (f.disturbed) f = LinkFigures::of(l.samples, ref);  // every round's trusted samples
      const ClassFigure cls{l.transport, l.classMedianGbps, l.classLinks};
      // Without references probed beside it, the retry has nothing to compare with.
      if (f.ratio > 0 || !cls.comparable() || s.rules.minRatio <= 0) {
        show(f, &l);
        j = judgeFigures(f, cls, s.rules, bandwidth, true);
      }
    }
    l.status = statusOf(j.call);
    l.cause = j.cause;
  }
}

}  // namespace

std::vector<std::pair<int, int>> linksToRetry(const CheckReport& r, int round) {
  std::vector<std::pair<int, int>> out;
  std::map<std::string, std::vector<std::pair<double, std::size_t>>> peers;  // per class
  std::set<std::string> classes;                                             // of the links retried
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const LinkVerdict& l = r.links[i];
    if (lastRound(l.samples) >= round) return {};  // this round ran already
    const bool flagged = l.status == LinkStatus::kSlow || l.status == LinkStatus::kUnstable;
    if (flagged && (round == 1 || (l.status == LinkStatus::kUnstable && l.disturbed))) {
      out.push_back({l.a, l.b});
      classes.insert(l.transport);
    } else if (!flagged && l.status == LinkStatus::kOk && l.classMedianGbps > 0) {
      peers[l.transport].push_back({std::fabs(l.gbps / l.classMedianGbps - 1), i});
    }
  }
  // References for the retry: the class's links nearest its median.
  for (const std::string& c : classes) {
    auto& candidates = peers[c];
    std::sort(candidates.begin(), candidates.end());
    for (std::size_t k = 0; k < candidates.size() && k < limits::kRetryReferences; ++k) {
      const LinkVerdict& l = r.links[candidates[k].second];
      out.push_back({l.a, l.b});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

CheckReport mergeViews(int size, const std::vector<std::optional<RankView>>& views,
                       const MergeSettings& settings) {
  CheckReport r;
  r.size = size;
  r.timeoutS = settings.timeoutS;
  r.linkTimeoutS = settings.linkTimeoutS;
  r.rules = settings.rules;
  r.bandwidthBytes = settings.bandwidthBytes;
  r.pings = settings.pings;
  r.repeat = settings.repeat;
  for (int rank = 0; rank < size; ++rank) {
    RankEntry e;
    e.rank = rank;
    const auto i = static_cast<std::size_t>(rank);
    if (i < views.size() && views[i]) {
      e.address = views[i]->address;
      e.hostname = views[i]->hostname;
      e.reported = true;
    }
    if (i < settings.table.size()) {
      const TableRank& t = settings.table[i];
      e.tableAddress = !t.deviceIp.empty() ? t.deviceIp : t.hostIp;
      e.serverId = t.serverId;
    }
    r.ranks.push_back(e);
  }
  const ViewIndex index = indexViews(views);
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) r.links.push_back(judgeEnds(a, b, index));
  }
  judgeMeasured(&r, settings);
  for (const RankEntry& e : r.ranks) {
    if (e.reported) continue;
    r.problems.push_back(fmt::format(
        "rank {} ({}) sent no results within the {:g} s timeout (it was not started, could not "
        "reach the store, or stopped)",
        e.rank, r.nameOf(e.rank), settings.timeoutS));
  }
  return r;
}

}  // namespace cohort::linkcheck
