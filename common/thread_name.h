// The name a thread shows in top -H, perf, gdb and /proc/<pid>/task/<tid>/comm,
// so that a profile tells a stream's worker from the caller's threads.
#pragma once

#include <string>

namespace cohort {

/// Names the calling thread; the kernel keeps the first 15 characters.
void nameThisThread(const std::string& name);

}  // namespace cohort
