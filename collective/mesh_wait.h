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
  return lead.sharedWake.waitChecked(
      ready, deadline, waitPolicy_, kLivenessEvery, [&]() -> std::optional<Status> {
        if (aborted.load()) {
          leave(transport::shm::Departure::kAborted);  // peers waiting for it fail, not hang
          return makeError(ErrorCode::kAborted, "{} aborted on this rank ({})", op.describe(),
                           phase);
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
      });
}

}  // namespace cohort::collective
