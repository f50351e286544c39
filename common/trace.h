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
#include <cstdint>
#include <functional>
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

/// An instant on this thread's track, now. Like complete(), these record whether
/// or not tracing is on: callers check enabled().
void instant(const char* cat, std::string name, std::string args = {});
/// The ends of span `id` of category `cat`, which may begin and end on different
/// threads (Chrome's nestable asynchronous events, drawn on a track of their own).
void asyncBegin(const char* cat, std::string name, std::uint64_t id, std::string args = {});
void asyncEnd(const char* cat, std::string name, std::uint64_t id, std::string args = {});
/// `s` escaped to go between the quotes of a JSON string.
std::string escape(const std::string& s);

// Run-time sessions (aclprofStart / aclprofStop) record the same timeline into a
// folder chosen by the program, in a process that COHORT_TRACE does not trace.
// The functions below and the recording functions are thread-safe.

/// A session's filter: false leaves the category's events out of the file. It runs
/// under the trace's lock, so it must not call into the trace (nor wait on a lock).
using CategoryFilter = std::function<bool(const char* cat)>;
/// Starts recording into DIR/cohort-trace-<pid>.json (written by stopSession, or
/// at exit if still running). Earlier sessions' events stay when DIR is the last
/// session's. False when COHORT_TRACE traces the process or a session runs.
bool startSession(const std::string& dir, CategoryFilter keep = {});
/// Stops recording and writes the session's file; false (and the reason in
/// `error`) when no session runs or the file cannot be written.
bool stopSession(std::string* error = nullptr);
/// Whether a session started by startSession is recording.
bool sessionRunning();

/// While it lives, this thread's events go on the track of thread `tid` (a
/// Linux thread id; 0: its own): a thread that does another's work (a
/// synchronize running a stream's tasks) shows it where that work belongs.
class TrackScope {
 public:
  explicit TrackScope(int tid);
  ~TrackScope();
  TrackScope(const TrackScope&) = delete;
  TrackScope& operator=(const TrackScope&) = delete;

 private:
  int outer_;
};

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
