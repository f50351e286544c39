// The communicators handed out through the C API. Handles are opaque numbers,
// never addresses: a handle used after HcclCommDestroy is recognised as dead (and
// can never alias a newer communicator), and an unknown one is never dereferenced.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "cohort/communicator.h"
#include "hccl/hccl_types.h"

namespace cohort::hccl {

/// One live communicator. `comm` is used by one thread at a time (HCCL's rule);
/// the other members are guarded by `mu`.
struct CommEntry {
  std::unique_ptr<Communicator> comm;
  std::string name;
  std::atomic<bool> suspended{false};  // HcclCommSuspend: operations fail until resumed
  std::mutex mu;
  /// Rank lists of the sub-communicators made from this one: the C++ API keys a
  /// sub-communicator's rendezvous by its rank list, so a list can be used once.
  std::set<std::string> subRankLists;
};

/// Process-wide, thread-safe.
class CommRegistry {
 public:
  static CommRegistry& get();

  /// Registers a communicator; returns its new handle (never null).
  HcclComm add(std::unique_ptr<Communicator> comm, std::string name);
  /// The entry of a live handle, or null. Holding the returned pointer marks the
  /// communicator as in use: remove() refuses it meanwhile.
  std::shared_ptr<CommEntry> find(HcclComm handle);
  /// The handle of the live communicator named `name` (null if none).
  HcclComm findByName(const std::string& name);

  enum class Removal { kRemoved, kUnknown, kBusy };
  /// Takes a live, unused entry out of the registry (into *out); kBusy while a
  /// call holds it, kUnknown for a handle that is not live.
  Removal remove(HcclComm handle, std::shared_ptr<CommEntry>* out);

 private:
  CommRegistry() = default;

  std::mutex mu_;
  std::uint64_t next_ = 1;
  std::map<std::uintptr_t, std::shared_ptr<CommEntry>> live_;
};

}  // namespace cohort::hccl
