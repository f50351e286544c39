// How a cohort-linkcheck process finds its job: from its launcher's variables
// (cohortrun, mpirun, Slurm, torchrun-style MASTER_ADDR) or, for processes
// started by hand on each machine, from a rank table and its own rank. With a
// rank table, the table's rank 0 serves the store at its host_ip (else its
// device_ip) on COHORT_IF_BASE_PORT, and the token is COHORT_JOB_TOKEN or, failing
// that, a hash of the table file's contents. A launcher's job started from a
// rank table (COHORT_RANKTABLE, as cohortrun --ranktable sets) has its table too,
// for the names of its ranks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tools/linkcheck/link_views.h"
#include "transport/handshake.h"
#include "transport/store.h"
#include "transport/tcp_store.h"

namespace cohort::linkcheck {

struct JoinRequest {
  std::string ranktable;  ///< "" = from the launcher's variables
  int rank = -1;          ///< with a rank table: this process's rank
};

/// A joined job. Keeps the store server alive when this process serves it.
struct JobMembership {
  int rank = -1;
  int size = 0;
  std::shared_ptr<transport::Store> store;
  transport::JobToken token;
  std::shared_ptr<transport::TcpStoreServer> server;  ///< set when this process serves
  std::vector<TableRank> table;  ///< per rank as the rank table names it (empty without a table)
  std::string source;            ///< "rank table FILE", "cohortrun", "openmpi", ...
};

/// Joins the job; the store connection is retried until `deadline`. Errors name
/// the store's address and why it could not be reached (or why the request is
/// wrong: no launcher variables and no rank table, a rank not in the table, ...).
Status joinJob(const JoinRequest& request, Deadline deadline, JobMembership* out);

}  // namespace cohort::linkcheck
