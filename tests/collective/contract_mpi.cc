// The asynchronous contract with ranks as processes started by mpirun, meeting on
// the host in MPI_Barrier (contract.h has the scenarios): every collective,
// send/recv and batch at 8 B ... 16 MiB, over COHORT_TRANSPORT. Prints one line per
// failure and "rank R: contract OK (N scenarios)"; exits 1 on any failure, 3 (from the
// watchdog) when a call or a synchronize hangs.
#include "cohort/mpi.h"  // first: it keeps MPI's C++ bindings out

#include <cstdio>
#include <memory>
#include <string>

#include "collective/contract.h"

using namespace cohort;
using namespace cohort::testing;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Watchdog watchdog;
  std::unique_ptr<Communicator> a, b;
  runtime::Stream *sa = nullptr, *sb = nullptr;
  Status st = runtime::setDevice(rank);
  if (st.ok()) st = initFromMpi(MPI_COMM_WORLD, &a);
  if (st.ok()) st = initFromMpi(MPI_COMM_WORLD, &b);
  if (st.ok()) st = runtime::streamCreate(&sa);
  if (st.ok()) st = runtime::streamCreate(&sb);
  if (!st.ok()) {
    std::printf("rank %d: set-up: %s\n", rank, st.toString().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ContractRank me{a.get(), b.get(), sa, sb, [] { MPI_Barrier(MPI_COMM_WORLD); }};
  int failures = 0, runs = 0, anyRank = 0;
  for (ContractScenario scenario : {ContractScenario::kBarrierAfter, ContractScenario::kWorkBehind,
                                    ContractScenario::kOppositeOrder}) {
    for (ContractCall call : allContractCalls()) {
      for (std::size_t bytes : contractSizes()) {
        const std::string bad = runContract(me, scenario, call, bytes, watchdog);
        ++runs;
        if (!bad.empty()) {
          std::printf("%s\n", bad.c_str());
          std::fflush(stdout);
          ++failures;
        }
        // Every rank goes on or stops together: a failed call may have ended the
        // communicator on some ranks only.
        anyRank = failures;
        MPI_Allreduce(MPI_IN_PLACE, &anyRank, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (anyRank > 0) break;
      }
      if (anyRank > 0) break;
    }
    if (anyRank > 0) break;
  }
  if (anyRank == 0) std::printf("rank %d: contract OK (%d scenarios)\n", rank, runs);
  releaseContractBuffers();
  a.reset();
  b.reset();
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
