// Creating a communicator over MPI_COMM_WORLD (or any MPI communicator): rank 0
// makes the root info and MPI_Bcast hands it to the others. Header-only, so Cohort
// itself does not link MPI: include it after <mpi.h> in a program built with mpicxx.
#pragma once

// Only MPI's C API is used; keep OpenMPI's and MPICH's C++ bindings (and their
// library) out of the program unless it asked for them.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <memory>

#include "cohort/communicator.h"

namespace cohort {

/// Every rank of `mpiComm` calls it; the calling thread's current device is used
/// (set one first, e.g. the MPI local rank).
inline Status initFromMpi(MPI_Comm mpiComm, std::unique_ptr<Communicator>* out) {
  int rank = 0, size = 0;
  MPI_Comm_rank(mpiComm, &rank);
  MPI_Comm_size(mpiComm, &size);
  UniqueId id{};
  Status made;
  if (rank == 0) made = Communicator::getUniqueId(&id);
  int ok = made.ok() ? 1 : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, mpiComm);
  if (!ok) {
    return rank == 0 ? made
                     : Status(ErrorCode::kRemoteError, "initFromMpi: rank 0 could not create the root info");
  }
  MPI_Bcast(id.bytes, static_cast<int>(sizeof(id.bytes)), MPI_BYTE, 0, mpiComm);
  return Communicator::initRank(id, size, rank, out);
}

}  // namespace cohort
