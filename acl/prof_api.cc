// Profiling sessions (aclprofInit ... aclprofSetConfig): a session is
// common/trace's run-time session, the timeline COHORT_TRACE writes, recorded
// into the folder aclprofInit names.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/entry_names.h"
#include "acl/prof_common.h"
#include "cohort/runtime.h"
#include "common/log.h"
#include "common/trace.h"

// The opaque type of acl_prof.h.
struct aclprofConfig {
  std::vector<uint32_t> devices;  // sorted, distinct
  aclprofAicoreMetrics metrics;
  uint64_t types;
};

namespace cohort::acl::prof {
namespace {

constexpr std::size_t kMaxPathBytes = 4096;
constexpr std::size_t kMaxSettingBytes = 256;

constexpr uint64_t kTaskTypes = ACL_PROF_TASK_TIME | ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_TIME_L2 |
                                ACL_PROF_TASK_TIME_L3 | ACL_PROF_AICPU;
constexpr uint64_t kApiTypes = ACL_PROF_ACL_API | ACL_PROF_RUNTIME_API;
constexpr uint64_t kKnownTypes =
    kTaskTypes | kApiTypes | ACL_PROF_AICORE_METRICS | ACL_PROF_L2CACHE | ACL_PROF_HCCL_TRACE |
    ACL_PROF_TRAINING_TRACE | ACL_PROF_MSPROFTX | ACL_PROF_GE_API_L0 | ACL_PROF_TASK_MEMORY |
    ACL_PROF_GE_API_L1 | ACL_PROF_OP_ATTR | ACL_PROF_API_STATS | ACL_PROF_AICORE_SHAPE;

// The data kinds of every config started in the running session: the file's filter
// reads it without a lock (it runs under common/trace's).
std::atomic<uint64_t> gSessionTypes{0};

// Which of the timeline's categories the session's data kinds ask for; categories
// no kind names (the session's own records, steps) are always kept.
bool keepCategory(const char* cat) {
  const uint64_t types = gSessionTypes.load(std::memory_order_relaxed);
  const std::string_view c(cat);
  if (c == "stream") return (types & kTaskTypes) != 0;
  if (c == "collective" || c == "algorithm" || c == "mesh" || c == "enqueue")
    return (types & ACL_PROF_HCCL_TRACE) != 0;
  if (c == "msproftx") return (types & ACL_PROF_MSPROFTX) != 0;
  if (c == "wait") return (types & kApiTypes) != 0;
  return true;
}

bool validMetrics(aclprofAicoreMetrics m) {
  const int v = static_cast<int>(m);
  return (v >= ACL_AICORE_ARITHMETIC_UTILIZATION && v <= ACL_AICORE_MEMORY_ACCESS) ||
         v == ACL_AICORE_NONE;
}

std::string devicesText(const std::vector<uint32_t>& devices) {
  return fmt::format("[{}]", fmt::join(devices, ","));
}

bool sameRun(const aclprofConfig& a, const aclprofConfig& b) {
  return a.devices == b.devices && a.types == b.types && a.metrics == b.metrics;
}

// Two configs profile the same thing: a shared device, or both of no device.
bool overlaps(const aclprofConfig& a, const aclprofConfig& b, std::string* what) {
  if (a.devices.empty() && b.devices.empty()) {
    *what = "a config without devices";
    return true;
  }
  for (uint32_t d : a.devices) {
    if (std::binary_search(b.devices.begin(), b.devices.end(), d)) {
      *what = fmt::format("device {}", d);
      return true;
    }
  }
  return false;
}

// An absolute folder that exists and can be written, made if missing.
Outcome prepareFolder(const char* fn, const std::string& text, std::string* folder) {
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::absolute(text, ec);
  if (!ec) std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path) || ::access(path.c_str(), W_OK) != 0) {
    return invalidArgument(fn, "the result folder '{}' cannot be created or written{}", text,
                        ec ? ": " + ec.message() : std::string());
  }
  *folder = path.string();
  return Status::Ok();
}

/// The profiling state of the process: aclprofInit's folder, the settings, the
/// live configs and the running starts. Process-wide, thread-safe (one mutex);
/// never destroyed, as the trace's exit writer may run after static destructors.
class Profiler {
 public:
  static Profiler& get() {
    static Profiler* p = new Profiler;
    return *p;
  }

  Outcome init(const char* path, std::size_t length) {
    const char* fn = "aclprofInit";
    std::lock_guard<std::mutex> lock(mu_);
    if (initialized_) {
      return failure(ACL_ERROR_REPEAT_INITIALIZE, ErrorCode::kInvalidUsage, fn,
                     "already initialised (call aclprofFinalize first, then aclprofInit)");
    }
    if (trace::enabled()) {
      return failure(ACL_ERROR_PROF_ALREADY_RUN, ErrorCode::kInvalidUsage, fn,
                     "COHORT_TRACE already records this process's timeline; use one or the other");
    }
    if (path == nullptr) return invalidArgument(fn, "profilerResultPath is null");
    if (length == 0 || length > kMaxPathBytes)
      return invalidArgument(fn, "length {} is not in [1, {}]", length, kMaxPathBytes);
    const std::string text(path, strnlen(path, length));
    if (text.empty()) return invalidArgument(fn, "profilerResultPath is empty");
    ACL_RETURN_IF_FAILED(prepareFolder(fn, text, &folder_));
    initialized_ = true;
    return Status::Ok();
  }

  Outcome finalize() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!initialized_) return notInitialized("aclprofFinalize");
    std::string error;
    bool written = true;
    if (!running_.empty()) {
      COHORT_LOG(kWarn, "acl",
                 "aclprofFinalize: {} aclprofStart(s) without aclprofStop: stopped, the timeline "
                 "is written",
                 running_.size());
      written = trace::stopSession(&error);
    }
    running_.clear();
    gSessionTypes.store(0);
    settings_.clear();
    folder_.clear();
    initialized_ = false;
    if (!written) return writeFailed("aclprofFinalize", error);
    return Status::Ok();
  }

  Outcome start(const aclprofConfig* config) {
    const char* fn = "aclprofStart";
    std::lock_guard<std::mutex> lock(mu_);
    if (!initialized_) return notInitialized(fn);
    ACL_RETURN_IF_FAILED(checkLiveLocked(fn, config));
    std::string what;
    for (const aclprofConfig& r : running_) {
      if (overlaps(r, *config, &what)) {
        return failure(ACL_ERROR_PROF_ALREADY_RUN, ErrorCode::kInvalidUsage, fn,
                       "{} is profiled already (by an aclprofStart not yet stopped)", what);
      }
    }
    const std::string folder = folderLocked();
    if (running_.empty()) {
      gSessionTypes.store(config->types);
      if (!trace::startSession(folder, keepCategory)) {
        gSessionTypes.store(0);
        return failure(ACL_ERROR_PROF_ALREADY_RUN, ErrorCode::kInvalidUsage, fn,
                       "the timeline is recorded already (COHORT_TRACE)");
      }
    } else {
      gSessionTypes.fetch_or(config->types);
    }
    running_.push_back(*config);
    trace::instant("profiling", fn, describeLocked(*config));
    COHORT_LOG(kInfo, "acl", "{}: devices {}, data {:#x}: recording into {}", fn,
               devicesText(config->devices), config->types, folder);
    return Status::Ok();
  }

  Outcome stop(const aclprofConfig* config) {
    const char* fn = "aclprofStop";
    std::lock_guard<std::mutex> lock(mu_);
    if (!initialized_) return notInitialized(fn);
    ACL_RETURN_IF_FAILED(checkLiveLocked(fn, config));
    auto it = std::find_if(running_.begin(), running_.end(),
                           [&](const aclprofConfig& r) { return sameRun(r, *config); });
    if (it == running_.end()) {
      return failure(ACL_ERROR_INVALID_PROFILING_CONFIG, ErrorCode::kInvalidUsage, fn,
                     "no aclprofStart of devices {} with data {:#x} is running (call aclprofStart "
                     "first, then aclprofStop, with the same config)",
                     devicesText(config->devices), config->types);
    }
    trace::instant("profiling", fn, describeLocked(*config));
    running_.erase(it);
    if (!running_.empty()) {
      trace::flush();  // the file so far; the other starts go on recording
      return Status::Ok();
    }
    std::string error;
    const bool written = trace::stopSession(&error);
    gSessionTypes.store(0);
    if (!written) return writeFailed(fn, error);
    return Status::Ok();
  }

  Outcome setConfig(aclprofConfigType type, const char* value, std::size_t length) {
    const char* fn = "aclprofSetConfig";
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_.empty()) {
      return failure(ACL_ERROR_PROF_ALREADY_RUN, ErrorCode::kInvalidUsage, fn,
                     "a session is running (call aclprofSetConfig first, then aclprofStart)");
    }
    if (value == nullptr) return invalidArgument(fn, "config is null");
    if (length == 0 || length > kMaxSettingBytes)
      return invalidArgument(fn, "configLength {} is not in [1, {}]", length, kMaxSettingBytes);
    const std::string text(value, strnlen(value, length));
    if (type == ACL_PROF_OPTYPE) {
      return failure(ACL_ERROR_PROF_MODULES_UNSUPPORTED, ErrorCode::kNotSupported, fn,
                     "ACL_PROF_OPTYPE is not supported");
    }
    const char* name = nullptr;
    const char* absent = nullptr;
    ACL_RETURN_IF_FAILED(checkSetting(fn, type, text, &name, &absent));
    std::string stored = text;
    if (type == ACL_PROF_PATH) ACL_RETURN_IF_FAILED(prepareFolder(fn, text, &stored));
    if (absent != nullptr) {
      COHORT_LOG(kWarn, "acl", "{}: {} = {} accepted, but {}: the timeline holds no such samples",
                 fn, name, text, absent);
    }
    settings_[type] = std::move(stored);
    return Status::Ok();
  }

  void addLive(const aclprofConfig* config) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(config);
  }

  Outcome destroy(const aclprofConfig* config) {
    std::lock_guard<std::mutex> lock(mu_);
    ACL_RETURN_IF_FAILED(checkLiveLocked("aclprofDestroyConfig", config));
    live_.erase(config);
    delete config;
    return Status::Ok();
  }

  bool initialized() {
    std::lock_guard<std::mutex> lock(mu_);
    return initialized_;
  }

 private:
  Profiler() = default;

  static Outcome notInitialized(const char* fn) {
    return failure(ACL_ERROR_PROF_NOT_RUN, ErrorCode::kInvalidUsage, fn,
                   "profiling is not initialised (call aclprofInit first, then {})", fn);
  }

  static Outcome writeFailed(const char* fn, const std::string& error) {
    return failure(ACL_ERROR_PROFILING_FAILURE, ErrorCode::kSystemError, fn, "{}", error);
  }

  Outcome checkLiveLocked(const char* fn, const aclprofConfig* config) const {
    if (config == nullptr) return invalidArgument(fn, "profilerConfig is null");
    if (live_.count(config) == 0) {
      return invalidArgument(fn,
                          "profilerConfig {} is not a live aclprofConfig (made by "
                          "aclprofCreateConfig, not yet destroyed)",
                          fmt::ptr(config));
    }
    return Status::Ok();
  }

  std::string folderLocked() const {
    auto it = settings_.find(ACL_PROF_PATH);
    return it != settings_.end() ? it->second : folder_;
  }

  // The args of the session's records: what was asked for.
  std::string describeLocked(const aclprofConfig& config) const {
    std::string settings;
    for (const auto& [type, value] : settings_) {
      settings += fmt::format("{}\"{}\":\"{}\"", settings.empty() ? "" : ",", settingName(type),
                              trace::escape(value));
    }
    return fmt::format(
        "\"devices\":{},\"data_types\":\"{:#x}\",\"aicore_metrics\":{},\"folder\":\"{}\","
        "\"settings\":{{{}}}",
        devicesText(config.devices), config.types, static_cast<int>(config.metrics),
        trace::escape(folderLocked()), settings);
  }

  std::mutex mu_;
  bool initialized_ = false;
  std::string folder_;                                 // aclprofInit's
  std::map<aclprofConfigType, std::string> settings_;  // aclprofSetConfig's
  std::set<const aclprofConfig*> live_;
  std::vector<aclprofConfig> running_;  // copies of the started configs
};

Outcome createConfig(const uint32_t* ids, uint32_t count, aclprofAicoreMetrics metrics,
                     const aclprofAicoreEvents* events, uint64_t types, aclprofConfig** out) {
  const char* fn = "aclprofCreateConfig";
  if (ids == nullptr && count != 0) return invalidArgument(fn, "deviceIdList is null");
  if (!validMetrics(metrics))
    return invalidArgument(fn, "aicoreMetrics {} is not an aclprofAicoreMetrics",
                        static_cast<int>(metrics));
  if (events != nullptr) return invalidArgument(fn, "aicoreEvents must be NULL");
  if ((types & ~kKnownTypes) != 0) {
    return invalidArgument(fn, "dataTypeConfig {:#x} has unknown bits {:#x} (known: ACL_PROF_*)",
                        types, types & ~kKnownTypes);
  }
  int visible = 0;
  COHORT_RETURN_IF_ERROR(runtime::getDeviceCount(&visible));
  std::vector<uint32_t> devices(ids, ids + count);
  for (uint32_t d : devices) {
    if (d >= static_cast<uint32_t>(visible))
      return invalidArgument(fn, "device {} is not visible (devices 0..{})", d, visible - 1);
  }
  std::sort(devices.begin(), devices.end());
  if (std::adjacent_find(devices.begin(), devices.end()) != devices.end())
    return invalidArgument(fn, "deviceIdList {} names a device twice", devicesText(devices));
  *out = new aclprofConfig{std::move(devices), metrics, types};
  Profiler::get().addLive(*out);
  return Status::Ok();
}

}  // namespace

bool initialized() { return Profiler::get().initialized(); }

Outcome requireSession(const char* function) {
  if (trace::sessionRunning()) return Status::Ok();
  return failure(ACL_ERROR_PROF_NOT_RUN, ErrorCode::kInvalidUsage, function,
                 "no profiling session is running (call aclprofStart first, then {})", function);
}

}  // namespace cohort::acl::prof

using cohort::acl::prof::Profiler;

aclError aclprofInit(const char* profilerResultPath, size_t length) {
  return apiCallAnyTime("aclprofInit",
                  [&]() -> Outcome { return Profiler::get().init(profilerResultPath, length); });
}

aclError aclprofFinalize(void) {
  return apiCallAnyTime("aclprofFinalize", [&]() -> Outcome { return Profiler::get().finalize(); });
}

aclError aclprofStart(const aclprofConfig* profilerConfig) {
  return apiCallAnyTime("aclprofStart",
                  [&]() -> Outcome { return Profiler::get().start(profilerConfig); });
}

aclError aclprofStop(const aclprofConfig* profilerConfig) {
  return apiCallAnyTime("aclprofStop", [&]() -> Outcome { return Profiler::get().stop(profilerConfig); });
}

aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums,
                                   aclprofAicoreMetrics aicoreMetrics,
                                   const aclprofAicoreEvents* aicoreEvents,
                                   uint64_t dataTypeConfig) {
  aclprofConfig* config = nullptr;
  const aclError e = apiCallAnyTime("aclprofCreateConfig", [&]() -> Outcome {
    return cohort::acl::prof::createConfig(deviceIdList, deviceNums, aicoreMetrics, aicoreEvents,
                                           dataTypeConfig, &config);
  });
  return e == ACL_SUCCESS ? config : nullptr;
}

aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
  return apiCallAnyTime("aclprofDestroyConfig",
                  [&]() -> Outcome { return Profiler::get().destroy(profilerConfig); });
}

aclError aclprofSetConfig(aclprofConfigType configType, const char* config, size_t configLength) {
  return apiCallAnyTime("aclprofSetConfig", [&]() -> Outcome {
    return Profiler::get().setConfig(configType, config, configLength);
  });
}
