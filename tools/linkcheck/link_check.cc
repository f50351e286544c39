// The phases of the check (see link_check.h). Deadlines come from the start of
// this rank's check: joining and each link get the link timeout, probing ends a
// little before the whole timeout so that rank 0 still receives the views.
#include "tools/linkcheck/link_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>

#include "common/error.h"
#include "common/log.h"
#include "tools/linkcheck/pair_link.h"
#include "transport/bootstrap.h"
#include "transport/transport.h"

namespace cohort::linkcheck {

using transport::Bytes;
using transport::PeerInfo;

double CheckOptions::effectiveLinkTimeoutS() const {
  return std::max(0.1, std::floor(std::min(linkTimeoutS, timeoutS / 3) * 10) / 10);
}

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

Deadline at(Clock::time_point t) { return Deadline::after(t - Clock::now()); }

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

Bytes textBytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string bytesText(const Bytes& b) { return std::string(b.begin(), b.end()); }

// One rank's run of the check. Not thread-safe: the calling thread drives it
// (links connect on threads of their own, joined before it goes on). Owns its
// links; lives for one runLinkCheck call.
class LinkCheck {
 public:
  LinkCheck(const CheckOptions& o, std::shared_ptr<transport::Store> store, const CheckMember& me,
            VerdictCallback onVerdict)
      : o_(o),
        onVerdict_(std::move(onVerdict)),
        linkS_(o.effectiveLinkTimeoutS()),
        start_(Clock::now()),
        store_(std::make_shared<transport::PrefixStore>(std::move(store), "linkcheck/")),
        bootstrap_(store_, me.rank, me.size),
        me_(me),
        peers_(static_cast<std::size_t>(me.size)),
        links_(static_cast<std::size_t>(me.size)),
        absent_(static_cast<std::size_t>(me.size)) {}

  Status run(CheckReport* report);

 private:
  Status join();
  Status checkPeer(int p, const Bytes& blob, PeerInfo* out);
  Status setupLinks();
  Status connectLinks(Deadline deadline);
  void probeLinks();
  void probeWith(PairLink& link);
  RankView myView() const;
  Status gather(CheckReport* report);
  Status receiveVerdict(const RankView& mine, CheckReport* report);
  MergeSettings settings() const;
  PairLink* link(int p) const { return links_[static_cast<std::size_t>(p)].get(); }

  const CheckOptions o_;
  const VerdictCallback onVerdict_;
  const double linkS_;
  const Clock::time_point start_;
  Clock::time_point connectEnd_;  // when this rank's connect phase ends at the latest
  std::shared_ptr<transport::Store> store_;
  transport::Bootstrap bootstrap_;
  const CheckMember me_;
  std::vector<std::optional<PeerInfo>> peers_;    // by peer: those that joined
  std::vector<std::unique_ptr<PairLink>> links_;  // by peer; null: self, or never joined
  std::vector<std::optional<LinkView>> absent_;   // by peer: why there is no link
};

Status LinkCheck::run(CheckReport* report) {
  COHORT_RETURN_IF_ERROR(join());
  COHORT_RETURN_IF_ERROR(setupLinks());
  probeLinks();
  // Connections stay open until this rank has the verdict: closing one right
  // after a probe could fail the peer's last send (it may not have seen its
  // message consumed yet).
  return gather(report);
}

// A store failure (not a timeout) means this rank lost the job: it cannot go on.
Status lostStore(const Status& s, int rank) {
  return makeError(s.code(), "rank {} lost the job store: {}", rank, s.message());
}

Status LinkCheck::join() {
  const Bytes mine = me_.self.encode();
  for (int p = 0; p < me_.size; ++p) {
    if (p == me_.rank) continue;
    Status s = bootstrap_.send(p, "peer-info", mine);
    if (!s.ok()) return lostStore(s, me_.rank);
  }
  const Deadline deadline = at(start_ + seconds(linkS_));
  for (int p = 0; p < me_.size; ++p) {
    if (p == me_.rank) continue;
    Bytes blob;
    Status s = bootstrap_.recv(p, "peer-info", &blob, deadline);
    if (!s.ok() && s.code() != ErrorCode::kTimeout) return lostStore(s, me_.rank);
    PeerInfo peer;
    if (s.ok()) s = checkPeer(p, blob, &peer);
    if (s.ok()) {
      peers_[static_cast<std::size_t>(p)] = peer;
      continue;
    }
    LinkView v;
    v.peer = p;
    v.stage = Stage::kJoin;
    v.cause = s.code() == ErrorCode::kTimeout
                  ? fmt::format("rank {} did not join within {:g} s", p, linkS_)
                  : s.message();
    v.detail = s.message();
    absent_[static_cast<std::size_t>(p)] = v;
  }
  return Status::Ok();
}

Status LinkCheck::checkPeer(int p, const Bytes& blob, PeerInfo* out) {
  COHORT_RETURN_IF_ERROR(PeerInfo::decode(blob, out));
  const PeerInfo& me = me_.self;
  if (out->rank != p) {
    return makeError(ErrorCode::kConnectionError, "rank {} presented itself as rank {}", p,
                     out->rank);
  }
  if (out->protocolVersion != me.protocolVersion || out->libraryVersion != me.libraryVersion) {
    return makeError(
        ErrorCode::kVersionMismatch,
        "rank {} runs Cohort {} (protocol {}) but rank {} runs Cohort {} (protocol {})", p,
        transport::libraryVersionString(out->libraryVersion), out->protocolVersion, me_.rank,
        transport::libraryVersionString(me.libraryVersion), me.protocolVersion);
  }
  return Status::Ok();
}

Status LinkCheck::setupLinks() {
  // Blobs and connects share one link timeout from here: a peer's blob is late
  // only when the peer joined late, and then its connect is late too.
  connectEnd_ = Clock::now() + seconds(linkS_);
  const Deadline deadline = at(connectEnd_);
  for (int p = 0; p < me_.size; ++p) {
    if (!peers_[static_cast<std::size_t>(p)]) continue;
    // Each pair is a two-rank world of its own for the shm rings: lower rank 0.
    transport::TransportContext ctx;
    ctx.rank = me_.rank;
    ctx.size = me_.size;
    ctx.self = me_.self;
    ctx.self.localIndex = me_.rank < p ? 0 : 1;
    ctx.token = me_.token;
    ctx.connectDeadline = deadline;
    PeerInfo peer = *peers_[static_cast<std::size_t>(p)];
    peer.localIndex = p < me_.rank ? 0 : 1;
    links_[static_cast<std::size_t>(p)] = std::make_unique<PairLink>(ctx, peer, linkS_);
    Status s = bootstrap_.send(p, "link-setup", link(p)->setup());
    if (!s.ok()) return lostStore(s, me_.rank);
  }
  return connectLinks(deadline);
}

Status LinkCheck::connectLinks(Deadline deadline) {
  std::vector<Bytes> blobs(static_cast<std::size_t>(me_.size));
  for (int p = 0; p < me_.size; ++p) {
    if (link(p) == nullptr) continue;
    Status s = bootstrap_.recv(p, "link-setup", &blobs[static_cast<std::size_t>(p)], deadline);
    if (!s.ok() && s.code() != ErrorCode::kTimeout) return lostStore(s, me_.rank);
    if (!s.ok()) {
      link(p)->fail(Stage::kSetup, s,
                    fmt::format("rank {} sent no link set-up within {:g} s", p, linkS_));
    }
  }
  std::vector<std::thread> threads;
  for (int p = 0; p < me_.size; ++p) {
    PairLink* l = link(p);
    if (l == nullptr || l->failed()) continue;
    threads.emplace_back([l, &blobs, p] { l->connect(blobs[static_cast<std::size_t>(p)]); });
  }
  for (auto& t : threads) t.join();
  // Tell each peer how our end went, so a one-sided failure is not probed.
  for (int p = 0; p < me_.size; ++p) {
    PairLink* l = link(p);
    if (l == nullptr) continue;
    const std::string status = l->connected() ? "ok" : l->view().cause + "\n" + l->view().detail;
    Status s = bootstrap_.send(p, "connected", textBytes(status));
    if (!s.ok()) return lostStore(s, me_.rank);
  }
  return Status::Ok();
}

void LinkCheck::probeLinks() {
  for (int round = 0; round < roundCount(me_.size); ++round) {
    const int p = roundPeer(me_.rank, round, me_.size);
    if (p >= 0 && link(p) != nullptr && link(p)->connected()) probeWith(*link(p));
  }
}

void LinkCheck::probeWith(PairLink& l) {
  const auto end = start_ + seconds(o_.timeoutS - std::max(1.0, o_.timeoutS / 10));
  if (Clock::now() >= end) {
    return l.fail(
        Stage::kProbe,
        makeError(ErrorCode::kTimeout, "the check's {:g} s ran out before the probe", o_.timeoutS),
        fmt::format("not probed: the check's {:g} s timeout ran out", o_.timeoutS));
  }
  // A peer with a link that cannot connect says how its ends went only when its
  // connect phase ends, a link timeout after it began (with ours: both start when
  // the last rank has joined). Wait for that plus a link timeout, not a link
  // timeout from now, or a healthy link to that peer is reported dead.
  const auto answerBy = std::max(Clock::now(), connectEnd_) + seconds(linkS_);
  Bytes theirs;
  Status s = bootstrap_.recv(l.peer(), "connected", &theirs, at(std::min(end, answerBy)));
  const std::string text = bytesText(theirs);
  if (!s.ok()) {
    return l.fail(Stage::kConnect, s,
                  fmt::format("rank {} stopped answering ({})", l.peer(), shortCause(s, linkS_)));
  }
  if (text != "ok") {
    const std::size_t nl = text.find('\n');
    l.fail(Stage::kConnect, Status(ErrorCode::kConnectionError, text.substr(nl + 1)),
           text.substr(0, nl));
    return l.close();
  }
  // The probe's own link timeout starts now, however long the answer took.
  l.probe(o_.pings, o_.bandwidthBytes, at(std::min(end, Clock::now() + seconds(linkS_))));
}

RankView LinkCheck::myView() const {
  RankView v;
  v.rank = me_.rank;
  v.address = me_.self.address;
  v.hostname = me_.self.hostname;
  v.hostId = me_.self.hostId;
  v.pid = me_.self.pid;
  for (int p = 0; p < me_.size; ++p) {
    if (link(p) != nullptr) v.links.push_back(link(p)->view());
    if (absent_[static_cast<std::size_t>(p)])
      v.links.push_back(*absent_[static_cast<std::size_t>(p)]);
  }
  return v;
}

MergeSettings LinkCheck::settings() const {
  return MergeSettings{o_.timeoutS,       linkS_,   o_.minGbps,
                       o_.bandwidthBytes, o_.pings, me_.tableAddresses};
}

Status LinkCheck::gather(CheckReport* report) {
  const RankView mine = myView();
  Status s = store_->set(fmt::format("view/{}", me_.rank), textBytes(mine.toJson()));
  if (!s.ok()) return lostStore(s, me_.rank);
  if (me_.rank != 0) return receiveVerdict(mine, report);
  std::vector<std::optional<RankView>> views(static_cast<std::size_t>(me_.size));
  views[0] = mine;
  const Deadline deadline = at(start_ + seconds(o_.timeoutS));
  for (int p = 1; p < me_.size; ++p) {
    Bytes blob;
    s = store_->get(fmt::format("view/{}", p), &blob, deadline);
    if (!s.ok() && s.code() != ErrorCode::kTimeout) return lostStore(s, me_.rank);
    RankView v;
    if (s.ok()) s = RankView::fromJson(bytesText(blob), &v);
    if (!s.ok()) {
      COHORT_LOG(kInfo, "linkcheck", "no view from rank {}: {}", p, s.message());
      continue;
    }
    views[static_cast<std::size_t>(p)] = v;
  }
  *report = mergeViews(me_.size, views, settings());
  if (onVerdict_) onVerdict_(*report);
  s = store_->set("report", textBytes(report->toJson()));
  if (!s.ok()) return lostStore(s, me_.rank);
  return Status::Ok();
}

Status LinkCheck::receiveVerdict(const RankView& mine, CheckReport* report) {
  Bytes blob;
  Status s = store_->get("report", &blob, at(start_ + seconds(o_.timeoutS + linkS_)));
  if (s.ok()) s = CheckReport::fromJson(bytesText(blob), report);
  if (s.ok()) return Status::Ok();
  std::vector<std::optional<RankView>> views(static_cast<std::size_t>(me_.size));
  views[static_cast<std::size_t>(me_.rank)] = mine;
  *report = mergeViews(me_.size, views, settings());
  report->problems = {fmt::format(
      "rank 0 sent no verdict ({}): only the links of rank {} are known", s.message(), me_.rank)};
  return Status::Ok();
}

}  // namespace

void awaitVerdictReaders(std::shared_ptr<transport::Store> store, const CheckReport& report,
                         int rank, double maxSeconds) {
  transport::PrefixStore prefixed(std::move(store), "linkcheck/");
  if (rank != 0) (void)prefixed.set(fmt::format("done/{}", rank), Bytes{1});
  std::vector<std::string> done;
  for (const RankEntry& e : report.ranks) {
    if (e.rank != 0 && e.rank != rank && e.reported) done.push_back(fmt::format("done/{}", e.rank));
  }
  (void)prefixed.wait(done, at(Clock::now() + seconds(maxSeconds)));
}

Status runLinkCheck(const CheckOptions& options, std::shared_ptr<transport::Store> store,
                    const CheckMember& me, CheckReport* report, VerdictCallback onVerdict) {
  LinkCheck check(options, std::move(store), me, std::move(onVerdict));
  return check.run(report);
}

}  // namespace cohort::linkcheck
