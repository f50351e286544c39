// Helpers for the tests of the stream family (streams, events, notifies, values, host
// functions, built-in tasks): a log of the order kernels ran in, and a short sleep.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {

/// Kernels append to it in the order their streams run them. Thread-safe.
class OrderLog {
 public:
  /// Queues a kernel on `stream` that appends `mark`.
  void mark(aclrtStream stream, int mark) {
    ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream),
                                    [this, mark](runtime::Stream*) {
                                      std::lock_guard<std::mutex> lock(mu_);
                                      marks_.push_back(mark);
                                      return Status::Ok();
                                    }));
  }
  std::vector<int> marks() {
    std::lock_guard<std::mutex> lock(mu_);
    return marks_;
  }

 private:
  std::mutex mu_;
  std::vector<int> marks_;
};

inline void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace cohort::acltest
