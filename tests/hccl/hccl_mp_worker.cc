// One rank of hccl_mp_test, written as an HCCL user writes it:
//   hccl_mp_worker TABLE RANK            (killed peer)
//   hccl_mp_worker TABLE RANK badinput   (bad input as an NPU sees it)
// Joins the rank table's communicator, prints "rank R ready", then rank 0
// allreduces (waiting for rank 1, which never joins the operation and is killed
// by the test) and prints what the stream and HcclGetCommAsyncError report;
// rank 1 sleeps until killed. Exit 0 when rank 0 sees HCCL_E_REMOTE.
// With badinput, each rank makes the calls of README's table of bad input (count 0
// with no buffer, malloc'd memory, values out of range...), then allreduces device
// memory; exit 0 and "rank R: bad input OK" when every answer was right.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace {

int badInput(int rank, HcclComm comm) {
  aclrtStream stream = nullptr;
  void* dev = nullptr;
  if (aclrtCreateStream(&stream) != ACL_SUCCESS ||
      aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    return 5;
  }
  int wrong = 0;
  // The messages go to the log (stderr), where the test reads them.
  const auto expect = [&](const char* what, HcclResult got, HcclResult want) {
    if (got != want) {
      std::printf("rank %d: %s returned %d (wanted %d)\n", rank, what, got, want);
      ++wrong;
    }
  };
  expect("HcclAllReduce count 0",
         HcclAllReduce(nullptr, nullptr, 0, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream),
         HCCL_SUCCESS);
  expect("HcclBroadcast count 0", HcclBroadcast(nullptr, 0, HCCL_DATA_TYPE_FP32, 0, comm, stream),
         HCCL_SUCCESS);
  expect("HcclSend count 0", HcclSend(nullptr, 0, HCCL_DATA_TYPE_FP32, 1 - rank, comm, stream),
         HCCL_SUCCESS);
  expect("HcclAlltoAll counts 0",
         HcclAlltoAll(nullptr, 0, HCCL_DATA_TYPE_FP32, nullptr, 0, HCCL_DATA_TYPE_FP32, comm,
                      stream),
         HCCL_SUCCESS);
  const uint64_t none[2] = {0, 0};
  expect("HcclAllGatherV counts adding up to 0",
         HcclAllGatherV(nullptr, 0, nullptr, none, none, HCCL_DATA_TYPE_FP32, comm, stream),
         HCCL_SUCCESS);
  // Every count 0 is still a collective: both ranks take part, with no buffers.
  expect("HcclAlltoAllV counts 0, no buffers",
         HcclAlltoAllV(nullptr, none, none, HCCL_DATA_TYPE_FP32, nullptr, none, none,
                       HCCL_DATA_TYPE_FP32, comm, stream),
         HCCL_SUCCESS);
  expect("HcclBatchSendRecv of no items", HcclBatchSendRecv(nullptr, 0, comm, stream),
         HCCL_E_PTR);
  expect("HcclAllReduce without a stream",
         HcclAllReduce(dev, dev, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, nullptr),
         HCCL_E_PTR);
  expect("HcclAllReduce of an unknown type",
         HcclAllReduce(dev, dev, 1, static_cast<HcclDataType>(99), HCCL_REDUCE_SUM, comm, stream),
         HCCL_E_NOT_SUPPORT);
  expect("HcclAllReduce of an unknown operation",
         HcclAllReduce(dev, dev, 1, HCCL_DATA_TYPE_FP32, static_cast<HcclReduceOp>(9), comm,
                       stream),
         HCCL_E_NOT_SUPPORT);
  expect("HcclBroadcast from rank 2 of 2",
         HcclBroadcast(dev, 1, HCCL_DATA_TYPE_FP32, 2, comm, stream), HCCL_E_PARA);
  expect("HcclSend to itself", HcclSend(dev, 1, HCCL_DATA_TYPE_FP32, rank, comm, stream),
         HCCL_E_PARA);
  expect("HcclAlltoAll of two types",
         HcclAlltoAll(dev, 1, HCCL_DATA_TYPE_FP32, dev, 1, HCCL_DATA_TYPE_INT32, comm, stream),
         HCCL_E_PARA);
  expect("HcclAllReduce past the buffer's end",
         HcclAllReduce(dev, dev, 1000, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream),
         HCCL_E_PARA);
  std::vector<float> host(16, 1.0f);
  expect("HcclAllReduce of malloc'd memory",
         HcclAllReduce(host.data(), dev, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream),
         HCCL_E_PARA);
  expect("HcclRecv into malloc'd memory",
         HcclRecv(host.data(), 16, HCCL_DATA_TYPE_FP32, 1 - rank, comm, stream), HCCL_E_PARA);
  expect("HcclCommDestroy of a null communicator", HcclCommDestroy(nullptr), HCCL_SUCCESS);
  uint32_t self = static_cast<uint32_t>(rank);
  HcclComm sub = nullptr;
  expect("HcclCreateSubCommConfig with an id and no rank list",
         HcclCreateSubCommConfig(&comm, 1, nullptr, 5, 0, nullptr, &sub), HCCL_E_PARA);
  expect("HcclCreateSubCommConfig with a rank list and no id",
         HcclCreateSubCommConfig(&comm, 1, &self, 0xFFFFFFFFu, 0, nullptr, &sub), HCCL_E_PARA);
  // The communicator works on: both ranks give ones, so the sum is 2.
  if (aclrtMemcpy(dev, 64, host.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) return 6;
  expect("HcclAllReduce of device memory",
         HcclAllReduce(dev, dev, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream),
         HCCL_SUCCESS);
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 7;
  if (aclrtMemcpy(host.data(), 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return 6;
  for (float v : host) {
    if (v != 2.0f) {
      std::printf("rank %d: allreduce gave %g, not 2\n", rank, v);
      ++wrong;
      break;
    }
  }
  (void)aclrtFree(dev);
  (void)aclrtDestroyStream(stream);
  (void)HcclCommDestroy(comm);
  if (wrong != 0) return 1;
  std::printf("rank %d: bad input OK\n", rank);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return 2;
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
  if (argc == 4 && std::strcmp(argv[3], "badinput") == 0) return badInput(rank, comm);
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
