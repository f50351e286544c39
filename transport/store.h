// The key-value rendezvous store behind every bootstrap (as Gloo's Store): the
// library never knows how its processes were launched, only how to reach a store.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "common/wait.h"

namespace cohort::transport {

using Bytes = std::vector<std::uint8_t>;

/// Thread-safe. Every blocking call has a deadline; a missed deadline is
/// kTimeout naming the keys still missing.
class Store {
 public:
  virtual ~Store() = default;
  virtual Status set(const std::string& key, const Bytes& value) = 0;
  /// Waits for the key, then returns its value.
  virtual Status get(const std::string& key, Bytes* value, Deadline deadline) = 0;
  /// Waits until every key exists.
  virtual Status wait(const std::vector<std::string>& keys, Deadline deadline) = 0;
  /// Atomically adds delta to the integer at key (0 when absent); returns the new value.
  virtual Status add(const std::string& key, std::int64_t delta, std::int64_t* result) = 0;
  /// Whether the key exists now (no waiting).
  virtual Status check(const std::string& key, bool* exists) = 0;
  /// set() that gives up at `deadline` (a failure report must not wait for a
  /// stuck store): kUnavailable if the store did not answer by then. Stores
  /// whose set never blocks keep this default.
  virtual Status setBefore(const std::string& key, const Bytes& value, Deadline deadline) {
    (void)deadline;
    return set(key, value);
  }
  /// The value if the key exists when the store looks, without waiting for it
  /// (kTimeout when absent); gives up on the reply at `replyBy` (same reasoning),
  /// kUnavailable then.
  virtual Status peek(const std::string& key, Bytes* value, Deadline replyBy) {
    (void)replyBy;
    return get(key, value, Deadline::afterMs(0));
  }
  /// Whether the store lives in this process's memory (it dies with nothing a
  /// peer could survive).
  virtual bool inProcess() const { return false; }
};

/// A store in this process's memory: ranks as threads, and the state a store
/// server keeps. Thread-safe.
class MemoryStore : public Store {
 public:
  Status set(const std::string& key, const Bytes& value) override;
  Status get(const std::string& key, Bytes* value, Deadline deadline) override;
  Status wait(const std::vector<std::string>& keys, Deadline deadline) override;
  Status add(const std::string& key, std::int64_t delta, std::int64_t* result) override;
  Status check(const std::string& key, bool* exists) override;
  bool inProcess() const override { return true; }

 private:
  std::mutex mu_;
  std::map<std::string, Bytes> values_;
  WaitWord changed_;
};

/// Prefixes every key, so communicators (and splits) sharing a store never
/// collide. Thread-safe if the inner store is.
class PrefixStore : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix)) {}
  Status set(const std::string& key, const Bytes& value) override;
  Status get(const std::string& key, Bytes* value, Deadline deadline) override;
  Status wait(const std::vector<std::string>& keys, Deadline deadline) override;
  Status add(const std::string& key, std::int64_t delta, std::int64_t* result) override;
  Status check(const std::string& key, bool* exists) override;
  Status setBefore(const std::string& key, const Bytes& value, Deadline deadline) override;
  Status peek(const std::string& key, Bytes* value, Deadline replyBy) override;
  bool inProcess() const override { return inner_->inProcess(); }

 private:
  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

/// Encodes/decodes a signed 64-bit integer as store bytes (little endian).
Bytes encodeInt(std::int64_t v);
std::int64_t decodeInt(const Bytes& b);

}  // namespace cohort::transport
