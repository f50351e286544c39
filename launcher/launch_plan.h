// What cohortrun was asked to start on this machine: the command line options,
// and the plan derived from them (which ranks, which devices, where the job's
// store is). Pure: no process is started here.
#pragma once

#include <string>
#include <vector>

#include "cohort/status.h"

namespace cohort::launcher {

/// The options of `cohortrun [options] -- PROG ARGS...`. A plain value.
struct LaunchOptions {
  int ranksPerNode = 0;              ///< -n; 0 = from the rank table
  int nnodes = 0;                    ///< --nnodes; 0 = not given (1, or the rank table's servers)
  int nodeRank = -1;                 ///< --node-rank; -1 = not given
  std::string master;                ///< --master ADDR:PORT; "" = this machine only
  std::string ranktable;             ///< --ranktable FILE
  std::string serverId;              ///< --server-id ID
  std::string logDir;                ///< --log-dir DIR; "" = no log files
  double graceS = 5;                 ///< --grace: SIGTERM to SIGKILL
  double timeoutS = 0;               ///< --timeout; 0 = none
  bool keepGoing = false;            ///< --keep-going: a failed rank stops no other
  bool bindCores = true;             ///< --bind-to core (default) or none
  std::vector<std::string> command;  ///< PROG ARGS...
};

/// One rank started here.
struct RankSlot {
  int rank = -1;
  int localRank = -1;
  int deviceId = -1;
  std::vector<int> cpus;  ///< the processors the rank runs on; empty = not bound
};

/// A plain value.
struct LaunchPlan {
  int worldSize = 0;
  int localSize = 0;
  int nodeCount = 1;
  int nodeRank = 0;
  std::vector<RankSlot> ranks;  ///< this machine's ranks, by local rank
  std::string masterAddr;       ///< "" = one machine: cohortrun makes a root info
  int masterPort = 0;
  bool servesStore = true;    ///< this cohortrun hosts the job's store
  std::string ranktablePath;  ///< absolute path, "" = no rank table
};

/// --bind-to core (cpus: the processors cohortrun may use, in order): with at
/// least as many local ranks as processors, local rank i runs on cpus[i %
/// cpus.size()] alone, like mpirun's binding to cores, and ranks beyond them
/// share round robin, which keeps ranks that hand the processor to each other
/// on one run queue; with fewer ranks, each gets its own consecutive share of
/// the processors (one rank: all of them). Measured on a 2-processor machine,
/// 1 KiB allreduce: 4 ranks 7-10 us bound, 18-25 us left to the scheduler,
/// which kept moving them; 2 ranks, 64 KiB: 8-14 GB/s bound, 2-5 unbound.
void bindToCores(const std::vector<int>& cpus, LaunchPlan* plan);
/// The processors this process may run on (sched_getaffinity), ascending.
std::vector<int> allowedCpus();

/// Checks the options and derives the plan; a rank table is loaded and validated
/// (every problem listed in the message). kInvalidArgument naming the option and
/// value for bad options; the loader's codes for a bad table.
Status makeLaunchPlan(const LaunchOptions& options, LaunchPlan* plan);

/// "host:port", "[v6]:port" -> host (without brackets) and port 1..65535.
Status parseHostPort(const std::string& text, std::string* host, int* port);

}  // namespace cohort::launcher
