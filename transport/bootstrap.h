// The control plane between the ranks of one communicator, built on a Store:
// allgather, barrier, point-to-point blobs (NCCL's bootstrap API).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/store.h"

namespace cohort::transport {

/// One per rank per communicator. Not thread-safe: one thread drives it (calls are
/// collective: every rank makes the same calls in the same order).
class Bootstrap {
 public:
  /// `store` is shared by all ranks; keys are private to this communicator by the
  /// caller's choice of store prefix.
  Bootstrap(std::shared_ptr<Store> store, int rank, int size);

  int rank() const { return rank_; }
  int size() const { return size_; }
  Store& store() { return *store_; }

  /// Every rank contributes a blob; all receive all blobs, in rank order.
  /// On timeout the error names the ranks whose blob never arrived.
  Status allgather(const Bytes& mine, std::vector<Bytes>* all, Deadline deadline);
  Status barrier(Deadline deadline);
  /// Rank `root`'s blob to everyone.
  Status broadcast(int root, Bytes* blob, Deadline deadline);
  /// Point-to-point blobs, matched by (from, to, tag); each tag used once.
  Status send(int peer, const std::string& tag, const Bytes& blob);
  Status recv(int peer, const std::string& tag, Bytes* blob, Deadline deadline);

 private:
  std::string roundKey(const char* what, int rank) const;

  std::shared_ptr<Store> store_;
  const int rank_;
  const int size_;
  int round_ = 0;  // collective calls so far: keys of each call are distinct
};

}  // namespace cohort::transport
