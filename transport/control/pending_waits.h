// The store server's waiting requests (get/wait for keys not set yet). The I/O
// thread must never block on MemoryStore::wait, so a request whose keys are
// missing is parked here and answered when its last key arrives or its timer
// expires. Each parked request is indexed under one missing key only, so a set
// re-examines just the requests waiting on that key.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "transport/store.h"

namespace cohort::transport::control {

/// Not thread-safe: used only from the server's I/O thread. Owns its entries;
/// destroying it drops them without answering.
class PendingWaits {
 public:
  /// Called exactly once with ok (all keys present) or kTimeout naming the missing keys.
  using Reply = std::function<void(const Status&)>;

  PendingWaits(boost::asio::io_context& io, MemoryStore& store) : io_(io), store_(store) {}

  /// Answers at once when every key exists (or timeoutMs == 0); otherwise parks
  /// the request. `owner` identifies the connection; timeoutMs < 0 = never.
  void add(std::uint64_t owner, std::vector<std::string> keys, std::int64_t timeoutMs, Reply reply);
  /// A key was set or added: answers the requests it completes.
  void keySet(const std::string& key);
  /// The connection closed: drops its requests without answering.
  void dropOwner(std::uint64_t owner);
  /// Server shutdown: drops everything.
  void clear();
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::uint64_t owner = 0;
    std::vector<std::string> keys;
    std::size_t next = 0;  // keys before this one are known present
    Reply reply;
    std::unique_ptr<boost::asio::steady_timer> timer;
    std::multimap<std::string, std::uint64_t>::iterator indexed;
  };

  bool exists(const std::string& key);
  /// Advances e.next past present keys; true when none is missing.
  bool advance(Entry& e);
  void expire(std::uint64_t id);
  void erase(std::map<std::uint64_t, Entry>::iterator it);

  boost::asio::io_context& io_;
  MemoryStore& store_;
  std::uint64_t nextId_ = 1;
  std::map<std::uint64_t, Entry> entries_;
  std::multimap<std::string, std::uint64_t> byKey_;  // first missing key -> entry id
};

}  // namespace cohort::transport::control
