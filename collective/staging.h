// Keeping an operation within COHORT_BUFFSIZE: the communicator scratch an
// algorithm may take (a copy of buffers peers cannot map, partial sums in flight)
// is bounded; larger operations run in pieces, or with an algorithm whose
// scratch is bounded.
#pragma once

#include <cstddef>

#include "collective/op.h"
#include "collective/selector.h"
#include "collective/tuning.h"

namespace cohort::collective {

struct StagingPlan {
  Algo algo = Algo::kAuto;
  /// Elements per piece of an elementwise operation; 0 = the whole operation.
  std::size_t pieceCount = 0;
};

/// The most scratch `algo` may take for `op` on `size` ranks. A worst case that
/// depends only on the operation and the tuning, never on where this rank's
/// buffers live, so that every rank cuts the same pieces.
std::size_t scratchBound(const OpDesc& op, Algo algo, int size, const Tuning& tuning);

/// How `op` runs within `limit` bytes of scratch: as chosen when it fits; in
/// pieces for allreduce, broadcast and reduce; otherwise with the schedule of
/// the collective (ring, pairwise, linear), whose scratch is bounded.
StagingPlan planStaging(const OpDesc& op, Algo algo, int size, std::size_t limit,
                        const Tuning& tuning);

}  // namespace cohort::collective
