// ProcessGroupCohort: the c10d backend "cohort", Cohort's communicator behind
// torch.distributed.
#pragma once

#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "cohort/runtime.h"
#include "torch_cohort/cohort_work.h"

namespace cohort::torch_cohort {

// torch 1.x plugins return a ProcessGroup; from 2.0 on they return a Backend,
// which a ProcessGroup then wraps (same operation signatures).
#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

/// One torch process group: a Cohort communicator of its ranks, on this process's
/// emulated device, and a stream of its own that every operation of the group is
/// queued on (in call order). Built from the store c10d hands a backend (rank 0
/// puts Cohort's root info there) or, for the first group of a process when a rank
/// table is given (COHORT_RANKTABLE, RANK_TABLE_FILE), from the table.
///
/// Tensors are CPU tensors passed to Cohort where they lie (Cohort copies what
/// peers cannot map through its own reused device scratch); operations that take
/// lists of tensors go through one flat tensor per call, owned by the Work.
///
/// Thread-safety: operations from any thread, serialized by a lock (a Cohort
/// communicator takes calls from one thread at a time). Lifetime: c10d owns it
/// (intrusive_ptr); destruction waits for the stream, then finalizes the
/// communicator (which waits, at most the exec timeout, for peers still reading
/// this rank's data).
class ProcessGroupCohort : public BackendBase {
 public:
  ProcessGroupCohort(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout);
  /// A group over a communicator made already (shrink()).
  ProcessGroupCohort(std::unique_ptr<Communicator> comm, std::chrono::milliseconds timeout);
  ~ProcessGroupCohort() override;

  /// After a rank of this group failed: the ranks of the group the survivors agree
  /// failed (Communicator::failedRanks), and a group of the survivors, ranked in
  /// their old order (Communicator::shrink). Every survivor calls them.
  std::vector<int64_t> failedRanks();
  c10::intrusive_ptr<ProcessGroupCohort> shrink();

  const std::string getBackendName() const override { return "cohort"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) override;
  void startCoalescing() override;
#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 0)
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;
#else
  // torch 2.1 on: one Work for the whole group.
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;
#endif
  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;

  /// The emulated device this process's groups run on.
  int device() const { return device_; }
  /// Cohort's choice for the last operation ("allreduce=mesh shm"), for tests.
  std::string lastChoice() const;

 private:
  using Call = std::function<Status(Communicator& comm, runtime::Stream* stream)>;
  /// Queues `call` (what `what` names) on the group's stream and returns its Work,
  /// which holds `outputs` (its result()) and `keep` and runs `finishHost` once done.
  c10::intrusive_ptr<c10d::Work> launch(c10d::OpType type, std::string what,
                                        std::vector<at::Tensor> outputs,
                                        std::vector<at::Tensor> keep, const Call& call,
                                        std::function<void()> finishHost = nullptr);
  /// Launches the open coalescing group; its Works complete together.
  Status launchGroup();
  void checkRoot(int64_t root, const char* op) const;
  void checkPeer(int peer, const char* op) const;

  std::unique_ptr<Communicator> comm_;
  runtime::Stream* stream_ = nullptr;
  int device_ = -1;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;  // one Cohort call at a time
  std::uint64_t sequence_ = 0;                           // under mu_
  bool coalescing_ = false;                              // under mu_
  std::vector<c10::intrusive_ptr<CohortWork>> grouped_;  // Works of the open group
};

/// `bytes` of device memory of the calling thread's current device (set by the
/// process's first group) as a CPU uint8 tensor, freed with the tensor's storage:
/// buffers peers of the node map directly, so collectives on them copy nothing
/// through Cohort's scratch. Throws if the thread has no device.
at::Tensor deviceBytes(int64_t bytes);

/// Makes `store` a process group (the function register_backend is given).
c10::intrusive_ptr<ProcessGroupCohort> createProcessGroup(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    std::chrono::milliseconds timeout);

}  // namespace cohort::torch_cohort
