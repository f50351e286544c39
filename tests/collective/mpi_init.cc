// Started by mpirun: a communicator over MPI_COMM_WORLD (root info broadcast
// with MPI_Bcast, cohort/mpi.h), then an allreduce checked on every rank.
#include "cohort/mpi.h"  // first: it keeps MPI's C++ bindings out

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = 0;
  cohort::Status st = cohort::runtime::setDevice(rank);
  std::unique_ptr<cohort::Communicator> comm;
  if (st.ok()) st = cohort::initFromMpi(MPI_COMM_WORLD, &comm);
  void* buf = nullptr;
  if (st.ok()) st = cohort::runtime::deviceMalloc(&buf, sizeof(long));
  if (st.ok()) {
    *static_cast<long*>(buf) = rank + 1;
    st = comm->allReduce(buf, buf, 1, cohort::DataType::kInt64, cohort::ReduceOp::kSum, nullptr);
  }
  if (st.ok()) st = cohort::runtime::streamSynchronize(nullptr);
  if (!st.ok()) {
    std::printf("rank %d: %s\n", rank, st.toString().c_str());
    code = 1;
  } else if (*static_cast<long*>(buf) != static_cast<long>(size) * (size + 1) / 2) {
    std::printf("rank %d: sum %ld\n", rank, *static_cast<long*>(buf));
    code = 1;
  } else {
    std::printf("rank %d: mpi init OK (%s)\n", rank, comm->lastChoice().c_str());
  }
  comm.reset();
  MPI_Finalize();
  return code;
}
