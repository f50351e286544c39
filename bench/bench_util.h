// What the two-process transport benchmarks (transport_bench, transport_bench_tcp)
// share: a clock, failing loudly, whole reads and writes on the pipes between
// their processes, medians, and waiting for a connection to go idle.
#pragma once

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/wait.h"
#include "transport/connection.h"

namespace cohort::bench {

inline double nowSeconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

/// Ends the process with `what`, named by the program and its pid (both
/// processes of a benchmark print).
[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "%s (pid %d): %s\n", program_invocation_short_name, ::getpid(),
               what.c_str());
  std::exit(1);
}

inline void check(const Status& s) {
  if (!s.ok()) die(s.toString());
}

inline void writeAll(int fd, const void* p, std::size_t n) {
  for (auto* c = static_cast<const char*>(p); n > 0;) {
    const ssize_t k = ::write(fd, c, n);
    if (k <= 0) die("write failed (peer gone?)");
    c += k;
    n -= static_cast<std::size_t>(k);
  }
}

inline void readAll(int fd, void* p, std::size_t n) {
  for (auto* c = static_cast<char*>(p); n > 0;) {
    const ssize_t k = ::read(fd, c, n);
    if (k <= 0) die("read failed (peer gone?)");
    c += k;
    n -= static_cast<std::size_t>(k);
  }
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// Waits until `c` has nothing left to send or receive, failing after `timeoutMs`.
inline void drain(transport::Connection& c, long timeoutMs = 120000) {
  transport::Connection* one = &c;
  check(transport::waitIdle(&one, 1, Deadline::afterMs(timeoutMs), "benchmark"));
}

}  // namespace cohort::bench
