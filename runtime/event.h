// Events: a mark in a stream that other streams and the host wait for.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <map>
#include <vector>

#include "cohort/runtime.h"
#include "common/wait.h"

namespace cohort::runtime {

class Stream;

/// Shared by the Event handle and by every queued task that records or waits on
/// it, so destroying the handle never leaves a task with a dangling pointer.
struct EventState {
  std::atomic<std::uint64_t> recorded{0};   // generation of the latest record call
  std::atomic<std::uint64_t> completed{0};  // highest generation that has run
  WaitWord word;
  std::mutex mu;
  Status error;  // the recording stream's sticky error at completion
  std::atomic<bool> failed{false};  // error is set (read without mu)
  Clock::time_point time;
  std::string recordedOn;  // stream name of the latest completion
  std::map<Stream*, int> listeners;  // streams with pending waits on this event, and how many

  /// Runs on the recording stream's worker; tells the listeners.
  void complete(std::uint64_t generation, Status streamError, const std::string& streamName);
  void addListener(Stream* s);
  void removeListener(Stream* s);
  bool done(std::uint64_t generation) const {
    return completed.load(std::memory_order_acquire) >= generation;
  }
};

class Event {
 public:
  Event() : state_(std::make_shared<EventState>()) {}
  const std::shared_ptr<EventState>& state() const { return state_; }

 private:
  std::shared_ptr<EventState> state_;
};

}  // namespace cohort::runtime
