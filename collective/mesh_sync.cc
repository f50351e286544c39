// The mesh's synchronisation: barriers on the node-wide counter, the wait
// with its liveness checks, the staged broadcast that waits for its root only,
// and the settling of a call that did not wait for its barrier.
#include <fmt/format.h>
#include <signal.h>

#include <emmintrin.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collective/datatype.h"
#include "collective/mesh.h"
#include "collective/op_history.h"
#include "common/error.h"
#include "common/trace.h"

namespace cohort::collective {

using transport::shm::ControlBlock;
using transport::shm::OpSlot;
using transport::shm::SegmentRef;

namespace {
constexpr auto kLivenessEvery = std::chrono::milliseconds(200);
constexpr int kQuickLooks = 128;  // barrier: pauses before the timed wait
// A rank's `arrive` counter once it left the group (aborted or destroyed): its
// peers fail at their next liveness check instead of waiting for it.
constexpr std::uint64_t kLeft = ~std::uint64_t(0);
}  // namespace

void Mesh::leave() {
  members_[static_cast<std::size_t>(me_)]->block->arrive.store(kLeft, std::memory_order_release);
}

// The comparison comes first: the text is made only for a difference.
Status Mesh::sameCall(int j, std::size_t slot, const std::array<std::uint64_t, 4>& fp,
                      const OpDesc& op, bool owed) const {
  const OpSlot& theirs = members_[static_cast<std::size_t>(j)]->block->op[slot];
  if (std::equal(fp.begin(), fp.end(), theirs.fingerprint)) return Status::Ok();
  std::array<std::uint64_t, 4> tfp;
  std::copy(theirs.fingerprint, theirs.fingerprint + 4, tfp.begin());
  const std::string mine =
      owed ? fmt::format("broadcast #{}, found at its next call, {}", fp[0] >> 8, op.describe())
           : op.describe();
  return makeError(ErrorCode::kMismatch,
                   "mismatched collective between rank {} and rank {}: {} (this rank: {})",
                   members_[static_cast<std::size_t>(me_)]->rank,
                   members_[static_cast<std::size_t>(j)]->rank, fingerprintDiff(fp, tfp), mine);
}

Status Mesh::sameCalls(std::size_t slot, const std::array<std::uint64_t, 4>& fp,
                       const OpDesc& op, bool owed) const {
  for (int j = 0; j < n_; ++j) COHORT_RETURN_IF_ERROR(sameCall(j, slot, fp, op, owed));
  return Status::Ok();
}

Status Mesh::waitForAll(const OpDesc& op, const char* phase, std::uint64_t target,
                        Deadline deadline, const std::atomic<bool>& aborted) {
  ControlBlock* lead = members_[0]->block;
  return waitFor(op, phase, deadline, aborted,
                 [&] { return lead->shared.load(std::memory_order_acquire) >= target; });
}

std::uint64_t Mesh::arrive() {
  ++barriers_;
  const std::uint64_t target = barriers_ * static_cast<std::uint64_t>(n_);
  ControlBlock* lead = members_[0]->block;
  members_[static_cast<std::size_t>(me_)]->block->arrive.store(barriers_, std::memory_order_release);
  // The last to arrive wakes the sleepers, if any: an unconditional notify is
  // one more shared line written by some rank on every barrier.
  if (lead->shared.fetch_add(1, std::memory_order_seq_cst) + 1 == target) {
    lead->sharedWake.notifyIfSleeping();
  }
  return target;
}

Status Mesh::barrier(const OpDesc& op, const char* phase, Deadline deadline,
                     const std::atomic<bool>& aborted) {
  trace::Span span("mesh", phase);
  return waitForAll(op, phase, arrive(), deadline, aborted);
}

template <typename Ready>
Status Mesh::waitFor(const OpDesc& op, const char* phase, Deadline deadline,
                     const std::atomic<bool>& aborted, Ready&& ready) {
  ControlBlock* lead = members_[0]->block;
  // A peer on another processor is usually a few hundred nanoseconds away: look
  // for it before reading any clock (the waits below take two readings).
  if (!crowded_) {
    for (int i = 0; i < kQuickLooks && !ready(); ++i) _mm_pause();
  }
  if (ready()) return Status::Ok();
  for (;;) {
    Deadline slice = Deadline::after(kLivenessEvery);
    if (!deadline.isNever() && deadline.at() < slice.at()) slice = deadline;
    if (lead->sharedWake.waitUntil(ready, slice, waitPolicy_)) return Status::Ok();
    if (aborted.load()) {
      leave();  // peers waiting for this rank fail instead of hanging
      return makeError(ErrorCode::kAborted, "{} aborted on this rank ({})", op.describe(), phase);
    }
    std::string late;
    COHORT_RETURN_IF_ERROR(checkPeers(op, phase, &late));
    noteWait(fmt::format("{} (mesh barrier '{}'): waiting for rank(s) {}", op.describe(), phase,
                         late.empty() ? "?" : late));
    if (deadline.expired()) {
      return makeError(ErrorCode::kTimeout, "{} timed out at step '{}' waiting for rank(s) {}",
                       op.describe(), phase, late.empty() ? "?" : late);
    }
  }
}

Status Mesh::settle(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted) {
  if (owedTarget_ == 0) return Status::Ok();
  const std::uint64_t target = owedTarget_;
  owedTarget_ = 0;
  COHORT_RETURN_IF_ERROR(waitForAll(op, "the previous call's arrival", target, deadline, aborted));
  // Nobody writes that slot again before this rank arrives at this call.
  return sameCalls(owedSlot_, owedFingerprint_, op, /*owed=*/true);
}

// Waits until the root arrived at this rank's `arrival`-th barrier; fails if it
// left the communicator instead (or a member died).
Status Mesh::waitForRoot(const OpDesc& op, std::uint64_t arrival, Deadline deadline,
                         const std::atomic<bool>& aborted) {
  const auto* from = members_[static_cast<std::size_t>(op.root)];
  COHORT_RETURN_IF_ERROR(waitFor(op, "the root's arrival", deadline, aborted, [&] {
    return from->block->arrive.load(std::memory_order_acquire) >= arrival;
  }));
  if (from->block->arrive.load(std::memory_order_acquire) != kLeft) return Status::Ok();
  std::string late;
  COHORT_RETURN_IF_ERROR(checkPeers(op, "the root's arrival", &late));
  return makeError(ErrorCode::kRemoteError,
                   "root rank {} (process {}) left the communicator during {}", from->rank,
                   from->pid, op.describe());
}

// The root's data is in its slot when it arrives: it needs nobody else, and
// the others need only the root. The slot is written again two calls later,
// after this rank's next call settled this one (everyone has read it then).
Status Mesh::stagedBroadcast(const OpDesc& op, Deadline deadline,
                             const std::atomic<bool>& aborted) {
  const std::size_t b = op.count * dataTypeSize(op.type);
  const std::size_t slot = slot_;
  const auto root = static_cast<std::size_t>(op.root);
  if (me_ == op.root && op.output != nullptr) {
    std::memcpy(members_[root]->block->staging[slot], op.output, b);
  }
  const auto fp = announce(op);  // its peers read no buffer reference
  trace::Span span("mesh", "arrival");
  owedTarget_ = arrive();
  owedSlot_ = slot;
  owedFingerprint_ = fp;
  if (me_ == op.root) {
    // Non-roots wait for this arrival, not for the node-wide count.
    members_[0]->block->sharedWake.notifyIfSleeping();
    return Status::Ok();
  }
  COHORT_RETURN_IF_ERROR(waitForRoot(op, barriers_, deadline, aborted));
  if (Status st = sameCall(op.root, slot, fp, op); !st.ok()) {
    owedTarget_ = 0;  // the failure is reported now
    return st;
  }
  if (b > 0) std::memcpy(op.output, members_[root]->block->staging[slot], b);
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
  OpSlot& mine = members_[static_cast<std::size_t>(me_)]->block->op[slot];
  // Only the root's buffer is read (b > 0: the root's `in` is set).
  if (in != nullptr) COHORT_RETURN_IF_ERROR(shm_->refOf(in, &mine.input));
  const auto fp = announce(op);
  trace::Span span("mesh", "arrival");
  const std::uint64_t arrival = barriers_ + 1;
  arrive();
  if (isRoot) {
    members_[0]->block->sharedWake.notifyIfSleeping();  // non-roots wait for this arrival
    // The root's own copy is "done" at once.
    COHORT_RETURN_IF_ERROR(waitForAll(op, "completion", arrive(), deadline, aborted));
    return sameCalls(slot, fp, op);
  }
  COHORT_RETURN_IF_ERROR(waitForRoot(op, arrival, deadline, aborted));
  const auto* from = members_[root];
  Status st = sameCall(op.root, slot, fp, op);
  if (st.ok() && b > 0) std::memcpy(op.output, from->translate(from->block->op[slot].input), b);
  // The root waits for this arrival (also after a mismatch, which it then finds).
  owedTarget_ = arrive();
  owedSlot_ = slot;
  owedFingerprint_ = fp;
  if (!st.ok()) owedTarget_ = 0;
  return st;
}

// A dead or departed member fails the barrier; *late lists the members that have
// not reached it yet.
Status Mesh::checkPeers(const OpDesc& op, const char* phase, std::string* late) const {
  // Deaths first, all of them: a peer that left or died may only have done so
  // because another one died first, and which one was first cannot be told here.
  std::string dead;
  for (int j = 0; j < n_; ++j) {
    const auto* m = members_[static_cast<std::size_t>(j)];
    if (j != me_ && kill(m->pid, 0) != 0 && errno == ESRCH) {
      dead += fmt::format("{}remote rank {} died (process {} is gone)", dead.empty() ? "" : ", ",
                          m->rank, m->pid);
    }
  }
  if (!dead.empty()) {
    return makeError(ErrorCode::kRemoteError, "{} during {} ({})", dead, op.describe(), phase);
  }
  for (int j = 0; j < n_; ++j) {
    const auto* m = members_[static_cast<std::size_t>(j)];
    if (j == me_) continue;
    const std::uint64_t arrived = m->block->arrive.load(std::memory_order_acquire);
    if (arrived == kLeft) {
      return makeError(ErrorCode::kRemoteError,
                       "remote rank {} (process {}) left the communicator (aborted or destroyed) "
                       "during {} ({})",
                       m->rank, m->pid, op.describe(), phase);
    }
    if (arrived < barriers_) *late += (late->empty() ? "" : ", ") + std::to_string(m->rank);
  }
  return Status::Ok();
}

}  // namespace cohort::collective
