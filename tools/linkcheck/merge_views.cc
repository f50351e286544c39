// Rank 0's judgement of every link from the views of both of its ends. A probe
// needs both ends, so one end's success proves the link even when the other end
// sent no view; a rank that sent none is still a problem of the check.
#include <fmt/format.h>

#include <map>
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

void judgeGood(const LinkView& v, const MergeSettings& s, LinkVerdict* out) {
  out->transport = v.transport;
  out->rttUs = v.rttUs;
  out->gbps = v.gbps;
  out->status = LinkStatus::kOk;
  if (s.bandwidthBytes > 0 && s.minGbps > 0 && v.gbps < s.minGbps) {
    out->status = LinkStatus::kSlow;
    out->cause = fmt::format("bandwidth {:.2f} GB/s < {:.1f}", v.gbps, s.minGbps);
  }
}

// The failing end whose stage came first (the lower rank on a tie).
const LinkView* firstFailure(const LinkView* a, const LinkView* b) {
  const bool aFailed = a != nullptr && !a->ok;
  const bool bFailed = b != nullptr && !b->ok;
  if (aFailed && bFailed) return static_cast<int>(b->stage) < static_cast<int>(a->stage) ? b : a;
  return aFailed ? a : bFailed ? b : nullptr;
}

LinkVerdict judge(int a, int b, const ViewIndex& index, const MergeSettings& s) {
  LinkVerdict out;
  out.a = a;
  out.b = b;
  const LinkView* va = lookup(index, a, b);
  const LinkView* vb = lookup(index, b, a);
  if (const LinkView* failed = firstFailure(va, vb)) {
    out.status = failed->lost ? LinkStatus::kLoss : LinkStatus::kBad;
    out.transport = failed->transport;
    out.cause = failed->cause;
    out.detail = failed->detail;
    return out;
  }
  if (va != nullptr || vb != nullptr) {
    judgeGood(va != nullptr ? *va : *vb, s, &out);
    return out;
  }
  out.status = LinkStatus::kBad;
  out.cause = fmt::format("neither rank {} nor rank {} reported results", a, b);
  return out;
}

}  // namespace

CheckReport mergeViews(int size, const std::vector<std::optional<RankView>>& views,
                       const MergeSettings& settings) {
  CheckReport r;
  r.size = size;
  r.timeoutS = settings.timeoutS;
  r.linkTimeoutS = settings.linkTimeoutS;
  r.minGbps = settings.minGbps;
  r.bandwidthBytes = settings.bandwidthBytes;
  r.pings = settings.pings;
  for (int rank = 0; rank < size; ++rank) {
    RankEntry e;
    e.rank = rank;
    const auto i = static_cast<std::size_t>(rank);
    if (i < views.size() && views[i]) {
      e.address = views[i]->address;
      e.hostname = views[i]->hostname;
      e.reported = true;
    }
    if (e.address.empty() && i < settings.tableAddresses.size()) {
      e.address = settings.tableAddresses[i];
    }
    r.ranks.push_back(e);
  }
  const ViewIndex index = indexViews(views);
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) r.links.push_back(judge(a, b, index, settings));
  }
  for (const RankEntry& e : r.ranks) {
    if (e.reported) continue;
    r.problems.push_back(fmt::format(
        "rank {} ({}) sent no results within the {:g} s timeout (it was not started, could not "
        "reach the store, or stopped)",
        e.rank, r.addressOf(e.rank), settings.timeoutS));
  }
  return r;
}

}  // namespace cohort::linkcheck
