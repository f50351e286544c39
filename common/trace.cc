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
  configure(Config::global().traceDir);
  return gState.load();
}
}  // namespace detail

namespace {

struct Event {
  const char* cat;
  std::string name;
  double start, dur;
  std::string args;
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
};

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
  }
  return *log;
}

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

}  // namespace

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
  ThreadLog& t = mine();
  std::lock_guard<std::mutex> lock(t.mu);
  t.events.push_back(Event{cat, std::move(name), startUs, end - startUs, std::move(args)});
}

void nameThread(const std::string& name) {
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
  if (r.dir.empty()) return;
  const int pid = static_cast<int>(::getpid());
  const std::string path = fmt::format("{}/cohort-trace-{}.json", r.dir, pid);
  std::error_code ignored;  // a failure shows as the open's below
  std::filesystem::create_directories(r.dir, ignored);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cohort: COHORT_TRACE: cannot write %s\n", path.c_str());
    return;
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
      std::fprintf(f,
                   ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
                   "\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}}",
                   e.cat, escape(e.name).c_str(), pid, t->tid, e.start, e.dur, e.args.c_str());
    }
  }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
}

void Span::arg(const char* key, const std::string& value) {
  if (!on_) return;
  args_ += fmt::format("{}\"{}\":\"{}\"", args_.empty() ? "" : ",", key, escape(value));
}

void Span::arg(const char* key, double value) {
  if (!on_) return;
  args_ += fmt::format("{}\"{}\":{}", args_.empty() ? "" : ",", key, value);
}

}  // namespace cohort::trace
