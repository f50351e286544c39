// Surviving failed ranks: the survivors agree on who failed, then make a communicator
// of their own (Communicator::failedRanks, Communicator::shrink). The agreement goes
// through the store: each survivor marks itself joined; the first to join decides,
// once every rank has joined or is proven gone (or the exec timeout passed for the
// silent ones), and writes the decision every survivor then reads. One decider and
// one written decision make the answer the same on every survivor, and a rank that
// joins after it sees that it was excluded.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "collective/comm_impl.h"
#include "common/error.h"
#include "common/process.h"

namespace cohort {

namespace {

// How long a rank that neither joins nor is proven gone may take, when the
// communicator's exec timeout is "never".
constexpr long kSilentRankLimitMs = 60'000;
// The decision is written at most that long after the first survivor joined; the
// others wait a little longer for it.
constexpr auto kDecisionMargin = std::chrono::seconds(5);
constexpr auto kPoll = std::chrono::milliseconds(1);

enum : char { kUnknown = 0, kJoined = 1, kFailed = 2 };

// Whether `peer`'s process is known to have ended: only a process of this node
// (and not this one: ranks as threads share it) can be looked at.
bool processGone(const transport::PeerInfo& self, const transport::PeerInfo& peer) {
  if (!peer.sameNode(self) || peer.pid <= 0 || peer.pid == self.pid) return false;
  return processEnded(peer.pid);
}

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

Status Communicator::Impl::agreeOnFailures(std::vector<int>* failed) {
  if (agreedFailed_) {
    *failed = *agreedFailed_;
    return Status::Ok();
  }
  const std::string base = prefix + "/shrink";
  const long limitMs = execTimeoutMs() > 0 ? execTimeoutMs() : kSilentRankLimitMs;
  auto storeGone = [&](const Status& s) {
    return makeError(ErrorCode::kUnavailable,
                     "rank {}: the survivors cannot agree on the failed ranks: the store does "
                     "not answer ({}); it may have lived in a failed rank's process",
                     rank, s.message());
  };
  Status s = store_->set(fmt::format("{}/joined/{}", base, rank), transport::encodeInt(1));
  if (!s.ok()) return storeGone(s);
  std::int64_t order = 0;
  s = store_->add(base + "/decider", 1, &order);
  if (!s.ok()) return storeGone(s);
  if (order == 1) {
    std::vector<char> known(static_cast<std::size_t>(size), kUnknown);
    known[static_cast<std::size_t>(rank)] = kJoined;
    const Deadline limit = Deadline::after(std::chrono::milliseconds(limitMs));
    const transport::PeerInfo& self = peers_[static_cast<std::size_t>(rank)];
    for (;;) {
      bool open = false;
      for (int q = 0; q < size; ++q) {
        char& k = known[static_cast<std::size_t>(q)];
        if (k != kUnknown) continue;
        bool joined = false;
        s = store_->check(fmt::format("{}/joined/{}", base, q), &joined);
        if (!s.ok()) return storeGone(s);
        if (joined) {
          k = kJoined;
        } else if (processGone(self, peers_[static_cast<std::size_t>(q)]) || leftByAbort(q) ||
                   launcherSawEnd(peers_[static_cast<std::size_t>(q)])) {
          k = kFailed;
        } else {
          open = true;
        }
      }
      if (!open || limit.expired()) break;
      std::this_thread::sleep_for(kPoll);
    }
    std::vector<int> decided;
    for (int q = 0; q < size; ++q) {
      if (known[static_cast<std::size_t>(q)] != kJoined) decided.push_back(q);
    }
    s = store_->set(base + "/decision", encodeRanks(decided));
    if (!s.ok()) return storeGone(s);
  }
  transport::Bytes decision;
  s = store_->get(base + "/decision", &decision,
                  Deadline::after(std::chrono::milliseconds(limitMs) + kDecisionMargin));
  if (s.code() == ErrorCode::kTimeout) {
    return makeError(ErrorCode::kTimeout,
                     "rank {}: no decision on the failed ranks came within {} ms (the rank "
                     "deciding may have failed meanwhile)",
                     rank, limitMs);
  }
  if (!s.ok()) return storeGone(s);
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
  return recordError(impl_->agreeOnFailures(ranks));
}

Status Communicator::shrink(std::unique_ptr<Communicator>* out) {
  if (out == nullptr)
    return recordError(Status(ErrorCode::kInvalidArgument, "shrink: out is null"));
  std::vector<int> failed;
  COHORT_RETURN_IF_ERROR(recordError(impl_->agreeOnFailures(&failed)));
  std::unique_ptr<Impl> impl;
  COHORT_RETURN_IF_ERROR(recordError(impl_->createSurvivors(failed, &impl)));
  out->reset(new Communicator(std::move(impl)));
  return Status::Ok();
}

}  // namespace cohort
