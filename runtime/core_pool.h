// The emulated AI Cores of a device: a pool of threads that runs the blocks of a
// kernel (launchBlocks). The thread that runs the kernel task (a stream's worker)
// always runs blocks itself, so a launch finishes even when every pool thread is
// busy with another stream's kernel; idle pool threads join it and take blocks.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "cohort/runtime.h"

namespace cohort::runtime {

/// One device's cores. Thread-safe; created on the device's first kernel and kept
/// (with its sleeping threads) for the life of the process. A forked child makes
/// pools of its own (forgetCorePoolsInChild).
class CorePool {
 public:
  explicit CorePool(int threads);
  CorePool(const CorePool&) = delete;
  CorePool& operator=(const CorePool&) = delete;

  /// Runs block(0) ... block(blocks - 1), at most `cores` at once, on this thread and
  /// the pool's. The first failing block's status is returned; blocks not yet started
  /// then never start, as a core's exception stops an AI Core kernel. A block that
  /// faults fails with kKernelFault naming kernel `name` (block_fault.cc).
  Status run(std::uint32_t blocks, std::uint32_t cores, const BlockFunction& block,
             const std::string& name = "kernel");

  /// The pool of device `device`, made on first use.
  static CorePool& of(int device);

 private:
  struct Job;
  void startThreads();
  void serve();
  static void work(Job& job);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> offers_;  // jobs that still take helpers
  const int size_;        // helper threads (started detached, kept for the process)
  bool started_ = false;  // under mu_
};

/// In a forked child (fork_handlers.cc): the parent's pools are left behind.
void forgetCorePoolsInChild();

/// Calls block(index) on this thread; a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) while
/// it runs returns kKernelFault naming the kernel, the block, the signal and the
/// address instead of ending the process. The handlers are installed on first use;
/// a fault outside every block goes to the disposition there was before.
Status runBlockCatchingFaults(const BlockFunction& block, std::uint32_t index,
                              std::uint32_t blocks, const std::string& name);

}  // namespace cohort::runtime
