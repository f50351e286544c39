// Surviving failed ranks: the survivors agree on who failed, then make a communicator
// of their own (Communicator::failedRanks, Communicator::shrink). The agreement goes
// through the store. Each survivor joins it with what it knows of the other ranks
// (its node's ranks: alive, or their process ended; any rank: aborted), and waits
// until every rank has joined or is known alive or failed through some survivor's
// view (or, for a silent one, until the exec timeout passed). The first survivor
// whose view is complete claims the decision and writes it; every survivor reads
// that one decision, so the answer is the same everywhere, and a rank that joins
// after it sees whether it was excluded. A failed operation joins at once
// (concludeOp), which makes its error name the agreed ranks.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "collective/comm_impl.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/tcp_store.h"

namespace cohort {

namespace {

// How long a rank that neither joins nor is known alive or failed may take, when
// the communicator's exec timeout is "never".
constexpr long kSilentRankLimitMs = 60'000;
// How long a claimed decision may take to be written.
constexpr auto kDecisionMargin = std::chrono::seconds(5);
// One store request's reply (a cut link must not hold a failed operation's error).
constexpr auto kStoreReplyWait = std::chrono::seconds(1);
// A store that does not answer may only be slow (a loaded machine); one silent
// this long is taken for gone (its machine vanished), as one that refuses is.
constexpr auto kStoreSilenceLimit = std::chrono::seconds(5);
// Looking again at the ranks not accounted for: soon, then less often (every
// survivor looks, and the store serves them all).
constexpr auto kFirstPoll = std::chrono::milliseconds(1);
constexpr auto kLastPoll = std::chrono::milliseconds(32);

// What a survivor knows of a rank; its view, one byte per rank, is its record in
// the store.
enum : char { kUnknown = 0, kJoined = 1, kFailed = 2, kAlive = 3 };

}  // namespace

// Whether the peer's launcher noted in the store that its process ended (cohortrun
// does, for its own machine's ranks): the way to know it of another machine's.
bool Communicator::Impl::launcherSawEnd(const transport::PeerInfo& peer) const {
  bool noted = false;
  return store_->check(transport::endedProcessKey(peer.hostId, peer.pid), &noted).ok() && noted;
}

namespace {

transport::Bytes encodeRanks(const std::vector<int>& ranks) {
  transport::Bytes out = transport::encodeInt(static_cast<std::int64_t>(ranks.size()));
  for (int r : ranks) {
    const transport::Bytes one = transport::encodeInt(r);
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

bool decodeRanks(const transport::Bytes& in, int size, std::vector<int>* ranks) {
  constexpr std::size_t kWord = 8;
  if (in.size() < kWord) return false;
  const std::int64_t n = transport::decodeInt(transport::Bytes(in.begin(), in.begin() + kWord));
  if (n < 0 || n > size || in.size() != kWord * static_cast<std::size_t>(n + 1)) return false;
  ranks->clear();
  for (std::int64_t i = 1; i <= n; ++i) {
    const auto at = in.begin() + static_cast<std::ptrdiff_t>(kWord * static_cast<std::size_t>(i));
    const std::int64_t r = transport::decodeInt(transport::Bytes(at, at + kWord));
    if (r < 0 || r >= size) return false;
    ranks->push_back(static_cast<int>(r));
  }
  return true;
}

}  // namespace

namespace {

// The standby store servers of this process, one per address and job token, shared
// by every communicator that uses them (weakly held here: the last one to go
// stops it, so no thread outlives the communicators).
std::mutex gStandbyMu;
std::map<std::pair<std::string, std::string>, std::weak_ptr<transport::TcpStoreServer>> gStandby;

// How long a survivor tries one rank's standby store before the next.
constexpr auto kStandbyConnectWait = std::chrono::milliseconds(500);

}  // namespace

std::string Communicator::Impl::standbyAddress(const transport::PeerInfo& peer) {
  return peer.address.empty() ? "127.0.0.1" : peer.address;  // no interface: this node only
}

Status Communicator::Impl::startStandby(const std::string& address, int* port) {
  const auto key = std::make_pair(address, token_.hex());
  std::lock_guard<std::mutex> lock(gStandbyMu);
  for (auto it = gStandby.begin(); it != gStandby.end();) {
    it = it->second.expired() ? gStandby.erase(it) : std::next(it);
  }
  standby_ = gStandby[key].lock();
  if (standby_ == nullptr) {
    transport::StoreServerOptions server;
    server.bindAddress = address;
    server.token = token_;
    COHORT_RETURN_IF_ERROR(transport::TcpStoreServer::start(server, &standby_));
    gStandby[key] = standby_;
  }
  *port = standby_->port();
  return Status::Ok();
}

bool Communicator::Impl::useStandbyStore() {
  // Every survivor walks the ranks in order and takes the first standby that
  // answers: the lowest live rank's, the same for all of them.
  for (int q = 0; q < size; ++q) {
    const transport::PeerInfo& peer = peers_[static_cast<std::size_t>(q)];
    if (peer.standbyPort <= 0 || nodePeerEnded(q)) continue;
    std::shared_ptr<transport::Store> standby;
    if (transport::connectTcpStore(standbyAddress(peer), peer.standbyPort, token_, rank,
                                   Deadline::after(kStandbyConnectWait), &standby)
            .ok()) {
      COHORT_LOG(kWarn, "collective",
                 "rank {}: the job's store does not answer; the survivors go on with rank {}'s "
                 "standby store ({}:{})",
                 rank, q, standbyAddress(peer), peer.standbyPort);
      store_ = std::move(standby);
      known_.clear();  // a new store: join again
      storeSilence_ = Deadline::never();
      return true;
    }
  }
  return false;
}

char Communicator::Impl::lookAt(int q) const {
  const transport::PeerInfo& self = peers_[static_cast<std::size_t>(rank)];
  const transport::PeerInfo& peer = peers_[static_cast<std::size_t>(q)];
  if (q == rank) return kJoined;
  if (nodePeerEnded(q) || leftByAbort(q) || launcherSawEnd(peer)) return kFailed;
  // A process of this node that lives, and did not abort, is a survivor whether or
  // not it has called yet (ranks as threads share this process).
  return peer.sameNode(self) ? kAlive : kUnknown;
}

Status Communicator::Impl::agreeOnFailures(std::vector<int>* failed, Deadline by) {
  std::lock_guard<std::mutex> lock(agreeMu_);
  if (agreedFailed_) {
    *failed = *agreedFailed_;
    return Status::Ok();
  }
  Status s = agreeOnce(failed, by);
  // The store lived in a failed rank's process (a torchrun-style job's is rank
  // 0's, a root info's its maker's): once, the survivors move to a standby.
  if (s.code() == ErrorCode::kUnavailable && !usingStandby_ && !by.expired()) {
    usingStandby_ = useStandbyStore();
    if (usingStandby_) s = agreeOnce(failed, by);
  }
  return s;
}

Status Communicator::Impl::agreeOnce(std::vector<int>* failed, Deadline by) {
  const std::string base = prefix + "/shrink";
  auto storeGone = [&](const Status& s) {
    return makeError(ErrorCode::kUnavailable,
                     "rank {}: the survivors cannot agree on the failed ranks: the store does "
                     "not answer ({}); it may have lived in a failed rank's process or on a "
                     "machine that is gone",
                     rank, s.message());
  };
  auto reply = [&] { return Deadline::earlier(Deadline::after(kStoreReplyWait), by); };
  // No answer (kUnavailable) reads as "not yet" (kTimeout) until the silence has
  // lasted kStoreSilenceLimit; any answer ends the silence.
  auto quiet = [&](Status s) {
    if (s.code() != ErrorCode::kUnavailable) {
      storeSilence_ = Deadline::never();
      return s;
    }
    if (storeSilence_.isNever()) storeSilence_ = Deadline::after(kStoreSilenceLimit);
    return storeSilence_.expired() ? s : Status(ErrorCode::kTimeout, s.message());
  };
  if (known_.empty()) {
    const long limitMs = execTimeoutMs() > 0 ? execTimeoutMs() : kSilentRankLimitMs;
    silentLimit_ = Deadline::after(std::chrono::milliseconds(limitMs));
    known_.assign(static_cast<std::size_t>(size), kUnknown);
    transport::Bytes view(static_cast<std::size_t>(size));
    for (int q = 0; q < size; ++q) {
      known_[static_cast<std::size_t>(q)] = lookAt(q);
      view[static_cast<std::size_t>(q)] =
          static_cast<std::uint8_t>(known_[static_cast<std::size_t>(q)]);
    }
    Status s;
    do {
      s = quiet(store_->setBefore(fmt::format("{}/joined/{}", base, rank), view, reply()));
    } while (s.code() == ErrorCode::kTimeout && !by.expired());
    if (!s.ok()) {
      known_.clear();
      return storeGone(s);
    }
  }
  transport::Bytes decision;
  auto poll = kFirstPoll;
  for (;;) {
    Status s = quiet(store_->peek(base + "/decision", &decision, reply()));
    if (s.ok()) break;
    if (s.code() != ErrorCode::kTimeout) return storeGone(s);
    bool open = false;
    for (int q = 0; q < size; ++q) {
      char& k = known_[static_cast<std::size_t>(q)];
      if (k == kJoined || k == kFailed) continue;  // a failed rank joins no more
      transport::Bytes view;
      s = quiet(store_->peek(fmt::format("{}/joined/{}", base, q), &view, reply()));
      if (s.ok() && view.size() == static_cast<std::size_t>(size)) {
        k = kJoined;
        // What a survivor saw of its node's ranks: failed wins over alive (it may
        // have died since), a rank that joined stays joined.
        for (int o = 0; o < size; ++o) {
          char& mine = known_[static_cast<std::size_t>(o)];
          const char theirs = static_cast<char>(view[static_cast<std::size_t>(o)]);
          if ((mine == kUnknown && theirs != kJoined) || (mine == kAlive && theirs == kFailed)) {
            mine = theirs;
          }
        }
        continue;
      }
      if (!s.ok() && s.code() != ErrorCode::kTimeout) return storeGone(s);
      if (k == kUnknown) k = lookAt(q);
    }
    for (char k : known_) open = open || k == kUnknown;
    if (!open || silentLimit_.expired()) {
      std::int64_t claim = 0;
      s = store_->add(base + "/claim", 1, &claim);
      if (!s.ok()) return storeGone(s);
      if (claim == 1) {
        std::vector<int> decided;
        for (int q = 0; q < size; ++q) {
          const char k = known_[static_cast<std::size_t>(q)];
          if (k != kJoined && k != kAlive) decided.push_back(q);
        }
        decision = encodeRanks(decided);
        s = store_->setBefore(base + "/decision", decision, Deadline::after(kStoreReplyWait));
        if (!s.ok()) return storeGone(s);
        break;
      }
      // Another survivor claimed it: its decision comes at once, unless it failed.
      s = store_->get(base + "/decision", &decision,
                      Deadline::earlier(Deadline::after(kDecisionMargin), by));
      if (s.ok()) break;
      if (s.code() != ErrorCode::kTimeout) return storeGone(s);
      return makeError(ErrorCode::kTimeout,
                       "rank {}: the decision on the failed ranks did not come (the rank "
                       "deciding may have failed meanwhile)",
                       rank);
    }
    if (by.expired()) {
      std::string unknown;
      for (int q = 0; q < size; ++q) {
        if (known_[static_cast<std::size_t>(q)] == kUnknown) {
          unknown += fmt::format("{}{}", unknown.empty() ? "" : ", ", q);
        }
      }
      return makeError(ErrorCode::kTimeout,
                       "rank {}: no agreement on the failed ranks yet: rank(s) {} neither "
                       "joined nor are known to have failed",
                       rank, unknown);
    }
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, kLastPoll);
  }
  std::vector<int> decided;
  if (!decodeRanks(decision, size, &decided)) {
    return makeError(ErrorCode::kInternal,
                     "rank {}: the decision on the failed ranks is malformed ({} bytes)", rank,
                     decision.size());
  }
  if (std::find(decided.begin(), decided.end(), rank) != decided.end()) {
    return makeError(ErrorCode::kRemoteError,
                     "rank {} is among the failed ranks the survivors agreed on: it joined the "
                     "agreement after they had decided without it",
                     rank);
  }
  agreedFailed_ = decided;
  *failed = std::move(decided);
  return Status::Ok();
}

Status Communicator::Impl::createSurvivors(const std::vector<int>& failed,
                                           std::unique_ptr<Impl>* out) {
  int newRank = -1, newSize = 0;
  for (int r = 0; r < size; ++r) {
    if (std::find(failed.begin(), failed.end(), r) != failed.end()) continue;
    if (r == rank) newRank = newSize;
    ++newSize;
  }
  return create(store_, prefix + "/shrink/comm", token_, newRank, newSize, device, options, out);
}

Status Communicator::failedRanks(std::vector<int>* ranks) {
  if (ranks == nullptr) {
    return recordError(Status(ErrorCode::kInvalidArgument, "failedRanks: ranks is null"));
  }
  return recordError(impl_->agreeOnFailures(ranks, Deadline::never()));
}

Status Communicator::shrink(std::unique_ptr<Communicator>* out) {
  if (out == nullptr)
    return recordError(Status(ErrorCode::kInvalidArgument, "shrink: out is null"));
  std::vector<int> failed;
  COHORT_RETURN_IF_ERROR(recordError(impl_->agreeOnFailures(&failed, Deadline::never())));
  std::unique_ptr<Impl> impl;
  COHORT_RETURN_IF_ERROR(recordError(impl_->createSurvivors(failed, &impl)));
  out->reset(new Communicator(std::move(impl)));
  return Status::Ok();
}

}  // namespace cohort
