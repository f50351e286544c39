// The nodes of a multi-node job in touch through the job's store. The node that
// serves the store must not stop serving while another node's ranks may still
// use it, so every other node's cohortrun beats ("alive") while its ranks run and
// reports "done" at the end; the serving node, once its own ranks succeeded,
// keeps the store up until every other node is done or has stopped beating.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "common/wait.h"
#include "launcher/launch_plan.h"
#include "transport/root_info.h"

namespace cohort::launcher {

/// A no-op for one-node jobs. Owns the heartbeat thread of a non-serving node
/// (joined by finish() or the destructor). Methods are called from one thread.
class NodeSync {
 public:
  /// A node silent this long (no beat, no report) is not waited for.
  static constexpr std::chrono::seconds kSilence{10};

  NodeSync(const LaunchPlan& plan, const transport::RootInfo& root);
  ~NodeSync();

  /// Starts beating (non-serving nodes). Call after the ranks started.
  void start();
  /// Ends the job for this node: a non-serving node reports `exitCode`; the
  /// serving node, when `exitCode` is 0, waits for the other nodes until they are
  /// done, silent, `deadline` passes or `interrupted()` says so.
  void finish(int exitCode, Deadline deadline, const std::function<bool()>& interrupted);

 private:
  /// The last beat count seen from a node, and since when.
  struct Silence {
    std::int64_t beats;
    std::chrono::steady_clock::time_point since;
  };

  bool connect(long timeoutMs);
  /// Whether a node is done (or silent too long); reports a failed node.
  bool nodeEnded(int node, Silence* silence);
  void beat();
  void waitForNodes(Deadline deadline, const std::function<bool()>& interrupted);

  const bool enabled_;
  const bool serving_;
  const int node_;
  const int nodes_;
  const transport::RootInfo root_;
  std::shared_ptr<transport::Store> store_;
  std::thread beater_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
};

}  // namespace cohort::launcher
