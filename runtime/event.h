// Events: a mark in a stream that other streams and the host wait for.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <map>
#include <vector>

#include "cohort/runtime.h"
#include "runtime/capture.h"
#include "common/wait.h"

namespace cohort::runtime {

class Stream;
class IpcEvent;

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
  CapturedRecord captured;  // guarded by mu: the latest record, if a capture recorded it
  std::uint32_t id = 0;              // unique in the process (eventDescribe)
  // Waits queued by streamWaitEventFor (timed, not lazy) that have not run or been
  // skipped yet: with listeners, what eventDescribe reports as pending waits.
  std::atomic<int> timedWaits{0};
  // Set for an IPC event (ipc_event.h): its records and waits go through memory
  // shared with other processes instead of the fields above.
  std::shared_ptr<IpcEvent> ipc;
  // An external event (eventCreateExternal) is a flag: set while a record completed
  // after the latest reset, which leaves `floor` at the completions so far. Fixed at
  // creation, before the event is shared.
  bool external = false;
  std::atomic<std::uint64_t> floor{0};

  /// Runs on the recording stream's worker; tells the listeners.
  void complete(std::uint64_t generation, Status streamError, const std::string& streamName);
  void addListener(Stream* s);
  void removeListener(Stream* s);
  bool done(std::uint64_t generation) const {
    return completed.load(std::memory_order_acquire) >= generation;
  }
  /// What a wait for `generation` waits for: that record, or for an external event a
  /// record after its latest reset (the generation does not matter).
  bool reached(std::uint64_t generation) const {
    if (!external) return done(generation);
    return completed.load(std::memory_order_acquire) > floor.load(std::memory_order_acquire);
  }
};

class Event {
 public:
  Event() : state_(std::make_shared<EventState>()) {
    state_->id = nextId().fetch_add(1, std::memory_order_relaxed) + 1;
    live().fetch_add(1, std::memory_order_relaxed);
  }
  ~Event() { live().fetch_sub(1, std::memory_order_relaxed); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  const std::shared_ptr<EventState>& state() const { return state_; }
  /// Events that exist in this process (eventCount).
  static std::size_t liveCount() { return live().load(std::memory_order_relaxed); }

 private:
  static std::atomic<std::uint32_t>& nextId() {
    static std::atomic<std::uint32_t> next{0};
    return next;
  }
  static std::atomic<std::size_t>& live() {
    static std::atomic<std::size_t> count{0};
    return count;
  }
  std::shared_ptr<EventState> state_;
};

}  // namespace cohort::runtime
