#include "transport/bootstrap.h"

#include <fmt/format.h>

#include "common/error.h"

namespace cohort::transport {

Bootstrap::Bootstrap(std::shared_ptr<Store> store, int rank, int size)
    : store_(std::move(store)), rank_(rank), size_(size) {}

std::string Bootstrap::roundKey(const char* what, int rank) const {
  return fmt::format("{}/{}/{}", what, round_, rank);
}

Status Bootstrap::allgather(const Bytes& mine, std::vector<Bytes>* all, Deadline deadline) {
  COHORT_RETURN_IF_ERROR(store_->set(roundKey("ag", rank_), mine));
  all->assign(static_cast<std::size_t>(size_), Bytes());
  std::vector<std::string> keys;
  for (int r = 0; r < size_; ++r) keys.push_back(roundKey("ag", r));
  Status s = store_->wait(keys, deadline);
  if (!s.ok()) {
    // Name the ranks that never arrived, not just the keys.
    std::string missing;
    for (int r = 0; r < size_; ++r) {
      bool exists = false;
      if (store_->check(keys[static_cast<std::size_t>(r)], &exists).ok() && !exists) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    ++round_;
    return makeError(s.code(), "bootstrap of rank {} (of {}): rank(s) {} never arrived: {}",
                     rank_, size_, missing.empty() ? "?" : missing, s.message());
  }
  for (int r = 0; r < size_; ++r) {
    COHORT_RETURN_IF_ERROR(
        store_->get(keys[static_cast<std::size_t>(r)], &(*all)[static_cast<std::size_t>(r)], deadline));
  }
  ++round_;
  return Status::Ok();
}

Status Bootstrap::barrier(Deadline deadline) {
  std::vector<Bytes> ignored;
  return allgather(Bytes{1}, &ignored, deadline);
}

Status Bootstrap::broadcast(int root, Bytes* blob, Deadline deadline) {
  const std::string key = roundKey("bc", root);
  ++round_;
  if (rank_ == root) return store_->set(key, *blob);
  Status s = store_->get(key, blob, deadline);
  if (!s.ok()) {
    return makeError(s.code(), "bootstrap broadcast: rank {} never sent (waiting on rank {}): {}",
                     root, rank_, s.message());
  }
  return Status::Ok();
}

Status Bootstrap::send(int peer, const std::string& tag, const Bytes& blob) {
  return store_->set(fmt::format("p2p/{}/{}/{}", rank_, peer, tag), blob);
}

Status Bootstrap::recv(int peer, const std::string& tag, Bytes* blob, Deadline deadline) {
  Status s = store_->get(fmt::format("p2p/{}/{}/{}", peer, rank_, tag), blob, deadline);
  if (!s.ok()) {
    return makeError(s.code(), "bootstrap: rank {} never sent '{}' to rank {}: {}", peer, tag,
                     rank_, s.message());
  }
  return Status::Ok();
}

}  // namespace cohort::transport
