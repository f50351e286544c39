// cohortrun's signals as readable events: SIGCHLD, SIGINT, SIGTERM and SIGHUP are
// blocked and read from a signalfd in the supervisor's poll loop, so no handler
// runs at an awkward moment and no wake-up is lost.
#pragma once

#include <memory>

#include "cohort/status.h"

namespace cohort::launcher {

/// Owns the signalfd. Open it on the main thread before any other thread starts
/// (threads inherit the blocked mask; an unblocked thread would take the default
/// action). Also ignores SIGPIPE (a closed output must not kill cohortrun).
/// Destruction closes the fd; the signals stay blocked. Not thread-safe.
class SignalChannel {
 public:
  static Status open(std::unique_ptr<SignalChannel>* out);
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;

  int fd() const { return fd_; }
  /// The next pending signal number, or 0 when none is pending.
  int next();

 private:
  explicit SignalChannel(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace cohort::launcher
