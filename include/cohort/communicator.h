// Communicators and collectives (the HCCL/NCCL model).
//
// A communicator is a group of ranks, one device each. A collective is called by
// every rank of the communicator with matching arguments, in the same order:
//
//   right: every rank calls comm->allReduce(send, recv, 1024, kFloat32, kSum, s);
//   wrong: rank 0 calls allReduce(..., 1024, ...) while rank 1 calls allGather(...),
//          or a different count, type, op or root: Cohort detects it and fails the
//          operation on both ranks with kMismatch naming the parameter and values.
//
// Calls are asynchronous on the caller's stream: the call returns at once, without
// waiting for any other rank; the operation is a task of the caller's stream, run
// by its worker after the work queued there before the call, and work queued there
// after the call sees the result (the host never waits).
// Errors of the operation itself surface at streamSynchronize (sticky on the
// stream) and through asyncError(); argument errors are returned at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cohort/runtime.h"
#include "cohort/status.h"

namespace cohort {

enum class DataType : int {
  kInt8 = 0, kUint8, kInt16, kUint16, kInt32, kUint32, kInt64, kUint64,
  kFloat16, kBFloat16, kFloat32, kFloat64,
};
constexpr int kDataTypeCount = 12;

enum class ReduceOp : int { kSum = 0, kProd, kMax, kMin, kAvg };
constexpr int kReduceOpCount = 5;

std::size_t dataTypeSize(DataType type);
const char* dataTypeName(DataType type);
const char* reduceOpName(ReduceOp op);

/// Converts `count` elements of `srcType` at src to `dstType` at dst, on the host: what
/// a program that computes in fp32 and communicates in fp16 or bf16 does before and
/// after a collective (a device's cast kernel). fp32 -> fp16 or bf16 rounds to nearest
/// even, as the reductions do; fp16 or bf16 -> fp32 is exact; the same type copies.
/// src and dst must not overlap. kInvalidArgument for other pairs or null pointers.
Status convertElements(const void* src, DataType srcType, void* dst, DataType dstType,
                       std::size_t count);

/// The root info blob (4108 bytes, like HcclRootInfo): made by one rank with
/// Communicator::getUniqueId, passed to every rank out of band.
struct UniqueId {
  std::uint8_t bytes[4108];
};

/// Per-communicator settings (defaults come from COHORT_* variables).
struct CommOptions {
  std::string name;  ///< for logs
  /// How long one operation may run before it fails with kTimeout, in ms: what a
  /// framework's per-group timeout becomes (torch.distributed's `timeout`). -1 =
  /// COHORT_EXEC_TIMEOUT; 0 = never. Sub-communicators (split, subCommunicator) inherit
  /// it. The runtime's watchdog on the caller's stream stays COHORT_EXEC_TIMEOUT, so a
  /// longer value than that is cut to it.
  long execTimeoutMs = -1;
  /// Retrying this communicator's broken links, in HCCL_OP_RETRY_ENABLE's and
  /// HCCL_OP_RETRY_PARAMS's syntax ("L0:0,L1:1"; "MaxCnt:3,HoldTime:5000,
  /// IntervalTime:1000", fields left out at CANN's defaults); empty: the
  /// environment's. A value the variable would refuse fails the init, naming it.
  /// Sub-communicators inherit them unless given their own (subCommunicator).
  std::string retryEnable;
  std::string retryParams;
};

struct SendRecvItem {
  bool isSend;
  void* buffer;
  std::size_t count;
  DataType type;
  int peer;
};

/// Thread-safe for calls on different communicators; calls on one communicator
/// must come from one thread at a time (as in NCCL), except abort(), which any
/// thread may call at any time. Destroying it waits for its pending operations;
/// destroy(std::move(comm), true) aborts them instead.
class Communicator {
 public:
  /// Rank 0 (or any one process): a fresh root info. Starts the rendezvous store
  /// in this process; it serves until the process exits.
  static Status getUniqueId(UniqueId* id);
  /// Every rank: joins the communicator of `nranks` described by `id`, on the
  /// calling thread's current device.
  static Status initRank(const UniqueId& id, int nranks, int rank,
                         std::unique_ptr<Communicator>* out, const CommOptions& options = {});
  /// Joins the job this process was started in, from its environment: cohortrun
  /// (COHORT_ROOT_INFO, RANK, WORLD_SIZE, ...), mpirun (OMPI_COMM_WORLD_*; with
  /// MASTER_ADDR/MASTER_PORT or COHORT_ROOT_INFO for the store), Slurm
  /// (SLURM_PROCID, ...) or torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT.
  /// Sets the device (COHORT_DEVICE_ID, else the local rank) if the calling thread
  /// has none.
  static Status initFromEnvironment(std::unique_ptr<Communicator>* out);
  /// Joins the job described by an HCCL rank table (JSON) or YAML cluster file
  /// as `rank` (like HcclCommInitClusterInfo): the table is validated, the
  /// rendezvous store is served by the table's rank 0 at its host_ip (else
  /// device_ip) on COHORT_IF_BASE_PORT, and the job token comes from
  /// COHORT_JOB_TOKEN (else a hash of the table). Uses the rank's device_id from
  /// the table if the calling thread has no current device.
  static Status initFromRankTable(const std::string& path, int rank,
                                  std::unique_ptr<Communicator>* out,
                                  const CommOptions& options = {});
  /// N ranks of this process, on `devices` (like HcclCommInitAll). out[i] is rank
  /// i on devices[i].
  static Status initAll(const std::vector<int>& devices,
                        std::vector<std::unique_ptr<Communicator>>* out,
                        const CommOptions& options = {});

  /// finalize() (its error is logged), then releases the communicator.
  ~Communicator();
  /// Waits for this rank's pending operations, then until every peer has finished the
  /// calls it made with this rank (a broadcast's root returns from its sync before the
  /// others have read its data), at most COHORT_EXEC_TIMEOUT: then kTimeout naming the
  /// peers that never came. Leaving after it fails no peer's call. Idempotent: later
  /// calls return the first result. Not after abort() (it returns at once).
  Status finalize();
  /// Releases `comm`. abortPending false: finalize(), then the destructor; returns
  /// finalize()'s status. true: aborts first, so the operation in flight fails within 1 s
  /// and queued ones fail at once (kAborted); peers see this rank leave, and their calls
  /// with it fail saying so. Either way the process may then create new communicators.
  static Status destroy(std::unique_ptr<Communicator> comm, bool abortPending);
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  int localRank() const;
  int localSize() const;
  int nodeCount() const;
  int device() const;
  /// Link check results of this rank's connections, as JSON.
  std::string linkReportJson() const;
  /// Algorithm and transport chosen for the last operation, e.g. "allreduce=mesh shm".
  std::string lastChoice() const;
  /// Overrides COHORT_ALGO for this communicator ("allreduce=ring;broadcast=tree";
  /// "" = the built-in table). Every rank must set the same. Not during operations.
  Status setAlgorithm(const std::string& spec);

  /// Splits into sub-communicators: ranks with the same color form one, ordered
  /// by key then rank. color < 0: this rank joins none (*out = null). Collective.
  Status split(int color, int key, std::unique_ptr<Communicator>* out);
  /// A sub-communicator of the listed ranks (every listed rank calls it with the
  /// same list; the others must not). `own`: its settings where given (a field
  /// not empty, an execTimeoutMs other than -1; HcclCreateSubCommConfig's
  /// config), this communicator's for the rest.
  Status subCommunicator(const std::vector<int>& ranks, std::unique_ptr<Communicator>* out,
                         const CommOptions& own = {});

  // ---- Surviving failed ranks ----
  //
  // After a rank died, aborted or left, the others agree on who failed and carry on
  // as a smaller communicator, without being told who failed. The agreement goes
  // through the store the communicator was made with, or, if that store died with
  // a failed rank (a torchrun-style job's is rank 0's), through the standby store
  // every rank of a job with a store in another process offers: the lowest live
  // rank's.

  /// The ranks the survivors agree failed, ascending, in this communicator's
  /// numbering (empty if none did). Every survivor calls it or shrink() (a failed
  /// operation joins by itself): the first of the two waits until every rank has
  /// joined the agreement, is proven gone (its process ended, seen by a survivor on
  /// its node or by the launcher; or it aborted) or is seen alive by a survivor on
  /// its node, at most the exec timeout for a rank that is none of these (then it
  /// counts as failed). kRemoteError if the survivors excluded this rank (it joined
  /// too late); kUnavailable if the store is gone.
  Status failedRanks(std::vector<int>* ranks);
  /// A communicator of the survivors, ranked in their old order, with connections
  /// of its own and every collective. Every survivor calls it; it returns once all
  /// of them have joined it. This communicator stays failed (destroy it).
  Status shrink(std::unique_ptr<Communicator>* out);

  /// Fails pending and future operations of this rank with kAborted (the one in
  /// flight within 1 s, on every transport); peers see a remote error once this
  /// rank stops taking part. Any thread.
  void abort();
  /// The first asynchronous error of this communicator (ok if none).
  Status asyncError() const;

  // Collectives. `stream` null = the current device's default stream.
  Status allReduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                   runtime::Stream* stream);
  Status allGather(const void* send, void* recv, std::size_t sendCount, DataType type,
                   runtime::Stream* stream);
  /// recvCounts[i] elements from rank i land at recv + displs[i] elements.
  Status allGatherV(const void* send, std::size_t sendCount, void* recv,
                    const std::vector<std::size_t>& recvCounts,
                    const std::vector<std::size_t>& displs, DataType type,
                    runtime::Stream* stream);
  Status reduceScatter(const void* send, void* recv, std::size_t recvCount, DataType type,
                       ReduceOp op, runtime::Stream* stream);
  Status reduceScatterV(const void* send, const std::vector<std::size_t>& sendCounts,
                        const std::vector<std::size_t>& displs, void* recv,
                        std::size_t recvCount, DataType type, ReduceOp op,
                        runtime::Stream* stream);
  Status broadcast(void* buffer, std::size_t count, DataType type, int root,
                   runtime::Stream* stream);
  Status reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                int root, runtime::Stream* stream);
  /// Root receives size() * count elements, rank i's at recv + i * count.
  Status gather(const void* send, void* recv, std::size_t count, DataType type, int root,
                runtime::Stream* stream);
  /// Root sends size() * count elements, rank i gets send + i * count.
  Status scatter(const void* send, void* recv, std::size_t count, DataType type, int root,
                 runtime::Stream* stream);
  /// count elements to and from every rank.
  Status allToAll(const void* send, void* recv, std::size_t count, DataType type,
                  runtime::Stream* stream);
  Status allToAllV(const void* send, const std::vector<std::size_t>& sendCounts,
                   const std::vector<std::size_t>& sendDispls, void* recv,
                   const std::vector<std::size_t>& recvCounts,
                   const std::vector<std::size_t>& recvDispls, DataType type,
                   runtime::Stream* stream);
  Status send(const void* buffer, std::size_t count, DataType type, int peer,
              runtime::Stream* stream);
  Status recv(void* buffer, std::size_t count, DataType type, int peer, runtime::Stream* stream);
  /// All items progress together (no ordering deadlock between them).
  Status batchSendRecv(const std::vector<SendRecvItem>& items, runtime::Stream* stream);
  Status barrier(runtime::Stream* stream);

  /// Group calls: between groupStart and groupEnd, operations of this thread are
  /// collected and launched together at groupEnd (sends/recvs progress jointly).
  static Status groupStart();
  static Status groupEnd();

  class Impl;

 private:
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cohort
