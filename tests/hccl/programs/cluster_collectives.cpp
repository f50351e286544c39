// An HCCL program as users write it for Ascend: rank table -> communicator ->
// stream -> AllReduce, AllGather, Broadcast, ReduceScatter -> synchronise ->
// check every element -> destroy. Started by mpirun or cohortrun, one process
// per rank:  ./a.out rank_table.json
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define ACLCHECK(expr)                                                                           \
  do {                                                                                           \
    aclError ret_ = (expr);                                                                      \
    if (ret_ != ACL_SUCCESS) {                                                                   \
      printf("rank %d: %s failed: acl error %d: %s\n", rank, #expr, ret_, aclGetRecentErrMsg()); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

#define HCCLCHECK(expr)                                                     \
  do {                                                                      \
    HcclResult ret_ = (expr);                                               \
    if (ret_ != HCCL_SUCCESS) {                                             \
      printf("rank %d: %s failed: hccl error %d (%s)\n", rank, #expr, ret_, \
             HcclGetErrorString(ret_));                                     \
      return 1;                                                             \
    }                                                                       \
  } while (0)

static int countErrors(const std::vector<float>& got, const std::vector<float>& want) {
  int wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != want[i];
  return wrong;
}

int main(int argc, char** argv) {
  const char* rankEnv = getenv("OMPI_COMM_WORLD_RANK");  // mpirun
  if (rankEnv == nullptr) rankEnv = getenv("RANK");      // cohortrun
  if (argc < 2 || rankEnv == nullptr) {
    printf("usage: %s rank_table.json (under mpirun or cohortrun)\n", argv[0]);
    return 2;
  }
  const int rank = atoi(rankEnv);
  const int devId = rank;  // the table puts rank r on device r
  ACLCHECK(aclInit(nullptr));
  ACLCHECK(aclrtSetDevice(devId));
  HcclComm comm;
  HCCLCHECK(HcclCommInitClusterInfo(argv[1], rank, &comm));
  uint32_t rankSize = 0;
  HCCLCHECK(HcclGetRankSize(comm, &rankSize));
  aclrtStream stream;
  ACLCHECK(aclrtCreateStream(&stream));

  const uint64_t count = 64 * 1024;  // floats per rank
  const size_t bytes = count * sizeof(float);
  void *sendBuf, *recvBuf, *gatherBuf, *bcastBuf, *rsBuf;
  ACLCHECK(aclrtMalloc(&sendBuf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  ACLCHECK(aclrtMalloc(&recvBuf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  ACLCHECK(aclrtMalloc(&gatherBuf, bytes * rankSize, ACL_MEM_MALLOC_HUGE_FIRST));
  ACLCHECK(aclrtMalloc(&bcastBuf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  ACLCHECK(aclrtMalloc(&rsBuf, bytes / rankSize, ACL_MEM_MALLOC_HUGE_FIRST));

  std::vector<float> host(count), bcast(count);
  for (uint64_t i = 0; i < count; ++i) {
    host[i] = static_cast<float>(rank + i % 100);
    bcast[i] = rank == 0 ? static_cast<float>(i % 1000) : -1.0f;
  }
  ACLCHECK(aclrtMemcpy(sendBuf, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  ACLCHECK(aclrtMemcpy(bcastBuf, bytes, bcast.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  HCCLCHECK(
      HcclAllReduce(sendBuf, recvBuf, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  HCCLCHECK(HcclAllGather(sendBuf, gatherBuf, count, HCCL_DATA_TYPE_FP32, comm, stream));
  HCCLCHECK(HcclBroadcast(bcastBuf, count, HCCL_DATA_TYPE_FP32, 0, comm, stream));
  HCCLCHECK(HcclReduceScatter(sendBuf, rsBuf, count / rankSize, HCCL_DATA_TYPE_FP32,
                              HCCL_REDUCE_SUM, comm, stream));
  ACLCHECK(aclrtSynchronizeStream(stream));

  const float rankSum = rankSize * (rankSize - 1) / 2.0f;
  std::vector<float> got(count), want(count);
  ACLCHECK(aclrtMemcpy(got.data(), bytes, recvBuf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t i = 0; i < count; ++i) want[i] = rankSum + rankSize * (i % 100);
  const int allReduceWrong = countErrors(got, want);

  std::vector<float> gathered(count * rankSize), gatherWant(count * rankSize);
  ACLCHECK(aclrtMemcpy(gathered.data(), bytes * rankSize, gatherBuf, bytes * rankSize,
                       ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t j = 0; j < count * rankSize; ++j) {
    gatherWant[j] = static_cast<float>(j / count + (j % count) % 100);
  }
  const int allGatherWrong = countErrors(gathered, gatherWant);

  ACLCHECK(aclrtMemcpy(got.data(), bytes, bcastBuf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t i = 0; i < count; ++i) want[i] = static_cast<float>(i % 1000);
  const int broadcastWrong = countErrors(got, want);

  const uint64_t block = count / rankSize;
  std::vector<float> scattered(block), scatterWant(block);
  ACLCHECK(aclrtMemcpy(scattered.data(), block * 4, rsBuf, block * 4, ACL_MEMCPY_DEVICE_TO_HOST));
  for (uint64_t j = 0; j < block; ++j)
    scatterWant[j] = rankSum + rankSize * ((rank * block + j) % 100);
  const int reduceScatterWrong = countErrors(scattered, scatterWant);

  printf(
      "rank %d of %u: allreduce %d wrong, allgather %d wrong, broadcast %d wrong, "
      "reducescatter %d wrong\n",
      rank, rankSize, allReduceWrong, allGatherWrong, broadcastWrong, reduceScatterWrong);
  HCCLCHECK(HcclCommDestroy(comm));
  for (void* p : {sendBuf, recvBuf, gatherBuf, bcastBuf, rsBuf}) ACLCHECK(aclrtFree(p));
  ACLCHECK(aclrtDestroyStream(stream));
  ACLCHECK(aclrtResetDevice(devId));
  ACLCHECK(aclFinalize());
  const bool ok = allReduceWrong + allGatherWrong + broadcastWrong + reduceScatterWrong == 0;
  if (ok) printf("rank %d: all checks passed\n", rank);
  return ok ? 0 : 1;
}
