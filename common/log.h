// Cohort's one logger: level x subsystem, set by COHORT_LOG_LEVEL and
// COHORT_LOG_SUBSYS; each line carries time, pid, rank, device and subsystem;
// COHORT_LOG_DIR adds one file per process. Thread-safe.
//
//   COHORT_LOG(kInfo, "runtime", "stream {} created on device {}", id, dev);
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "common/config.h"

namespace cohort::log {

/// True when a message of this level and subsystem would be written.
bool enabled(LogLevel level, std::string_view subsystem);
/// Writes one line (the message is already formatted).
void write(LogLevel level, std::string_view subsystem, std::string_view message);
/// The rank shown in every line of this process (-1 = none), unless a RankScope on the
/// logging thread names another: a process may hold several ranks (one per device thread).
void setRank(int rank);
/// Lines this thread writes while the scope lives show `rank` (nested scopes restore the outer
/// one). The communicator opens one around everything it does on a thread. Not copyable.
class RankScope {
 public:
  explicit RankScope(int rank);
  ~RankScope();
  RankScope(const RankScope&) = delete;
  RankScope& operator=(const RankScope&) = delete;

 private:
  int outer_;
};
/// The device shown in this thread's lines (-1 = none); the runtime sets it.
void setThreadDevice(int device);
/// The rank that uses `device` in this process (-1 = none): lines of a thread on that
/// device without a RankScope (the runtime's stream workers) show it. The first
/// communicator on a device names it and clears it when it goes; a sub-communicator on
/// the same device leaves it alone.
void claimDeviceRank(int device, int rank, const void* owner);
void releaseDeviceRank(int device, const void* owner);
/// Re-reads the log settings (tests; a changed config).
void configure(const Config& config);

}  // namespace cohort::log

#define COHORT_LOG(level, subsystem, ...)                                              \
  do {                                                                                 \
    if (::cohort::log::enabled(::cohort::LogLevel::level, subsystem))                  \
      ::cohort::log::write(::cohort::LogLevel::level, subsystem, fmt::format(__VA_ARGS__)); \
  } while (0)
