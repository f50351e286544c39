// One rank of hccl_mp_test, written as an HCCL user writes it:
//   hccl_mp_worker TABLE RANK
// Joins the rank table's communicator, prints "rank R ready", then rank 0
// allreduces (waiting for rank 1, which never joins the operation and is killed
// by the test) and prints what the stream and HcclGetCommAsyncError report;
// rank 1 sleeps until killed. Exit 0 when rank 0 sees HCCL_E_REMOTE.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "acl/acl.h"
#include "hccl/hccl.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int rank = std::atoi(argv[2]);
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(rank) != ACL_SUCCESS) return 3;
  HcclComm comm = nullptr;
  HcclResult r = HcclCommInitClusterInfo(argv[1], static_cast<uint32_t>(rank), &comm);
  if (r != HCCL_SUCCESS) {
    std::printf("rank %d: init failed: %s\n", rank, HcclGetErrorString(r));
    return 4;
  }
  std::printf("rank %d ready\n", rank);
  std::fflush(stdout);
  if (rank != 0) {
    for (;;) pause();
  }
  aclrtStream stream = nullptr;
  void* buf = nullptr;
  if (aclrtCreateStream(&stream) != ACL_SUCCESS ||
      aclrtMalloc(&buf, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    return 5;
  }
  r = HcclAllReduce(buf, buf, (1 << 20) / 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
  const aclError synced = aclrtSynchronizeStream(stream);
  HcclResult async = HCCL_SUCCESS;
  const HcclResult queried = HcclGetCommAsyncError(comm, &async);
  std::printf("rank 0: enqueue %d, synchronize %d, async error %d (%s), query %d\n", r, synced,
              async, HcclGetErrorString(async), queried);
  std::fflush(stdout);
  (void)HcclCommDestroy(comm);
  return async == HCCL_E_REMOTE && synced != ACL_SUCCESS ? 0 : 1;
}
