// The mesh's synchronisation: barriers on the node-wide counter, the liveness
// checks of its waits (the wait itself is mesh_wait.h), the broadcasts whose
// readers wait for their root only (the eager ring, the pulled copy), the
// settling of a call that did not wait for its barrier, and a leaver's drain.
// The posted calls' ring is mesh_posted.cc.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "collective/datatype.h"
#include "collective/mesh.h"
#include "collective/mesh_wait.h"
#include "collective/op_history.h"
#include "common/error.h"
#include "common/log.h"
#include "common/trace.h"

namespace cohort::collective {

using transport::shm::SegmentRef;

namespace {
// A rank's `arrive` counter once it left the group (failed, aborted or destroyed): its
// peers fail at their next liveness check instead of waiting for it.
constexpr std::uint64_t kLeft = ~std::uint64_t(0);
}  // namespace

void Mesh::leave(transport::shm::Departure why, const std::string& cause) {
  members_[static_cast<std::size_t>(me_)]->markDeparted(why, cause);
  region(me_).arrive.store(kLeft, std::memory_order_release);
}

std::string Mesh::departureText(int j) const {
  using transport::shm::Departure;
  const auto* m = members_[static_cast<std::size_t>(j)];
  switch (m->departure()) {
    case Departure::kAborted: return "aborted its communicator";
    case Departure::kDestroyed: return "destroyed its communicator";
    case Departure::kFailed: {
      const std::string cause = m->departureCause();
      return cause.empty() ? "left the communicator after a failure"
                           : "left the communicator after a failure (" + cause + ")";
    }
    default: return "left the communicator";
  }
}

// One store to this rank's own line per call: nobody reads it but a member's drain().
void Mesh::depart() { region(me_).depart.store(barriers_, std::memory_order_release); }

// The destroying rank waits, rather than keeping its data alive past its communicator:
// the data are in this rank's device memory and control block, which the runtime and
// the transport release with it (and with the process), and peers on the same process
// see the block's memory reused. A peer whose stream runs the calls late (queued
// behind other work, or left to its synchronize) is waited for as long as a
// collective would wait for it.
Status Mesh::drain(Deadline deadline, const std::atomic<bool>& aborted) {
  {
    std::lock_guard<std::mutex> lock(postMu_);
    if (!postFailure_.ok()) return Status::Ok();  // this rank left already
  }
  const std::uint64_t barriers = barriers_, posts = posts_;
  auto owes = [&](int j) {  // member j may still read something of this rank's
    if (j == me_) return false;
    const MeshRegion& b = region(j);
    if (b.arrive.load(std::memory_order_acquire) == kLeft) return false;
    return b.depart.load(std::memory_order_acquire) < barriers ||
           b.finished.load(std::memory_order_acquire) < posts;
  };
  auto ready = [&] {
    for (int j = 0; j < n_; ++j) {
      if (owes(j)) return false;
    }
    return true;
  };
  const auto logAt = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  bool logged = false;
  const int me = members_[static_cast<std::size_t>(me_)]->rank;
  return region(0).sharedWake.waitChecked(
      ready, deadline, waitPolicy_, std::chrono::milliseconds(10), [&]() -> std::optional<Status> {
        std::string late;
        for (int j = 0; j < n_; ++j) {
          const auto* m = members_[static_cast<std::size_t>(j)];
          if (owes(j) && !m->processGone()) {
            late += fmt::format("{}{}", late.empty() ? "" : ", ", m->rank);
          }
        }
        if (late.empty()) return Status::Ok();  // the rest died: nobody is left to read
        if (aborted.load()) {
          return makeError(ErrorCode::kAborted,
                           "rank {}: destroy aborted while rank(s) {} had not finished the calls "
                           "made with this rank",
                           me, late);
        }
        if (deadline.expired()) {
          return makeError(ErrorCode::kTimeout,
                           "rank {}: destroy waited for rank(s) {} to finish the calls made with "
                           "this rank (through call {} and posted call {}), in vain: this rank "
                           "leaves now and their calls with it fail",
                           me, late, barriers, posts);
        }
        if (!logged && std::chrono::steady_clock::now() >= logAt) {
          logged = true;
          COHORT_LOG(kWarn, "collective",
                     "destroy of rank {} waits for rank(s) {} to finish the calls made with this "
                     "rank (they read its data; at most COHORT_EXEC_TIMEOUT)",
                     me, late);
        }
        return std::nullopt;
      });
}

// The comparison comes first: the text is made only for a difference.
Status Mesh::sameCall(int j, std::size_t slot, const std::array<std::uint64_t, 4>& fp,
                      const OpDesc& op, bool owed) const {
  const OpSlot& theirs = region(j).op[slot];
  if (std::equal(fp.begin(), fp.end(), theirs.fingerprint)) return Status::Ok();
  return mismatch(j, fp, theirs.fingerprint, op, owed);
}

Status Mesh::mismatch(int j, const std::array<std::uint64_t, 4>& fp, const std::uint64_t* theirs,
                      const OpDesc& op, bool owed) const {
  std::array<std::uint64_t, 4> tfp;
  std::copy(theirs, theirs + 4, tfp.begin());
  const int them = members_[static_cast<std::size_t>(j)]->rank;
  const std::string mine =
      owed ? fmt::format("broadcast #{}, found at its next call, {}", fp[0] >> 8, op.describe())
           : op.describe();
  // A slot that still names an earlier call: rank j's call here announced
  // itself elsewhere (an eager broadcast, in the next ring slot's place) or it
  // made none yet.
  if ((tfp[0] >> 8) < (fp[0] >> 8)) {
    const std::uint64_t* eager = region(j).eagerFingerprint[eagerCalls_ % kEagerSlots];
    if ((eager[0] >> 8) == (fp[0] >> 8)) std::copy(eager, eager + 4, tfp.begin());
  }
  const std::string diff = (tfp[0] >> 8) < (fp[0] >> 8)
                               ? fmt::format("rank {} has not made this call", them)
                               : fingerprintDiff(fp, tfp);
  return mismatchError(members_[static_cast<std::size_t>(me_)]->rank, them, diff, mine);
}

Status Mesh::sameCalls(std::size_t slot, const std::array<std::uint64_t, 4>& fp, const OpDesc& op,
                       bool owed) const {
  for (int j = 0; j < n_; ++j) COHORT_RETURN_IF_ERROR(sameCall(j, slot, fp, op, owed));
  return Status::Ok();
}

Status Mesh::waitForAll(const OpDesc& op, const char* phase, std::uint64_t target,
                        Deadline deadline, const std::atomic<bool>& aborted) {
  MeshRegion& lead = region(0);
  COHORT_RETURN_IF_ERROR(waitFor(op, phase, deadline, aborted, [&] {
    return lead.shared.load(std::memory_order_acquire) >= target;
  }));
  if constexpr (kProtocolChecks) {
    checkBarrierReached(members_, target / static_cast<std::uint64_t>(n_),
                        members_[static_cast<std::size_t>(me_)]->rank);
  }
  return Status::Ok();
}

std::uint64_t Mesh::arrive() {
  ++barriers_;
  const std::uint64_t target = barriers_ * static_cast<std::uint64_t>(n_);
  MeshRegion& lead = region(0);
  region(me_).arrive.store(barriers_, std::memory_order_release);
  // The last to arrive wakes the sleepers, if any: an unconditional notify is
  // one more shared line written by some rank on every barrier.
  if (lead.shared.fetch_add(1, std::memory_order_seq_cst) + 1 == target) {
    lead.sharedWake.notifyIfSleeping();
  }
  return target;
}

Status Mesh::settle(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted) {
  if (owedTarget_ == 0) return Status::Ok();
  const std::uint64_t target = owedTarget_;
  const bool eager = owedEager_;
  owedTarget_ = 0;
  owedEager_ = false;
  // After eager broadcasts too, nobody is past the owed barrier (a root that ran
  // ahead waits here), so the node-wide count means everyone arrived there.
  COHORT_RETURN_IF_ERROR(waitForAll(op, "the previous call's arrival", target, deadline, aborted));
  if (eager) return Status::Ok();  // its readers checked it against the root's slot
  // Nobody writes that slot again before this rank arrives at this call.
  return sameCalls(owedSlot_, owedFingerprint_, op, /*owed=*/true);
}

// Waits until the root arrived at this rank's `arrival`-th barrier; fails if it
// left the communicator instead (or a member died).
Status Mesh::waitForRoot(const OpDesc& op, std::uint64_t arrival, Deadline deadline,
                         const std::atomic<bool>& aborted) {
  const auto* from = members_[static_cast<std::size_t>(op.root)];
  const std::atomic<std::uint64_t>& rootArrived = region(op.root).arrive;
  COHORT_RETURN_IF_ERROR(waitFor(op, "the root's arrival", deadline, aborted, [&] {
    return rootArrived.load(std::memory_order_acquire) >= arrival;
  }));
  if (rootArrived.load(std::memory_order_acquire) != kLeft) return Status::Ok();
  COHORT_RETURN_IF_ERROR(crossedCall(op, false));  // it left having posted this call instead
  std::string late;
  COHORT_RETURN_IF_ERROR(checkPeers(op, "the root's arrival", &late));
  return makeError(ErrorCode::kRemoteError, "root rank {} (process {}) {} during {}", from->rank,
                   from->pid, departureText(op.root), op.describe());
}

// A small broadcast's root needs nobody, its readers only the root. The root
// leaves each call's data in the next slot of a ring and goes on until it comes
// back to a slot that somebody has not read yet; a reader waits for the root's
// arrival only. With more ranks than processors, a root that waited for its
// readers would give up its processor at every call; here a rank that holds one
// makes several calls in a row. Consecutive eager calls do not settle (their
// readers check the root's call in its slot); any other call settles the last
// one first (collective/TUNING.md has the figures).
Status Mesh::eagerBroadcast(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted) {
  if (!owedEager_) COHORT_RETURN_IF_ERROR(settle(op, deadline, aborted));
  const std::size_t b = op.count * dataTypeSize(op.type);
  const std::size_t i = eagerCalls_++ % kEagerSlots;
  MeshRegion& lead = region(0);
  EagerSlot& ring = lead.eager[i];
  // Not announced in this rank's operation slot: a root running ahead would
  // overwrite the slot of a call that a slower rank still checks. A rank that
  // made another call finds that slot stale, and this call by ring slot.
  const auto fp = op.fingerprint();
  storeFingerprint(region(me_).eagerFingerprint[i], fp);
  if (me_ == op.root) {
    // Everyone arrived somewhere past the call that last wrote the slot: read.
    const std::uint64_t last = eagerBarrier_[i];
    // (A rank that left is never ready: the wait's liveness check names it.)
    COHORT_RETURN_IF_ERROR(waitFor(op, "a free broadcast slot", deadline, aborted, [&] {
      for (int j = 0; j < n_; ++j) {
        const std::uint64_t at = region(j).arrive.load(std::memory_order_acquire);
        if (j != me_ && (at <= last || at == kLeft)) return false;
      }
      return true;
    }));
    if (b > 0) std::memcpy(ring.data, op.output, b);
    ring.barrier = barriers_ + 1;
    storeFingerprint(ring.fingerprint, fp);
  }
  owedTarget_ = arrive();  // publishes the slot (release)
  owedEager_ = true;
  eagerBarrier_[i] = barriers_;
  // Readers wait for the root's arrival, a root for its readers'.
  lead.sharedWake.notifyIfSleeping();
  if (me_ == op.root) return Status::Ok();
  COHORT_RETURN_IF_ERROR(waitForRoot(op, barriers_, deadline, aborted));
  if (ring.barrier != barriers_ || !std::equal(fp.begin(), fp.end(), ring.fingerprint)) {
    owedTarget_ = 0;  // the failure is reported now
    owedEager_ = false;
    // Nobody else compares with this rank: leaving is how the root and the
    // others learn, at their next wait for it.
    leave();
    // Either the root's broadcast here differs, or it made another call (whose
    // arrival is the one awaited: it is not ahead) that its slot describes.
    Status s = ring.barrier == barriers_ ? mismatch(op.root, fp, ring.fingerprint, op, false)
                                         : sameCall(op.root, slot_, fp, op);
    return s.ok() ? makeError(ErrorCode::kMismatch,
                              "mismatched collective: root rank {} did not broadcast {} bytes "
                              "like this rank ({})",
                              members_[static_cast<std::size_t>(op.root)]->rank, b, op.describe())
                  : s;
  }
  if (b > 0) std::memcpy(op.output, ring.data, b);
  return Status::Ok();
}

Status Mesh::pulledBroadcast(const OpDesc& op, Deadline deadline,
                             const std::atomic<bool>& aborted) {
  COHORT_RETURN_IF_ERROR(settle(op, deadline, aborted));
  const std::size_t b = op.count * dataTypeSize(op.type);
  const std::size_t slot = slot_;
  const auto root = static_cast<std::size_t>(op.root);
  const bool isRoot = me_ == op.root;
  const void* in = isRoot ? op.output : nullptr;
  void* unused = nullptr;
  if (isRoot) COHORT_RETURN_IF_ERROR(hostFallback(op, b, 0, &in, &unused));
  OpSlot& mine = region(me_).op[slot];
  // Only the root's buffer is read (b > 0: the root's `in` is set).
  if (in != nullptr) mine.input = refs_.inRef;  // found by hostFallback
  const auto fp = announce(op);
  trace::Span span("mesh", "arrival");
  const std::uint64_t arrival = barriers_ + 1;
  arrive();
  if (isRoot) {
    region(0).sharedWake.notifyIfSleeping();  // non-roots wait for this arrival
    // The root's own copy is "done" at once.
    COHORT_RETURN_IF_ERROR(waitForAll(op, "completion", arrive(), deadline, aborted));
    return sameCalls(slot, fp, op);
  }
  COHORT_RETURN_IF_ERROR(waitForRoot(op, arrival, deadline, aborted));
  const auto* from = members_[root];
  Status st = sameCall(op.root, slot, fp, op);
  if (st.ok() && b > 0) std::memcpy(op.output, from->translate(region(op.root).op[slot].input), b);
  // The root waits for this arrival (also after a mismatch, which it then finds).
  owedTarget_ = arrive();
  owedSlot_ = slot;
  owedFingerprint_ = fp;
  if (!st.ok()) owedTarget_ = 0;
  return st;
}

// A dead or departed member fails the barrier; *late lists the members that have
// not reached it yet.
Status Mesh::checkPeers(const OpDesc& op, const char* phase, std::string* late,
                        const std::function<bool(int)>& behind) const {
  // Deaths first, all of them: a peer that left or died may only have done so
  // because another one died first, and which one was first cannot be told here.
  std::string dead;
  for (int j = 0; j < n_; ++j) {
    const auto* m = members_[static_cast<std::size_t>(j)];
    if (j != me_ && m->processGone()) {
      // Its block outlives it here: a cause it left is still there to name.
      const std::string cause = m->departureCause();
      dead += fmt::format("{}remote rank {} died (process {} is gone){}", dead.empty() ? "" : ", ",
                          m->rank, m->pid, cause.empty() ? "" : ", having failed: " + cause);
    }
  }
  if (!dead.empty()) {
    return makeError(ErrorCode::kRemoteError, "{} during {} ({})", dead, op.describe(), phase);
  }
  for (int j = 0; j < n_; ++j) {
    const auto* m = members_[static_cast<std::size_t>(j)];
    if (j == me_) continue;
    const std::uint64_t arrived = region(j).arrive.load(std::memory_order_acquire);
    if (arrived == kLeft) {
      return makeError(ErrorCode::kRemoteError, "remote rank {} (process {}) {} during {} ({})",
                       m->rank, m->pid, departureText(j), op.describe(), phase);
    }
    if (behind ? behind(j) : arrived < barriers_) {
      *late += (late->empty() ? "" : ", ") + std::to_string(m->rank);
    }
  }
  return Status::Ok();
}

}  // namespace cohort::collective
