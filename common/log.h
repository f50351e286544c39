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
/// The rank shown in every line of this process (-1 = none).
void setRank(int rank);
/// The device shown in this thread's lines (-1 = none); the runtime sets it.
void setThreadDevice(int device);
/// Re-reads the log settings (tests; a changed config).
void configure(const Config& config);

}  // namespace cohort::log

#define COHORT_LOG(level, subsystem, ...)                                              \
  do {                                                                                 \
    if (::cohort::log::enabled(::cohort::LogLevel::level, subsystem))                  \
      ::cohort::log::write(::cohort::LogLevel::level, subsystem, fmt::format(__VA_ARGS__)); \
  } while (0)
