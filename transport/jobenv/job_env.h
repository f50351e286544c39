// Which job this process belongs to, read from the variables its launcher set:
// cohortrun, mpirun (OpenMPI), a PMIx launcher, Slurm (srun) or torchrun-style
// RANK/WORLD_SIZE/MASTER_ADDR. The library never knows how it was launched; it
// only needs a rank, a size and a store to join (root info or master address).
//
//   JobEnvironment job;
//   COHORT_RETURN_IF_ERROR(detectJobEnvironment(&job));
//   std::shared_ptr<Store> store; JobToken token; std::shared_ptr<TcpStoreServer> server;
//   COHORT_RETURN_IF_ERROR(connectJobStore(job, deadline, &store, &token, &server));
//
// All functions are thread-safe (they share no state).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "common/wait.h"
#include "transport/handshake.h"
#include "transport/root_info.h"
#include "transport/store.h"
#include "transport/tcp_store.h"

namespace cohort::transport {

using EnvMap = std::map<std::string, std::string>;

/// What the launcher told this process. A plain value.
struct JobEnvironment {
  int rank = -1;
  int size = 0;
  int localRank = -1;  ///< -1 = the launcher did not say
  int localSize = 0;   ///< 0 = the launcher did not say
  /// Who set the ranks: "cohortrun", "openmpi", "pmix", "slurm" or "torchrun/env".
  std::string source;
  std::optional<RootInfo> rootInfo;  ///< COHORT_ROOT_INFO
  std::string masterAddr;            ///< MASTER_ADDR ("" = not set)
  int masterPort = 0;                ///< MASTER_PORT (0 = not set)
  std::string jobToken;              ///< COHORT_JOB_TOKEN text ("" = not set)
  int deviceId = -1;                 ///< COHORT_DEVICE_ID (-1 = not set)
  /// Slurm's SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), expanded; else empty.
  std::vector<std::string> nodeList;
};

/// Reads a job environment from `env` (pure: tests pass any map). The ranks come
/// from the first source present, in this order:
///   cohortrun     COHORT_ROOT_INFO + RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE
///   openmpi       OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
///   pmix          PMIX_RANK (size from WORLD_SIZE or SLURM_NTASKS)
///   slurm         SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (+ SLURM_STEP_TASKS_PER_NODE)
///   torchrun/env  RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE
/// COHORT_ROOT_INFO, MASTER_ADDR/MASTER_PORT, COHORT_JOB_TOKEN, COHORT_DEVICE_ID and
/// the Slurm node list are read whatever the source. kUnavailable when no source is
/// present; kConfigError naming the variable and its value for a bad value
/// ("RANK=7 is not below WORLD_SIZE=4"); COHORT_ROOT_INFO's own errors as
/// RootInfo::fromText gives them. *out is untouched on error.
Status detectJobEnvironment(const EnvMap& env, JobEnvironment* out);

/// The variables of this process that detectJobEnvironment reads (COHORT_JOB_TOKEN
/// from Config::global()).
EnvMap jobVariables();

/// detectJobEnvironment(jobVariables(), out).
Status detectJobEnvironment(JobEnvironment* out);

/// The token of a job whose store is at a master address: COHORT_JOB_TOKEN's text
/// (JobToken::fromText) when `jobTokenText` is not empty, else a hash of
/// "ADDR:PORT/WORLD_SIZE" (*hashed = true: anyone knowing the address can compute
/// it). Launchers and ranks call this so that they agree.
JobToken masterJobToken(const std::string& jobTokenText, const std::string& masterAddr,
                        int masterPort, int worldSize, bool* hashed);

/// Starts a store server bound to `masterAddr` (a host name is resolved, IPv4
/// preferred) and `masterPort`, accepting `token`. Errors name the address.
Status startMasterStore(const std::string& masterAddr, int masterPort, const JobToken& token,
                        std::shared_ptr<TcpStoreServer>* server);

/// Joins the job's store. With a root info: a client of its server. Else with
/// MASTER_ADDR/MASTER_PORT: rank 0 starts a TcpStoreServer bound to that address
/// (a host name is resolved) and port, kept alive in *server; every rank (rank 0
/// included) connects as a client. *token is the job token used. kUnavailable when
/// the environment names no store; errors name the address.
Status connectJobStore(const JobEnvironment& job, Deadline deadline, std::shared_ptr<Store>* store,
                       JobToken* token, std::shared_ptr<TcpStoreServer>* server);

/// Slurm's compact host list ("node[01-03,07],gpu5" -> node01 node02 node03 node07
/// gpu5; several bracket groups multiply). kConfigError naming `variable` and the
/// text for malformed lists or more than a million names.
Status expandSlurmNodeList(const std::string& variable, const std::string& text,
                           std::vector<std::string>* names);

/// Slurm's tasks-per-node list ("2(x3),1" -> 2 2 2 1), same errors.
Status expandSlurmTasksPerNode(const std::string& variable, const std::string& text,
                               std::vector<int>* counts);

}  // namespace cohort::transport
