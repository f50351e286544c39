// COHORT_TRACE=DIR: one timeline per process in Chrome's trace format
// (DIR/cohort-trace-<pid>.json, written at exit or by flush()), which Perfetto
// and chrome://tracing open; `cohort-trace merge DIR` joins a job's files into
// one. Spans are recorded per thread without locks shared between threads; when
// tracing is off a span costs one relaxed load.
//
//   trace::Span span("collective", "allreduce #12");
//   span.arg("algorithm", "mesh");
#pragma once

#include <atomic>
#include <string>
#include <utility>

namespace cohort::trace {

namespace detail {
extern std::atomic<int> gState;  // 0 not read yet, 1 off, 2 on
int readConfig();
}  // namespace detail

/// Whether COHORT_TRACE is set (read from the configuration on first use).
inline bool enabled() {
  int s = detail::gState.load(std::memory_order_relaxed);
  if (s == 0) s = detail::readConfig();
  return s == 2;
}
/// Microseconds on the machine's monotonic clock: comparable between processes.
double nowUs();
/// Records [startUs, now) as `name` in category `cat` on this thread's track;
/// `args` is a JSON object's members ("\"k\":1") or empty.
void complete(const char* cat, std::string name, double startUs, std::string args = {});
/// The name of this thread's track ("device 0 stream 1").
void nameThread(const std::string& name);
/// The name of this process's track group ("rank 3"); the last call wins.
void nameProcess(const std::string& name);
/// Writes this process's file now (again at exit, with what came since).
void flush();
/// Reads COHORT_TRACE again (tests, cohort-perf --trace).
void configure(const std::string& dir);

/// A span from construction to destruction (nothing when tracing is off).
class Span {
 public:
  Span(const char* cat, const char* name) : cat_(cat), on_(enabled()) {
    if (on_) {
      name_ = name;
      start_ = nowUs();
    }
  }
  Span(const char* cat, std::string name) : cat_(cat), on_(enabled()) {
    if (on_) {
      name_ = std::move(name);
      start_ = nowUs();
    }
  }
  ~Span() {
    if (on_) complete(cat_, std::move(name_), start_, std::move(args_));
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  bool on() const { return on_; }
  /// Adds "key": "value" to the span's args (a string value, escaped).
  void arg(const char* key, const std::string& value);
  /// Adds "key": number.
  void arg(const char* key, double value);

 private:
  const char* cat_;
  bool on_;
  std::string name_;
  std::string args_;
  double start_ = 0;
};

}  // namespace cohort::trace
