// Host callbacks (aclrtLaunchCallback) on their way from a stream to the thread
// subscribed to it (aclrtSubscribeReport), which runs them in aclrtProcessReport.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "acl/acl_rt.h"
#include "acl/api_call.h"
#include "cohort/runtime.h"

namespace cohort::acl {

/// A launched callback becomes a kernel on its stream. When the stream reaches it,
/// the kernel queues the callback for the stream's subscribed thread; a blocking
/// callback's kernel then waits (up to COHORT_EXEC_TIMEOUT) until that thread has
/// run it, so later tasks of the stream wait too. Process-wide, thread-safe.
class ReportHub {
 public:
  static ReportHub& get();

  Outcome subscribe(std::uint64_t thread, runtime::Stream* stream);
  /// Drops the stream's queued callbacks: a blocking one fails its stream.
  Outcome unsubscribe(std::uint64_t thread, runtime::Stream* stream);
  Outcome launch(aclrtCallback fn, void* userData, bool blocking, runtime::Stream* stream);
  /// Runs the callbacks queued for `thread`, waiting up to timeoutMs (< 0: forever)
  /// for the first one.
  Outcome process(std::uint64_t thread, long timeoutMs);

  /// A destroyed stream's subscription goes (its work has drained).
  void forgetStream(runtime::Stream* stream);
  /// Subscriptions of streams that no longer exist go (after a device reset).
  void forgetDeadStreams();
  /// aclFinalize: every queued callback is dropped, every subscription goes.
  void reset();
  /// Whether a callback waits in `thread`'s queue (a stream reached it, nobody ran it
  /// yet): what no ACL call shows, for tests that must know it was handed over.
  bool holds(std::uint64_t thread);

 private:
  struct Item;
  ReportHub() = default;
  Status deliver(runtime::Stream* stream, const std::shared_ptr<Item>& item);
  Status awaitProcessed(const std::shared_ptr<Item>& item);
  void dropLocked(runtime::Stream* stream);  // all queued items of stream (null: all)
  void removeLocked(std::map<runtime::Stream*, std::uint64_t>::iterator subscription);

  std::mutex mu_;
  std::condition_variable ready_;  // a queue got an item, or a thread lost its subscription
  std::map<runtime::Stream*, std::uint64_t> owner_;                    // stream -> thread
  std::map<std::uint64_t, std::deque<std::shared_ptr<Item>>> queues_;  // per subscribed thread
};

}  // namespace cohort::acl
