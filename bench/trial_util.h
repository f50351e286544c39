// What the trial workers (shrink_trial, flap_trial) measure: a clock every
// process of the machine shares, and what a process has open.
#pragma once

#include <dirent.h>
#include <time.h>

#include <cstring>

namespace cohort::bench {

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine.
inline long long nowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

/// Entries of `dir` (/proc/self/fd: open descriptors, /proc/self/task: threads);
/// -1 if it cannot be read.
inline int entries(const char* dir) {
  DIR* d = ::opendir(dir);
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n - (std::strcmp(dir, "/proc/self/fd") == 0 ? 1 : 0);  // opendir's own
}

}  // namespace cohort::bench
