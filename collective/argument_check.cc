#include "collective/argument_check.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"

namespace cohort::collective {

void addNewPeers(const std::vector<Step>& round, ArgumentCheck* check) {
  for (const Step& s : round) {
    if (s.peer >= 0 &&
        std::find(check->peers.begin(), check->peers.end(), s.peer) == check->peers.end()) {
      check->peers.push_back(s.peer);
    }
  }
}

Status postCheckFrom(std::size_t from, const std::vector<transport::Connection*>& conns,
                     ArgumentCheck* check) {
  check->theirs.resize(check->peers.size());
  for (std::size_t i = from; i < check->peers.size(); ++i) {
    transport::Connection* c = conns[static_cast<std::size_t>(check->peers[i])];
    COHORT_RETURN_IF_ERROR(c->postSend(check->mine.data(), sizeof(check->mine)));
    check->sendNumber.push_back(c->sendsPosted());
    COHORT_RETURN_IF_ERROR(c->postRecv(check->theirs[i].data(), sizeof(check->mine)));
    check->conns.push_back(c);
    check->recvNumber.push_back(c->recvsPosted());
  }
  return Status::Ok();
}

Status postCheck(const Schedule& schedule, const std::vector<transport::Connection*>& conns,
                 const OpDesc& op, ArgumentCheck* check) {
  for (const auto& round : schedule.rounds) addNewPeers(round, check);
  check->mine = op.fingerprint();
  return postCheckFrom(0, conns, check);
}

int firstDifference(const ArgumentCheck& check) {
  for (std::size_t i = 0; i < check.peers.size(); ++i) {
    if (check.conns[i]->recvsCompleted() >= check.recvNumber[i] && check.theirs[i] != check.mine) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

namespace {

// The fingerprints of a check that failed, for up to kFingerprintGrace: this
// rank's own still queued (a peer must see them before the links end, or it can
// only relay this rank's error instead of naming its own difference), and, after
// a peer's link failed (that peer found a difference and ended it), the others'
// still in flight, so that this rank names its own difference. Returns when none
// is missing or one received differs (`received`), or at once when the call is
// being aborted; a link that fails too is left out.
constexpr auto kFingerprintGrace = std::chrono::milliseconds(200);
void settleFingerprints(const ArgumentCheck& check, bool received, Deadline deadline,
                        const std::atomic<bool>* abort) {
  Deadline grace = Deadline::after(kFingerprintGrace);
  if (!deadline.isNever() && deadline.at() < grace.at()) grace = deadline;
  const std::size_t n = check.conns.size();
  auto pending = [&](std::size_t i) {
    const transport::Connection* c = check.conns[i];
    return received ? c->recvsCompleted() < check.recvNumber[i]
                    : c->sendsCompleted() < check.sendNumber[i];
  };
  std::vector<bool> gone(n, false);
  std::vector<transport::Connection*> missing;
  auto settled = [&] {
    if (received && firstDifference(check) >= 0) return true;
    for (std::size_t i = 0; i < n; ++i) {
      if (!gone[i] && pending(i)) return false;
    }
    return true;
  };
  transport::WaitControl control;
  control.abort = abort;
  control.stopEarly = settled;
  for (;;) {
    if (settled()) return;
    missing.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (!gone[i] && pending(i)) missing.push_back(check.conns[i]);
    }
    const Status s = transport::waitIdle(missing.data(), missing.size(), grace,
                                         "the fingerprints of a failed argument check", control);
    if (s.ok() || s.code() == ErrorCode::kTimeout || s.code() == ErrorCode::kAborted) return;
    // A link failed: the others' fingerprints are still awaited.
    bool more = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (!gone[i] && pending(i) && !check.conns[i]->progress().ok()) {
        gone[i] = true;
        more = true;
      }
    }
    if (!more) return;
  }
}

Status compareCheck(const ArgumentCheck& check, int rank, const OpDesc& op) {
  const int i = firstDifference(check);
  if (i < 0) return Status::Ok();
  const auto k = static_cast<std::size_t>(i);
  return mismatchError(rank, check.peers[k], fingerprintDiff(check.mine, check.theirs[k]),
                       op.describe());
}

}  // namespace

Status checkResult(const ArgumentCheck& check, const Status& waited, int rank, const OpDesc& op,
                   Deadline deadline, const std::atomic<bool>* abort) {
  if (!waited.ok() && firstDifference(check) < 0) {
    settleFingerprints(check, /*received=*/true, deadline, abort);
  }
  Status s = compareCheck(check, rank, op);
  if (!s.ok()) settleFingerprints(check, /*received=*/false, deadline, abort);
  return s;
}

}  // namespace cohort::collective
