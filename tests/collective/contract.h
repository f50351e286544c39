// The asynchronous contract as programs meet it (HCCL's and NCCL's; DESIGN.md): a
// collective call, and every later call that queues work on a stream, returns
// without waiting for another rank. Each scenario is run by every rank of a job,
// whatever runs the ranks (threads of one process: contract_test.cc; processes
// under mpirun: contract_mpi.cc), and checks every element of every output
// against values computed here, independently of the library:
//   barrier after   rank 0 queues the call, then meets the others on the host
//                   (they meet first and call after): a call that waited for a
//                   peer would never return;
//   work behind     the same, with a copy, a memset, an event record and a wait
//                   on another stream queued behind the call before the meeting;
//   opposite order  two communicators over the same ranks, one stream each: even
//                   ranks call on A then B, odd ranks on B then A.
// A call that does not return within Watchdog::kCallLimit (or a synchronize
// within kSyncLimit) ends the process with a line naming the rank, the call and
// the scenario: a hang fails within seconds, not at ctest's timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cohort/communicator.h"

namespace cohort::testing {

enum class ContractCall { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kAllToAll,
                          kSendRecv, kBatchSendRecv };
enum class ContractScenario { kBarrierAfter, kWorkBehind, kOppositeOrder };
const char* contractCallName(ContractCall c);
const char* contractScenarioName(ContractScenario s);
inline const std::vector<ContractCall>& allContractCalls() {
  static const std::vector<ContractCall> calls = {
      ContractCall::kAllReduce, ContractCall::kReduceScatter, ContractCall::kAllGather,
      ContractCall::kBroadcast, ContractCall::kAllToAll,      ContractCall::kSendRecv,
      ContractCall::kBatchSendRecv};
  return calls;
}
/// The sizes the issue names: bytes of one rank's block (8 B ... 16 MiB).
inline const std::vector<std::size_t>& contractSizes() {
  static const std::vector<std::size_t> sizes = {8, 1 << 10, 64 << 10, 1 << 20, 16 << 20};
  return sizes;
}

/// Ends the process when a guarded section outlives its limit, printing what it
/// was. Thread-safe; one per process, its thread lives as long as it does.
class Watchdog {
 public:
  static constexpr std::chrono::seconds kCallLimit{10};
  static constexpr std::chrono::seconds kSyncLimit{120};
  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  /// Guards the scope it lives in (one per thread at a time).
  class Guard {
   public:
    Guard(Watchdog& w, std::string what, std::chrono::seconds limit = kCallLimit);
    ~Guard();
   private:
    Watchdog& w_;
    std::size_t slot_;
  };

 private:
  struct Entry {
    bool active = false;
    std::string what;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::seconds limit{0};
  };
  void loop();
  std::mutex mu_;
  std::vector<Entry> entries_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// What one rank brings to a scenario: two communicators over the same ranks
/// (same rank numbers), a stream for each on the rank's device, and the meeting
/// on the host (returns when every rank has entered it).
struct ContractRank {
  Communicator* a = nullptr;
  Communicator* b = nullptr;
  runtime::Stream* sa = nullptr;
  runtime::Stream* sb = nullptr;
  std::function<void()> hostBarrier;
};

/// Runs one scenario of `call` with `bytes` per block on this rank; "" or what
/// went wrong. Device memory is kept between calls (ContractBuffers) so that the
/// scenarios take no page faults after the first of each size.
std::string runContract(const ContractRank& me, ContractScenario scenario, ContractCall call,
                        std::size_t bytes, Watchdog& watchdog);
/// Frees what runContract kept for this thread's rank.
void releaseContractBuffers();

}  // namespace cohort::testing
