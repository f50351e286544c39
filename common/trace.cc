#include "common/trace.h"

#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "common/config.h"

namespace cohort::trace {

namespace detail {
std::atomic<int> gState{0};
int readConfig() {
  // Once: a thread that reads the state late must not switch off the session that another
  // thread started meanwhile (it cleared the session's folder, so nothing was written).
  static std::once_flag once;
  std::call_once(once, [] {
    if (gState.load() == 0) configure(Config::global().traceDir);
  });
  return gState.load();
}
}  // namespace detail

namespace {

struct Event {
  const char* cat;
  std::string name;
  double start, dur;
  std::string args;
  char phase = 'X';      // X complete, i instant, b / e asynchronous begin / end
  std::uint64_t id = 0;  // of an asynchronous span
  int track = 0;         // the track's thread id (0: the recording thread's)
};

// One per thread that recorded something; owned by the registry so events of
// threads that ended are still written.
struct ThreadLog {
  std::mutex mu;  // the owner appends, flush() reads: uncontended in practice
  int tid = 0;
  std::string name;
  std::vector<Event> events;
};

struct Registry {
  std::mutex mu;
  std::string dir;
  std::string processName;
  std::vector<std::unique_ptr<ThreadLog>> threads;
  bool atExit = false;
  bool session = false;     // dir is a run-time session's (startSession)
  std::string sessionDir;   // the last session's folder
  CategoryFilter keep;      // the session's filter (empty: everything)
};

// The track name given before this thread had a log (while tracing was off).
thread_local std::string tPendingName;
// The track this thread records on (0: its own): TrackScope.
thread_local int tTrack = 0;

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may outlive statics
  return *r;
}

ThreadLog& mine() {
  thread_local ThreadLog* log = nullptr;
  if (log == nullptr) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.threads.push_back(std::make_unique<ThreadLog>());
    log = r.threads.back().get();
    log->tid = static_cast<int>(::gettid());
    log->name = tPendingName;
  }
  return *log;
}

void record(Event event) {
  event.track = tTrack;
  ThreadLog& t = mine();
  std::lock_guard<std::mutex> lock(t.mu);
  t.events.push_back(std::move(event));
}

// Writes the registry's events to its folder; false (reason in `error`) if it cannot.
bool writeLocked(const Registry& r, std::string* error) {
  if (r.dir.empty()) return true;
  const int pid = static_cast<int>(::getpid());
  const std::string path = fmt::format("{}/cohort-trace-{}.json", r.dir, pid);
  std::error_code ignored;  // a failure shows as the open's below
  std::filesystem::create_directories(r.dir, ignored);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    if (error != nullptr) *error = fmt::format("cannot write {}", path);
    std::fprintf(stderr, "cohort: %s: cannot write %s\n", r.session ? "profiling" : "COHORT_TRACE",
                 path.c_str());
    return false;
  }
  std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  std::fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"%s\"}}",
               pid, escape(r.processName.empty() ? fmt::format("pid {}", pid) : r.processName).c_str());
  for (const auto& t : r.threads) {
    std::lock_guard<std::mutex> tl(t->mu);
    if (!t->name.empty()) {
      std::fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                   pid, t->tid, escape(t->name).c_str());
    }
    for (const Event& e : t->events) {
      if (r.session && r.keep && !r.keep(e.cat)) continue;
      const int tid = e.track != 0 ? e.track : t->tid;
      if (e.phase == 'X') {
        std::fprintf(f,
                     ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
                     "\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}}",
                     e.cat, escape(e.name).c_str(), pid, tid, e.start, e.dur, e.args.c_str());
      } else if (e.phase == 'i') {
        std::fprintf(f,
                     ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,"
                     "\"tid\":%d,\"ts\":%.3f,\"args\":{%s}}",
                     e.cat, escape(e.name).c_str(), pid, tid, e.start, e.args.c_str());
      } else {
        std::fprintf(f,
                     ",\n{\"ph\":\"%c\",\"cat\":\"%s\",\"name\":\"%s\",\"id\":\"0x%llx\","
                     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{%s}}",
                     e.phase, e.cat, escape(e.name).c_str(),
                     static_cast<unsigned long long>(e.id), pid, tid, e.start,
                     e.args.c_str());
      }
    }
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0) {
    if (error != nullptr) *error = fmt::format("cannot finish writing {}", path);
    return false;
  }
  return true;
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    out += c;
  }
  return out;
}

double nowUs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void configure(const std::string& dir) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.dir = dir;
    if (!dir.empty() && !r.atExit) {
      r.atExit = true;
      std::atexit(flush);
    }
  }
  detail::gState.store(dir.empty() ? 1 : 2, std::memory_order_relaxed);
}

void complete(const char* cat, std::string name, double startUs, std::string args) {
  const double end = nowUs();
  record(Event{cat, std::move(name), startUs, end - startUs, std::move(args)});
}

void instant(const char* cat, std::string name, std::string args) {
  record(Event{cat, std::move(name), nowUs(), 0, std::move(args), 'i'});
}

void asyncBegin(const char* cat, std::string name, std::uint64_t id, std::string args) {
  record(Event{cat, std::move(name), nowUs(), 0, std::move(args), 'b', id});
}

void asyncEnd(const char* cat, std::string name, std::uint64_t id, std::string args) {
  record(Event{cat, std::move(name), nowUs(), 0, std::move(args), 'e', id});
}

void nameThread(const std::string& name) {
  // Kept while tracing is off too (no log is made for it), for a session that
  // starts after the thread did.
  tPendingName = name;
  if (!enabled()) return;
  ThreadLog& t = mine();
  std::lock_guard<std::mutex> lock(t.mu);
  t.name = name;
}

void nameProcess(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.processName = name;
}

void flush() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  writeLocked(r, nullptr);
}

bool startSession(const std::string& dir, CategoryFilter keep) {
  if (enabled()) return false;  // also reads COHORT_TRACE first, so it cannot win later
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (detail::gState.load(std::memory_order_relaxed) == 2) return false;
  if (dir != r.sessionDir) {
    // A new folder starts an empty timeline: the last one's events are in its file.
    for (const auto& t : r.threads) {
      std::lock_guard<std::mutex> tl(t->mu);
      t->events.clear();
    }
    r.sessionDir = dir;
  }
  r.dir = dir;
  r.keep = std::move(keep);
  r.session = true;
  if (!r.atExit) {
    r.atExit = true;
    std::atexit(flush);
  }
  detail::gState.store(2, std::memory_order_relaxed);
  return true;
}

bool stopSession(std::string* error) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.session) {
    if (error != nullptr) *error = "no profiling session is running";
    return false;
  }
  detail::gState.store(1, std::memory_order_relaxed);
  const bool written = writeLocked(r, error);
  r.session = false;
  r.dir.clear();  // nothing more to write at exit
  r.keep = nullptr;
  return written;
}

bool sessionRunning() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.session;
}

TrackScope::TrackScope(int tid) : outer_(tTrack) { tTrack = tid; }
TrackScope::~TrackScope() { tTrack = outer_; }

void Span::arg(const char* key, const std::string& value) {
  if (!on_) return;
  args_ += fmt::format("{}\"{}\":\"{}\"", args_.empty() ? "" : ",", key, escape(value));
}

void Span::arg(const char* key, double value) {
  if (!on_) return;
  args_ += fmt::format("{}\"{}\":{}", args_.empty() ? "" : ",", key, value);
}

}  // namespace cohort::trace
