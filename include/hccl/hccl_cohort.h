/*
 * Cohort's own additions to the HCCL C API, named so that they cannot clash with
 * CANN's: surviving failed ranks.
 *
 * After a rank of a communicator died, aborted (HcclCommAbort, or a destroy that
 * aborts) or left, every other call on it fails. The survivors then agree on who
 * failed and carry on as a smaller communicator, without the application naming
 * the failed ranks. The agreement goes through the store the communicator was made
 * with (cohortrun's, HcclGetRootInfo's server, or the process of ranks made by
 * HcclCommInitAll); if that store died with a failed rank, through the standby
 * store of the lowest live rank.
 */
#ifndef COHORT_HCCL_HCCL_COHORT_H_
#define COHORT_HCCL_HCCL_COHORT_H_

#include <stdint.h>

#include "hccl/hccl_comm.h"
#include "hccl/hccl_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new communicator of the survivors of `comm`, their ranks renumbered in their old
 * order, with connections of its own and every collective. Every survivor calls it;
 * it returns once all of them have joined. A rank proven gone (its process ended,
 * seen by a survivor on its machine or by cohortrun) or that aborted has failed; one
 * whose process a survivor on its machine sees alive has not, whether it called yet
 * or not; one that is neither counts as failed once the exec timeout
 * (HCCL_EXEC_TIMEOUT / COHORT_EXEC_TIMEOUT) passed without it. `comm` stays failed:
 * destroy it. HCCL_E_REMOTE if the survivors excluded this rank (it joined too
 * late); HCCL_E_UNAVAIL if the store is gone with a failed rank. */
HCCL_FUNC_VISIBILITY HcclResult CohortCommShrink(HcclComm comm, HcclComm* newComm);

/* The ranks of `comm` the survivors agree failed, ascending, in its numbering:
 * *count of them, the first `capacity` written to `ranks` (which may be NULL when
 * `capacity` is 0, to learn the count). The agreement is the one CohortCommShrink
 * uses (the first of the two calls makes it, and every survivor must make one). */
HCCL_FUNC_VISIBILITY HcclResult CohortCommGetFailedRanks(HcclComm comm, uint32_t* ranks,
                                                         uint32_t capacity, uint32_t* count);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_HCCL_HCCL_COHORT_H_ */
