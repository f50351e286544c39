// Built on spdlog: one logger with a stderr sink and, with COHORT_LOG_DIR, a file
// sink per process (like CANN's plog). The rank/device/subsystem prefix is ours.
#include "common/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cohort::log {

namespace {

struct State {
  std::mutex mutex;
  std::shared_ptr<spdlog::logger> logger;
  std::atomic<int> level{static_cast<int>(LogLevel::kWarn)};
  std::vector<std::string> include;
  std::vector<std::string> exclude;
};

std::atomic<int> gRank{-1};
thread_local int tDevice = -1;
constexpr int kNoScope = -2;
thread_local int tRank = kNoScope;  // a RankScope's rank, or kNoScope
constexpr int kMaxDevices = 64;
struct DeviceRank {
  std::atomic<int> rank{-1};
  std::atomic<const void*> owner{nullptr};
};
DeviceRank gDeviceRank[kMaxDevices];

spdlog::level::level_enum toSpd(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

void configureLocked(State& state, const Config& config) {
  std::vector<spdlog::sink_ptr> sinks;
  if (config.logToStdout) {
    sinks.push_back(std::make_shared<spdlog::sinks::stdout_sink_mt>());
  } else {
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  }
  std::string fileError;
  if (!config.logDir.empty()) {
    std::string path = fmt::format("{}/cohort_{}.log", config.logDir, ::getpid());
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(path));
    } catch (const spdlog::spdlog_ex& e) {
      fileError = fmt::format("COHORT_LOG_DIR: cannot open {}: {}", path, e.what());
    }
  }
  state.logger = std::make_shared<spdlog::logger>("cohort", sinks.begin(), sinks.end());
  state.logger->set_pattern("[%Y-%m-%d %H:%M:%S.%f] [%P] [%l] %v");
  state.logger->set_level(spdlog::level::trace);
  state.logger->flush_on(spdlog::level::warn);
  state.level = static_cast<int>(config.logLevel);
  state.include.clear();
  state.exclude.clear();
  for (const auto& s : config.logSubsystems) {
    if (s.size() > 1 && s[0] == '^') {
      state.exclude.push_back(s.substr(1));
    } else if (s != "all") {
      state.include.push_back(s);
    }
  }
  if (!fileError.empty()) state.logger->error(fileError);
  for (const auto& w : config.warnings) state.logger->warn("[config] {}", w);
}

State& state() {
  static State* s = [] {
    auto* created = new State();  // never destroyed: usable from static destructors
    std::lock_guard<std::mutex> lock(created->mutex);
    configureLocked(*created, Config::global());
    return created;
  }();
  return *s;
}

}  // namespace

bool enabled(LogLevel level, std::string_view subsystem) {
  State& s = state();
  if (static_cast<int>(level) < s.level.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lock(s.mutex);
  for (const auto& x : s.exclude) {
    if (subsystem == x) return false;
  }
  if (s.include.empty()) return true;
  for (const auto& x : s.include) {
    if (subsystem == x) return true;
  }
  return level >= LogLevel::kError;  // errors always pass the subsystem filter
}

void write(LogLevel level, std::string_view subsystem, std::string_view message) {
  State& s = state();
  std::shared_ptr<spdlog::logger> logger;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    logger = s.logger;
  }
  int rank = tRank;
  if (rank == kNoScope && tDevice >= 0 && tDevice < kMaxDevices) {
    rank = gDeviceRank[tDevice].rank.load(std::memory_order_relaxed);
  }
  if (rank == kNoScope || rank < 0) rank = gRank.load(std::memory_order_relaxed);
  std::string where = rank >= 0 ? fmt::format("rank {}", rank) : std::string("rank -");
  where += tDevice >= 0 ? fmt::format(" dev {}", tDevice) : std::string(" dev -");
  logger->log(toSpd(level), "[{}] [{}] {}", where, subsystem, message);
}

void setRank(int rank) { gRank = rank; }

void claimDeviceRank(int device, int rank, const void* owner) {
  if (device < 0 || device >= kMaxDevices) return;
  const void* none = nullptr;
  if (gDeviceRank[device].owner.compare_exchange_strong(none, owner)) {
    gDeviceRank[device].rank.store(rank, std::memory_order_relaxed);
  }
}

void releaseDeviceRank(int device, const void* owner) {
  if (device < 0 || device >= kMaxDevices) return;
  if (gDeviceRank[device].owner.load() != owner) return;
  gDeviceRank[device].rank.store(-1, std::memory_order_relaxed);
  gDeviceRank[device].owner.store(nullptr);
}

RankScope::RankScope(int rank) : outer_(tRank) { tRank = rank; }
RankScope::~RankScope() { tRank = outer_; }

void setThreadDevice(int device) { tDevice = device; }

void configure(const Config& config) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  configureLocked(s, config);
}

}  // namespace cohort::log
