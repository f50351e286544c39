// The phases of the check (see link_check.h). Deadlines come from the start of
// this rank's check: joining and each link get the link timeout, probing ends a
// little before the whole timeout so that rank 0 still receives the views.
#include "tools/linkcheck/link_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/log.h"
#include "tools/linkcheck/heartbeat.h"
#include "tools/linkcheck/pair_link.h"
#include "tools/linkcheck/probe_runner.h"
#include "tools/linkcheck/view_exchange.h"
#include "transport/bootstrap.h"
#include "transport/transport.h"

namespace cohort::linkcheck {

using transport::Bytes;
using transport::PeerInfo;

double CheckOptions::effectiveTimeoutS(int size) const {
  return timeoutS > 0 ? timeoutS : limits::defaultTimeoutS(size, repeat);
}

double CheckOptions::effectiveLinkTimeoutS(int size) const {
  const double whole = effectiveTimeoutS(size);
  return std::max(0.1, std::floor(std::min(linkTimeoutS, whole / 3) * 10) / 10);
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
        timeoutS_(o.effectiveTimeoutS(me.size)),
        linkS_(o.effectiveLinkTimeoutS(me.size)),
        start_(Clock::now()),
        probeEnd_(start_ + seconds(timeoutS_ - std::max(limits::kReportMarginS,
                                                        timeoutS_ * limits::kReportMarginShare))),
        store_(std::make_shared<transport::PrefixStore>(std::move(store), "linkcheck/")),
        bootstrap_(store_, me.rank, me.size),
        heartbeat_(store_, me.rank, linkS_),
        me_(me),
        peers_(static_cast<std::size_t>(me.size)),
        links_(static_cast<std::size_t>(me.size)),
        absent_(static_cast<std::size_t>(me.size)) {}

  Status run(CheckReport* report);

 private:
  Status join();
  Status checkPeer(int p, const Bytes& blob, PeerInfo* out);
  PlanMember planMember(int r, int processors, const std::string& box) const;
  Status publishPlan();
  PlanInput readPlan();
  Status setupLinks();
  Status connectLinks(Deadline deadline);
  RankView myView() const;
  Status gather(int round, CheckReport* report, Pairs* retry);
  Pairs retryOf(int round, const CheckReport& report) const;
  Status receiveVerdict(int round, const RankView& mine, CheckReport* report, Pairs* retry);
  MergeSettings settings() const;
  PairLink* link(int p) const { return links_[static_cast<std::size_t>(p)].get(); }
  int processors() const { return me_.processors > 0 ? me_.processors : usableProcessors(); }

  const CheckOptions o_;
  const VerdictCallback onVerdict_;
  const double timeoutS_;
  const double linkS_;
  const Clock::time_point start_;
  const Clock::time_point probeEnd_;  // no probe starts after it
  Clock::time_point connectEnd_;      // when this rank's connect phase ends at the latest
  double firstPassesS_ = 0;           // how long this rank's first passes took
  std::shared_ptr<transport::Store> store_;
  transport::Bootstrap bootstrap_;
  Heartbeat heartbeat_;  // beats from construction until the verdict is in
  const CheckMember me_;
  std::vector<std::optional<PeerInfo>> peers_;    // by peer: those that joined
  std::vector<std::unique_ptr<PairLink>> links_;  // by peer; null: self, or never joined
  std::vector<std::optional<LinkView>> absent_;   // by peer: why there is no link
};

// Connections stay open until this rank has the verdict: closing one right
// after a probe could fail the peer's last send (it may not have seen its
// message consumed yet), and the retry round probes some of them again.
Status LinkCheck::run(CheckReport* report) {
  COHORT_RETURN_IF_ERROR(join());
  if (me_.rank == 0) COHORT_RETURN_IF_ERROR(publishPlan());
  COHORT_RETURN_IF_ERROR(setupLinks());
  PlanInput plan = readPlan();
  ProbeRunner runner({o_.pings, o_.bandwidthBytes, linkS_}, me_.rank, &bootstrap_, &links_,
                     &heartbeat_, connectEnd_, probeEnd_, timeoutS_);
  const auto probing = Clock::now();
  runner.run(ProbePlan::forRank(plan, me_.rank), 0);
  firstPassesS_ = std::chrono::duration<double>(Clock::now() - probing).count();
  for (int round = 0;; ++round) {
    Pairs retry;
    COHORT_RETURN_IF_ERROR(gather(round, report, &retry));
    if (retry.empty()) return Status::Ok();
    plan.only = std::move(retry);
    runner.run(ProbePlan::forRank(plan, me_.rank), round + 1);
  }
}

// A store failure (not a timeout) means this rank lost the job: it cannot go on.
Status lostStore(const Status& s, int rank) {
  return makeError(s.code(), "rank {} lost the job store: {}", rank, s.message());
}

Status LinkCheck::join() {
  const Bytes mine = me_.self.encode();
  if (me_.rank != 0) {
    const std::string box = me_.box.empty() ? bootId() : me_.box;
    Status s = bootstrap_.send(0, "processors", textBytes(fmt::format("{} {}", processors(), box)));
    if (!s.ok()) return lostStore(s, me_.rank);
  }
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
    v.unreachable = s.code() == ErrorCode::kTimeout;
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

// What this rank knows of rank r for the plan: its host id if it joined, its
// processors and machine if told (rank 0 is told by everyone).
PlanMember LinkCheck::planMember(int r, int processors, const std::string& box) const {
  const auto i = static_cast<std::size_t>(r);
  PlanMember m;
  m.processors = processors;
  m.box = box;
  if (r == me_.rank) m.hostId = me_.self.hostId;
  if (r != me_.rank && peers_[i]) m.hostId = peers_[i]->hostId;
  return m;
}

// Rank 0's view of the join decides the plan for everyone, so that every rank
// walks the same steps even when ranks saw different late joiners.
Status LinkCheck::publishPlan() {
  std::vector<PlanMember> members;
  members.push_back(planMember(0, processors(), me_.box.empty() ? bootId() : me_.box));
  for (int p = 1; p < me_.size; ++p) {
    int procs = 0;
    std::string box;
    Bytes blob;
    if (peers_[static_cast<std::size_t>(p)] &&
        bootstrap_.recv(p, "processors", &blob, at(start_ + seconds(linkS_))).ok()) {
      std::istringstream(bytesText(blob)) >> procs >> box;  // "processors machine"
    }
    members.push_back(planMember(p, procs, box));
  }
  const PlanInput plan = makePlanInput(members, o_.repeat);
  Status s = store_->set("plan", textBytes(planText(plan)));
  return s.ok() ? Status::Ok() : lostStore(s, me_.rank);
}

PlanInput LinkCheck::readPlan() {
  std::vector<PlanMember> members;
  for (int r = 0; r < me_.size; ++r)
    members.push_back(planMember(r, r == me_.rank ? processors() : 0, ""));
  const PlanInput own = makePlanInput(members, o_.repeat);
  Bytes blob;
  PlanInput theirs;
  const auto by = std::min(probeEnd_, Clock::now() + seconds(linkS_));
  Status s = store_->get("plan", &blob, at(by));
  if (s.ok()) s = planFromText(bytesText(blob), &theirs);
  if (s.ok() && theirs.size == me_.size) return theirs;
  COHORT_LOG(kWarn, "linkcheck",
             "rank {}: no probe plan from rank 0 ({}); probing by this "
             "rank's own view of the job",
             me_.rank, s.message());
  return own;
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
    const LinkView& v = l->view();
    const std::string status =
        l->connected() ? "ok"
                       : fmt::format("fail\n{}\n{}\n{}", v.unreachable ? 1 : 0, v.cause, v.detail);
    Status s = bootstrap_.send(p, "connected", textBytes(status));
    if (!s.ok()) return lostStore(s, me_.rank);
  }
  return Status::Ok();
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
  return MergeSettings{timeoutS_, linkS_,    o_.rules, o_.bandwidthBytes,
                       o_.pings,  o_.repeat, me_.table};
}

// The links to probe again after `round`: those the verdict flags, while retry
// rounds are left and the time left is at least what the first passes took.
Pairs LinkCheck::retryOf(int round, const CheckReport& r) const {
  if (round >= limits::kRetryRounds || Clock::now() + seconds(firstPassesS_) >= probeEnd_) {
    return {};
  }
  return linksToRetry(r, round + 1);
}

// Every rank sends its view of the round; rank 0 merges them and decides: the
// verdict, or links to retry (view_exchange.h).
Status LinkCheck::gather(int round, CheckReport* report, Pairs* retry) {
  const RankView mine = myView();
  Status s = store_->set(fmt::format("view/{}/{}", round, me_.rank), textBytes(mine.toJson()));
  if (!s.ok()) return lostStore(s, me_.rank);
  if (me_.rank != 0) return receiveVerdict(round, mine, report, retry);
  std::vector<std::optional<RankView>> views(static_cast<std::size_t>(me_.size));
  views[0] = mine;
  s = collectViews(*store_, heartbeat_, round, start_ + seconds(timeoutS_), &views);
  if (!s.ok()) return lostStore(s, me_.rank);
  CheckReport merged = mergeViews(me_.size, views, settings());
  *retry = retryOf(round, merged);
  if (retry->empty()) {
    *report = std::move(merged);
    if (onVerdict_) onVerdict_(*report);
  } else {
    COHORT_LOG(kInfo, "linkcheck", "round {}: probing {} link(s) again", round + 1, retry->size());
  }
  s = store_->set(fmt::format("decision/{}", round), textBytes(decisionText(*report, *retry)));
  return s.ok() ? Status::Ok() : lostStore(s, me_.rank);
}

Status LinkCheck::receiveVerdict(int round, const RankView& mine, CheckReport* report,
                                 Pairs* retry) {
  Bytes blob;
  Status s = store_->get(fmt::format("decision/{}", round), &blob,
                         at(start_ + seconds(timeoutS_ + linkS_)));
  if (s.ok()) s = parseDecision(bytesText(blob), report, retry);
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
