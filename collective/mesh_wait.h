// The mesh's one wait (Mesh::waitFor), for the files that wait on peers:
// mesh_sync.cc and mesh_posted.cc. A member template (its readiness test is each
// caller's lambda), so its definition is here; private to collective/.
#pragma once

#include <fmt/format.h>

#include <emmintrin.h>

#include <chrono>
#include <optional>
#include <string>

#include "collective/mesh.h"
#include "collective/op_history.h"
#include "common/error.h"

namespace cohort::collective {

/// How often a waiting rank looks whether a member died or left.
inline constexpr auto kLivenessEvery = std::chrono::milliseconds(200);

template <typename Ready>
Status Mesh::waitFor(const OpDesc& op, const char* phase, Deadline deadline,
                     const std::atomic<bool>& aborted, Ready&& ready, bool posted,
                     const std::function<bool(int)>& behind) {
  MeshRegion& lead = region(0);
  // A peer on another processor is usually a few hundred nanoseconds away: look
  // for it before reading any clock (the waits below take two readings).
  for (int i = 0; i < tuning_.meshQuickLooks && !ready(); ++i) _mm_pause();
  if (ready()) return Status::Ok();
  auto between = [&]() -> std::optional<Status> {
    if (aborted.load()) {
      leave(transport::shm::Departure::kAborted);  // peers waiting for it fail, not hang
      return makeError(ErrorCode::kAborted, "{} aborted on this rank ({})", op.describe(), phase);
    }
    // A peer that made another call is the cause when it also left since.
    COHORT_RETURN_IF_ERROR(crossedCall(op, posted));
    std::string late;
    COHORT_RETURN_IF_ERROR(checkPeers(op, phase, &late, behind));
    noteWait(fmt::format("{} (mesh barrier '{}'): waiting for rank(s) {}", op.describe(), phase,
                         late.empty() ? "?" : late));
    if (deadline.expired()) {
      return makeError(ErrorCode::kTimeout, "{} timed out at step '{}' waiting for rank(s) {}",
                       op.describe(), phase, late.empty() ? "?" : late);
    }
    return std::nullopt;
  };
  // A member that leaves (Mesh::leave counts it) ends the wait at once, and the
  // liveness check names it, instead of the next periodic one.
  bool left = false;
  auto readyOrLeft = [&] {
    if (ready()) return true;
    left = lead.departures.load(std::memory_order_acquire) != 0;
    return left;
  };
  Status s = lead.sharedWake.waitChecked(readyOrLeft, deadline, waitPolicy_, kLivenessEvery, between);
  if (!s.ok() || !left || ready()) return s;
  // A member that left after it arrived with other arguments (it found the
  // mismatch first): the others still arrive, as the wait's condition counts
  // it, and get what they wait for; then the mismatch, as this rank sees it.
  Status differs = departedMismatch(op);
  if (!differs.ok()) {
    COHORT_RETURN_IF_ERROR(
        lead.sharedWake.waitChecked(ready, deadline, waitPolicy_, kLivenessEvery, between));
    return differs;
  }
  if (std::optional<Status> failed = between()) return *failed;
  // Only this rank had left (a failure being reported): the condition alone.
  return lead.sharedWake.waitChecked(ready, deadline, waitPolicy_, kLivenessEvery, between);
}

}  // namespace cohort::collective
