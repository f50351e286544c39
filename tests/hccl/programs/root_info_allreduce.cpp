// The root-info variant, as hccl_test does it: rank 0 makes the root info, MPI
// broadcasts its 4108 bytes, every rank joins with HcclCommInitRootInfo.
//   mpicxx test.cpp -I$ASCEND_HOME/include -L$ASCEND_HOME/lib64 -lhccl -lascendcl
//   mpirun -np 4 ./a.out
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define CHECK(expr, ok)                            \
  do {                                             \
    if ((expr) != (ok)) {                          \
      printf("rank %d: %s failed\n", rank, #expr); \
      MPI_Abort(MPI_COMM_WORLD, 1);                \
    }                                              \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(aclInit(nullptr), ACL_SUCCESS);
  CHECK(aclrtSetDevice(rank), ACL_SUCCESS);
  HcclRootInfo rootInfo;
  if (rank == 0) CHECK(HcclGetRootInfo(&rootInfo), HCCL_SUCCESS);
  MPI_Bcast(&rootInfo, HCCL_ROOT_INFO_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
  HcclComm comm;
  CHECK(HcclCommInitRootInfo(size, &rootInfo, rank, &comm), HCCL_SUCCESS);
  aclrtStream stream;
  CHECK(aclrtCreateStream(&stream), ACL_SUCCESS);

  const uint64_t count = 1 << 18;
  std::vector<int32_t> host(count, rank + 1), back(count);
  void* buf;
  CHECK(aclrtMalloc(&buf, count * 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  CHECK(aclrtMemcpy(buf, count * 4, host.data(), count * 4, ACL_MEMCPY_HOST_TO_DEVICE),
        ACL_SUCCESS);
  CHECK(HcclAllReduce(buf, buf, count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, stream),
        HCCL_SUCCESS);
  CHECK(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  CHECK(aclrtMemcpy(back.data(), count * 4, buf, count * 4, ACL_MEMCPY_DEVICE_TO_HOST),
        ACL_SUCCESS);
  int wrong = 0;
  for (int32_t v : back) wrong += v != size * (size + 1) / 2;
  printf("rank %d of %d: root-info allreduce %d wrong\n", rank, size, wrong);
  CHECK(HcclCommDestroy(comm), HCCL_SUCCESS);
  CHECK(aclrtFree(buf), ACL_SUCCESS);
  CHECK(aclrtDestroyStream(stream), ACL_SUCCESS);
  CHECK(aclrtResetDevice(rank), ACL_SUCCESS);
  CHECK(aclFinalize(), ACL_SUCCESS);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
