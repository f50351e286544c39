/*
 * Cohort's HCCL-compatible C API: the header programs include (hccl/hccl.h).
 *
 *   aclInit(NULL); aclrtSetDevice(dev);
 *   HcclComm comm; HcclCommInitClusterInfo("rank_table.json", rank, &comm);
 *   aclrtStream stream; aclrtCreateStream(&stream);
 *   HcclAllReduce(send, recv, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
 *   aclrtSynchronizeStream(stream);
 *   HcclCommDestroy(comm); aclrtDestroyStream(stream); aclrtResetDevice(dev); aclFinalize();
 *
 * Compile as for Ascend, with ASCEND_HOME = Cohort's install prefix:
 *   g++ test.cpp -I$ASCEND_HOME/include -L$ASCEND_HOME/lib64 -lhccl -lascendcl
 *
 * Every operation is asynchronous on `stream` (an aclrtStream of the
 * communicator's device; NULL is refused with HCCL_E_PTR): it runs after the work
 * queued on the stream before it, and work queued after it sees its result.
 * Every rank calls the same operations in the same order with the same counts,
 * types, operations and roots; a mismatch fails the operation on the ranks
 * concerned (at aclrtSynchronizeStream, and in HcclGetCommAsyncError). Buffers
 * are device memory (aclrtMalloc) of the communicator's device; counts are in
 * elements.
 */
#ifndef COHORT_HCCL_HCCL_H_
#define COHORT_HCCL_HCCL_H_

#include "acl/acl.h"
#include "hccl/hccl_comm.h"
#include "hccl/hccl_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* recvBuf = the element-wise reduction of every rank's sendBuf (count elements). */
HCCL_FUNC_VISIBILITY HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count,
                                              HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                              aclrtStream stream);

/* buf of rank `root` (count elements) is copied to buf of every rank. */
HCCL_FUNC_VISIBILITY HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType,
                                              uint32_t root, HcclComm comm, aclrtStream stream);

/* sendBuf holds rankSize * recvCount elements; rank i receives block i of the
 * reduction. */
HCCL_FUNC_VISIBILITY HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount,
                                                  HcclDataType dataType, HcclReduceOp op,
                                                  HcclComm comm, aclrtStream stream);

/* sendCounts/sendDispls: rankSize uint64_t each (elements); rank i receives the
 * reduction of every rank's sendCounts[i] elements at sendDispls[i], which must
 * equal recvCount on rank i. */
HCCL_FUNC_VISIBILITY HcclResult HcclReduceScatterV(void* sendBuf, const void* sendCounts,
                                                   const void* sendDispls, void* recvBuf,
                                                   uint64_t recvCount, HcclDataType dataType,
                                                   HcclReduceOp op, HcclComm comm,
                                                   aclrtStream stream);

/* recvBuf holds rankSize * sendCount elements: rank i's sendBuf at block i. */
HCCL_FUNC_VISIBILITY HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount,
                                              HcclDataType dataType, HcclComm comm,
                                              aclrtStream stream);

/* recvCounts/recvDispls: rankSize uint64_t each (elements); rank i's sendCount
 * elements land at recvBuf + recvDispls[i] (recvCounts[i] must equal rank i's
 * sendCount). */
HCCL_FUNC_VISIBILITY HcclResult HcclAllGatherV(void* sendBuf, uint64_t sendCount, void* recvBuf,
                                               const void* recvCounts, const void* recvDispls,
                                               HcclDataType dataType, HcclComm comm,
                                               aclrtStream stream);

/* recvBuf of rank `root` = the reduction of every rank's sendBuf. */
HCCL_FUNC_VISIBILITY HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count,
                                           HcclDataType dataType, HcclReduceOp op, uint32_t root,
                                           HcclComm comm, aclrtStream stream);

/* sendBuf of rank `root` holds rankSize * recvCount elements; rank i receives
 * block i. */
HCCL_FUNC_VISIBILITY HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount,
                                            HcclDataType dataType, uint32_t root, HcclComm comm,
                                            aclrtStream stream);

/* Point to point: a send must be matched by a receive of the same count and type
 * on destRank. */
HCCL_FUNC_VISIBILITY HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType,
                                         uint32_t destRank, HcclComm comm, aclrtStream stream);
HCCL_FUNC_VISIBILITY HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType,
                                         uint32_t srcRank, HcclComm comm, aclrtStream stream);

/* Sends and receives that progress together (no ordering deadlock among them). */
HCCL_FUNC_VISIBILITY HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum,
                                                  HcclComm comm, aclrtStream stream);

/* sendCount elements to every rank (block i of sendBuf to rank i) and recvCount
 * from every rank (rank i's at block i of recvBuf). Cohort needs sendCount ==
 * recvCount and sendType == recvType, and sendBuf != recvBuf. */
HCCL_FUNC_VISIBILITY HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount,
                                             HcclDataType sendType, const void* recvBuf,
                                             uint64_t recvCount, HcclDataType recvType,
                                             HcclComm comm, aclrtStream stream);

/* Counts and displacements: rankSize uint64_t each, in elements. Cohort needs
 * sendType == recvType. */
HCCL_FUNC_VISIBILITY HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts,
                                              const void* sdispls, HcclDataType sendType,
                                              const void* recvBuf, const void* recvCounts,
                                              const void* rdispls, HcclDataType recvType,
                                              HcclComm comm, aclrtStream stream);

/* sendCountMatrix: rankSize x rankSize uint64_t, row-major; [i][j] is what rank i
 * sends rank j, in elements. Every rank passes the same matrix. Rank r sends its
 * row from sendBuf and receives column r into recvBuf, each packed in rank order.
 * Cohort needs sendType == recvType, and sendBuf != recvBuf. */
HCCL_FUNC_VISIBILITY HcclResult HcclAlltoAllVC(const void* sendBuf, const void* sendCountMatrix,
                                               HcclDataType sendType, const void* recvBuf,
                                               HcclDataType recvType, HcclComm comm,
                                               aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* COHORT_HCCL_HCCL_H_ */
