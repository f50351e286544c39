#include "common/config.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <sstream>

#include "common/error.h"

namespace cohort {

namespace {

// One variable: its name, what it expects (for the error text), a setter that
// parses the value into the config (false = invalid), and a printer.
struct Var {
  const char* name;
  const char* expected;
  std::function<bool(Config&, const std::string&)> set;
  std::function<std::string(const Config&)> show;
};

bool parseInt(const std::string& s, long lo, long hi, int* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

std::vector<std::string> splitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// "Key:value,Key:value" (spaces around items allowed, as CANN's examples have
// them), each key one of `keys` and at most once; `take` parses each value.
bool parseKeyList(const std::string& text, std::vector<std::string> keys,
                  const std::function<bool(const std::string&, const std::string&)>& take) {
  std::vector<std::string> seen;
  const auto items = splitList(text, ',');
  if (items.empty()) return false;
  for (std::string item : items) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const auto colon = item.find(':');
    if (colon == std::string::npos) return false;
    const std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    if (std::find(keys.begin(), keys.end(), key) == keys.end() ||
        std::find(seen.begin(), seen.end(), key) != seen.end() || !take(key, value)) {
      return false;
    }
    seen.push_back(key);
  }
  return true;
}

Var intVar(const char* name, const char* expected, long lo, long hi, int Config::*field) {
  return Var{name, expected,
             [=](Config& c, const std::string& v) { return parseInt(v, lo, hi, &(c.*field)); },
             [=](const Config& c) { return std::to_string(c.*field); }};
}

Var stringVar(const char* name, std::string Config::*field) {
  return Var{name, "any string",
             [=](Config& c, const std::string& v) {
               c.*field = v;
               return true;
             },
             [=](const Config& c) { return c.*field; }};
}

Var choiceVar(const char* name, const char* expected, std::vector<std::string> choices,
              std::string Config::*field) {
  return Var{name, expected,
             [=](Config& c, const std::string& v) {
               for (const auto& choice : choices) {
                 if (v == choice) {
                   c.*field = v;
                   return true;
                 }
               }
               return false;
             },
             [=](const Config& c) { return c.*field; }};
}

// "0" or "1".
Var flagVar(const char* name, bool Config::*field) {
  return Var{name, "0 or 1",
             [=](Config& c, const std::string& v) {
               if (v != "0" && v != "1") return false;
               c.*field = v == "1";
               return true;
             },
             [=](const Config& c) { return std::string(c.*field ? "1" : "0"); }};
}

Var bytesVar(const char* name, std::uint64_t lo, std::uint64_t Config::*field) {
  return Var{name, "a byte size such as 16G, 512M or 1048576",
             [=](Config& c, const std::string& v) {
               std::uint64_t bytes = 0;
               if (!parseByteSize(v, &bytes) || bytes < lo) return false;
               c.*field = bytes;
               return true;
             },
             [=](const Config& c) { return std::to_string(c.*field); }};
}

const char* levelName(LogLevel level) {
  static const char* kNames[] = {"debug", "info", "warn", "error", "off"};
  return kNames[static_cast<int>(level)];
}

const std::vector<Var>& vars() {
  static const std::vector<Var> kVars = {
      {"COHORT_LOG_LEVEL", "one of debug, info, warn, error, off",
       [](Config& c, const std::string& v) {
         for (int i = 0; i <= static_cast<int>(LogLevel::kOff); ++i) {
           if (v == levelName(static_cast<LogLevel>(i))) {
             c.logLevel = static_cast<LogLevel>(i);
             return true;
           }
         }
         return false;
       },
       [](const Config& c) { return std::string(levelName(c.logLevel)); }},
      {"COHORT_LOG_SUBSYS", "a comma-separated list of subsystems, '^name' to exclude",
       [](Config& c, const std::string& v) {
         c.logSubsystems = splitList(v, ',');
         return true;
       },
       [](const Config& c) { return fmt::format("{}", fmt::join(c.logSubsystems, ",")); }},
      stringVar("COHORT_LOG_DIR", &Config::logDir),
      intVar("COHORT_DEVICE_COUNT", "an integer in [1, 64]", 1, 64, &Config::deviceCount),
      {"COHORT_VISIBLE_DEVICES", "a comma-separated list of distinct device ids, e.g. 0,2,3",
       [](Config& c, const std::string& v) {
         std::vector<int> ids;
         for (const auto& item : splitList(v, ',')) {
           int id = 0;
           if (!parseInt(item, 0, 63, &id)) return false;
           for (int seen : ids) {
             if (seen == id) return false;
           }
           ids.push_back(id);
         }
         if (ids.empty()) return false;
         c.visibleDevices = ids;
         return true;
       },
       [](const Config& c) { return fmt::format("{}", fmt::join(c.visibleDevices, ",")); }},
      bytesVar("COHORT_DEVICE_MEMORY", 1 << 20, &Config::deviceMemory),
      intVar("COHORT_WAIT_SPIN_US", "an integer in [0, 1000000]", 0, 1000000,
             &Config::waitSpinUs),
      intVar("COHORT_WAIT_YIELD_US", "an integer in [0, 1000000]", 0, 1000000,
             &Config::waitYieldUs),
      intVar("COHORT_PROCESSORS", "an integer in [0, 65536] (0 = the online processors)", 0,
             65536, &Config::processors),
      bytesVar("COHORT_CACHE_BYTES", 0, &Config::cacheBytes),
      intVar("COHORT_AICORE_THREADS", "an integer in [0, 1024] (0 = the online processors)", 0,
             1024, &Config::aicoreThreads),
      bytesVar("COHORT_UB_SIZE", 1 << 10, &Config::ubBytes),
      intVar("COHORT_CONNECT_TIMEOUT", "seconds, an integer in [1, 86400]", 1, 86400,
             &Config::connectTimeoutS),
      intVar("COHORT_EXEC_TIMEOUT", "seconds, an integer in [0, 2147483] (0 = never)", 0,
             2147483, &Config::execTimeoutS),
      intVar("COHORT_RANKTABLE_TIMEOUT", "seconds, an integer in [0, 86400]", 0, 86400,
             &Config::ranktableTimeoutS),
      stringVar("COHORT_IF_IP", &Config::ifIp),
      stringVar("COHORT_SOCKET_IFNAME", &Config::socketIfname),
      intVar("COHORT_IF_BASE_PORT", "a port in [1024, 65503]", 1024, 65503,
             &Config::ifBasePort),
      choiceVar("COHORT_TRANSPORT", "one of auto, shm, tcp, rdma",
                {"auto", "shm", "tcp", "rdma"}, &Config::transport),
      intVar("COHORT_NSOCKS_PERPEER", "an integer in [1, 32]", 1, 32, &Config::nsocksPerPeer),
      stringVar("COHORT_TCP_CONGESTION", &Config::tcpCongestion),
      intVar("COHORT_RDMA_TC", "an integer in [0, 255]", 0, 255, &Config::rdmaTc),
      intVar("COHORT_RDMA_SL", "an integer in [0, 7]", 0, 7, &Config::rdmaSl),
      intVar("COHORT_RDMA_TIMEOUT", "an integer in [5, 24]", 5, 24, &Config::rdmaTimeout),
      intVar("COHORT_RDMA_RETRY_CNT", "an integer in [1, 7]", 1, 7, &Config::rdmaRetryCnt),
      choiceVar("COHORT_LINK_CHECK", "one of off, basic, full", {"off", "basic", "full"},
                &Config::linkCheck),
      stringVar("COHORT_ALGO", &Config::algo),
      bytesVar("COHORT_BUFFSIZE", 1 << 20, &Config::buffSize),
      flagVar("COHORT_DETERMINISTIC", &Config::deterministic),
      choiceVar("COHORT_SIMD", "one of auto, avx512bf16, avx512, avx2, scalar",
                {"auto", "avx512bf16", "avx512", "avx2", "scalar"}, &Config::simd),
      stringVar("COHORT_JOB_TOKEN", &Config::jobToken),
      stringVar("COHORT_HOST_ID", &Config::hostId),
      stringVar("COHORT_WHITELIST_FILE", &Config::whitelistFile),
      stringVar("COHORT_TRACE", &Config::traceDir),
      {"COHORT_SOC_NAME", "a SoC name of 1 to 63 letters, digits, '_' or '-', e.g. Ascend910B4",
       [](Config& c, const std::string& v) {
         if (v.empty() || v.size() > 63) return false;
         for (char ch : v) {
           if (std::isalnum(static_cast<unsigned char>(ch)) == 0 && ch != '_' && ch != '-') {
             return false;
           }
         }
         c.socName = v;
         return true;
       },
       [](const Config& c) { return c.socName; }},
  };
  return kVars;
}

bool lowerEquals(const std::string& a, const char* b) {
  std::string l;
  for (char c : a) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l == b;
}

const Var& findVar(const char* name) {
  for (const auto& v : vars()) {
    if (std::string(v.name) == name) return v;
  }
  std::abort();  // a name of the table above: a programming error
}

// HCCL's and ACL's variables, with HCCL's documented ranges; each applies only
// when the COHORT_* variable it stands for is not set.
struct Alias {
  Var var;
  const char* cohortName;  // the variable that wins when both are set
};

const std::vector<Alias>& aliases() {
  static const std::vector<Alias> kAliases = {
      {intVar("HCCL_CONNECT_TIMEOUT", "an integer in [120, 7200]", 120, 7200,
              &Config::connectTimeoutS), "COHORT_CONNECT_TIMEOUT"},
      {intVar("HCCL_EXEC_TIMEOUT", "an integer in [0, 2147483647]", 0, 2147483647,
              &Config::execTimeoutS), "COHORT_EXEC_TIMEOUT"},
      {stringVar("HCCL_IF_IP", &Config::ifIp), "COHORT_IF_IP"},
      {stringVar("HCCL_SOCKET_IFNAME", &Config::socketIfname), "COHORT_SOCKET_IFNAME"},
      {intVar("HCCL_IF_BASE_PORT", "an integer in [1024, 65520]", 1024, 65520,
              &Config::ifBasePort), "COHORT_IF_BASE_PORT"},
      {Var{"HCCL_BUFFSIZE", "an integer number of MB, at least 1",
           [](Config& c, const std::string& v) {
             int mb = 0;
             if (!parseInt(v, 1, 1 << 20, &mb)) return false;
             c.buffSize = static_cast<std::uint64_t>(mb) << 20;
             return true;
           },
           [](const Config& c) { return std::to_string(c.buffSize >> 20); }}, "COHORT_BUFFSIZE"},
      {stringVar("HCCL_ALGO", &Config::hcclAlgo), "COHORT_ALGO"},
      {Var{"HCCL_DETERMINISTIC", "false, true or strict",
           [](Config& c, const std::string& v) {
             if (lowerEquals(v, "false")) c.deterministic = false;
             else if (lowerEquals(v, "true") || lowerEquals(v, "strict")) c.deterministic = true;
             else return false;
             return true;
           },
           [](const Config& c) { return std::string(c.deterministic ? "true" : "false"); }},
       "COHORT_DETERMINISTIC"},
      {intVar("HCCL_RDMA_TC", "an integer in [0, 255], a multiple of 4", 0, 255, &Config::rdmaTc),
       "COHORT_RDMA_TC"},
      {intVar("HCCL_RDMA_SL", "an integer in [0, 7]", 0, 7, &Config::rdmaSl), "COHORT_RDMA_SL"},
      {intVar("HCCL_RDMA_TIMEOUT", "an integer in [5, 24]", 5, 24, &Config::rdmaTimeout),
       "COHORT_RDMA_TIMEOUT"},
      {intVar("HCCL_RDMA_RETRY_CNT", "an integer in [1, 7]", 1, 7, &Config::rdmaRetryCnt),
       "COHORT_RDMA_RETRY_CNT"},
      {Var{"HCCL_OP_RETRY_ENABLE", "a list like L0:0,L1:1,L2:0 (each level at most once, 0 or 1)",
           [](Config& c, const std::string& v) {
             return parseKeyList(v, {"L0", "L1", "L2"}, [&](const std::string& key, const std::string& value) {
               int on = 0;
               if (!parseInt(value, 0, 1, &on)) return false;
               (key == "L0" ? c.retryL0 : key == "L1" ? c.retryL1 : c.retryL2) = on == 1;
               return true;
             });
           },
           [](const Config& c) {
             return fmt::format("L0:{},L1:{},L2:{}", int(c.retryL0), int(c.retryL1), int(c.retryL2));
           }},
       ""},
      {Var{"HCCL_OP_RETRY_PARAMS",
           "a list like MaxCnt:3,HoldTime:5000,IntervalTime:1000 (MaxCnt in [1, 10], the times "
           "in ms in [0, 60000])",
           [](Config& c, const std::string& v) {
             return parseKeyList(v, {"MaxCnt", "HoldTime", "IntervalTime"},
                                 [&](const std::string& key, const std::string& value) {
                                   if (key == "MaxCnt") return parseInt(value, 1, 10, &c.retryMaxCnt);
                                   return parseInt(value, 0, 60000,
                                                   key == "HoldTime" ? &c.retryHoldMs
                                                                     : &c.retryIntervalMs);
                                 });
           },
           [](const Config& c) {
             return fmt::format("MaxCnt:{},HoldTime:{},IntervalTime:{}", c.retryMaxCnt,
                                c.retryHoldMs, c.retryIntervalMs);
           }},
       ""},
      {Var{"ASCEND_RT_VISIBLE_DEVICES", "a comma-separated list of distinct device ids",
           findVar("COHORT_VISIBLE_DEVICES").set, findVar("COHORT_VISIBLE_DEVICES").show},
       "COHORT_VISIBLE_DEVICES"},
      {Var{"ASCEND_GLOBAL_LOG_LEVEL", "an integer in [0, 4] (0 debug, 1 info, 2 warning, 3 error, 4 null)",
           [](Config& c, const std::string& v) {
             int level = 0;
             if (!parseInt(v, 0, 4, &level)) return false;
             c.logLevel = static_cast<LogLevel>(level);
             return true;
           },
           [](const Config& c) { return std::to_string(static_cast<int>(c.logLevel)); }},
       "COHORT_LOG_LEVEL"},
      {Var{"ASCEND_SLOG_PRINT_TO_STDOUT", "0 or 1",
           [](Config& c, const std::string& v) {
             if (v != "0" && v != "1") return false;
             c.logToStdout = v == "1";
             return true;
           },
           [](const Config& c) { return std::string(c.logToStdout ? "1" : "0"); }}, ""},
  };
  return kAliases;
}

// HCCL_INTRA_PCIE_ENABLE x HCCL_INTRA_ROCE_ENABLE (HCCL's table), and the
// whitelist pair.
void parseHcclLinks(const std::map<std::string, std::string>& env, Config& c) {
  auto get = [&](const char* n) -> const std::string* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : &it->second;
  };
  const std::string* pcie = get("HCCL_INTRA_PCIE_ENABLE");
  const std::string* roce = get("HCCL_INTRA_ROCE_ENABLE");
  auto bad = [&](const char* name, const std::string& v, const char* expected) {
    c.errors.push_back(fmt::format("Value '{}' for environment variable {} is invalid. "
                                   "Expected value: {}.", v, name, expected));
  };
  for (auto [name, v] : {std::pair{"HCCL_INTRA_PCIE_ENABLE", pcie}, {"HCCL_INTRA_ROCE_ENABLE", roce}}) {
    if (v != nullptr && *v != "0" && *v != "1") bad(name, *v, "0 or 1");
  }
  if (pcie != nullptr && roce != nullptr && *pcie == "1" && *roce == "1") {
    bad("HCCL_INTRA_ROCE_ENABLE", *roce, "0 or 1 (but not both 1)");
  } else if (pcie != nullptr && *pcie == "0" && roce == nullptr) {
    bad("HCCL_INTRA_PCIE_ENABLE", *pcie, "1 when HCCL_INTRA_ROCE_ENABLE is not set");
  } else if (roce != nullptr && *roce == "0" && pcie == nullptr) {
    bad("HCCL_INTRA_ROCE_ENABLE", *roce, "1 when HCCL_INTRA_PCIE_ENABLE is not set");
  } else if (roce != nullptr && *roce == "1" && env.count("COHORT_TRANSPORT") == 0) {
    c.transport = "tcp";  // intra-server traffic over the network, not the PCIe (shm) link
  }
  const std::string* disable = get("HCCL_WHITELIST_DISABLE");
  if (disable != nullptr && *disable != "0" && *disable != "1") bad("HCCL_WHITELIST_DISABLE", *disable, "0 or 1");
  const std::string* file = get("HCCL_WHITELIST_FILE");
  if (disable != nullptr && *disable == "0" && env.count("COHORT_WHITELIST_FILE") == 0) {
    if (file == nullptr || file->empty()) {
      bad("HCCL_WHITELIST_DISABLE", *disable, "1, or 0 together with HCCL_WHITELIST_FILE");
    } else {
      c.whitelistFile = *file;
    }
  }
}

// Variables set by the launcher or read by other layers, not configuration.
bool isKnownNonConfig(const std::string& name) {
  // Read elsewhere: the launcher's contract, the torch package (torch_cohort/__init__.py)
  // and the collective matrix test.
  static const char* kNames[] = {"COHORT_ROOT_INFO", "COHORT_DEVICE_ID", "COHORT_STORE_ADDR",
                                 "COHORT_RANKTABLE", "COHORT_RANK", "COHORT_WORLD_SIZE",
                                 "COHORT_TORCH_DEVICE_MEMORY", "COHORT_TEST_MATRIX_STRIDE"};
  for (const char* known : kNames) {
    if (name == known) return true;
  }
  return false;
}

}  // namespace

bool parseByteSize(const std::string& text, std::uint64_t* bytes) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || text[0] == '-') return false;
  std::string unit(end);
  int shift = 0;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (unit == "K" || unit == "KB" || unit == "KiB") {
    shift = 10;
  } else if (unit == "M" || unit == "MB" || unit == "MiB") {
    shift = 20;
  } else if (unit == "G" || unit == "GB" || unit == "GiB") {
    shift = 30;
  } else if (unit == "T" || unit == "TB" || unit == "TiB") {
    shift = 40;
  } else {
    return false;
  }
  if (shift > 0 && v > (~0ull >> shift)) return false;
  *bytes = static_cast<std::uint64_t>(v) << shift;
  return true;
}

Config Config::parse(const std::map<std::string, std::string>& env) {
  Config config;
  for (const auto& var : vars()) {
    auto it = env.find(var.name);
    if (it == env.end()) continue;
    if (!var.set(config, it->second)) {
      config.errors.push_back(fmt::format("Value '{}' for environment variable {} is invalid. "
                                          "Expected value: {}.",
                                          it->second, var.name, var.expected));
    }
  }
  for (const auto& alias : aliases()) {
    auto it = env.find(alias.var.name);
    if (it == env.end()) continue;
    if (alias.cohortName[0] != '\0' && env.count(alias.cohortName) != 0) continue;
    if (!alias.var.set(config, it->second)) {
      config.errors.push_back(fmt::format("Value '{}' for environment variable {} is invalid. "
                                          "Expected value: {}.",
                                          it->second, alias.var.name, alias.var.expected));
    }
  }
  if (env.count("HCCL_RDMA_TC") != 0 && config.rdmaTc % 4 != 0) {
    config.errors.push_back(fmt::format("Value '{}' for environment variable HCCL_RDMA_TC is "
                                        "invalid. Expected value: a multiple of 4 in [0, 255].",
                                        env.at("HCCL_RDMA_TC")));
  }
  parseHcclLinks(env, config);
  for (const auto& [name, value] : env) {
    if (name.rfind("COHORT_", 0) != 0 || isKnownNonConfig(name)) continue;
    bool known = false;
    for (const auto& var : vars()) known = known || name == var.name;
    if (!known) config.warnings.push_back("unknown variable " + name + " ignored");
  }
  return config;
}

std::map<std::string, std::string> environmentMap() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    if (name.rfind("COHORT_", 0) == 0 || name.rfind("HCCL_", 0) == 0 ||
        name.rfind("ASCEND_", 0) == 0) {
      env[name] = entry.substr(eq + 1);
    }
  }
  return env;
}

const Config& Config::global() {
  static const Config config = parse(environmentMap());
  return config;
}

Deadline connectDeadline() {
  return Deadline::after(std::chrono::seconds(Config::global().connectTimeoutS));
}

Status Config::status() const {
  if (errors.empty()) return Status::Ok();
  return Status(ErrorCode::kConfigError, fmt::format("{}", fmt::join(errors, " ")));
}

std::string Config::describe() const {
  std::string out;
  for (const auto& var : vars()) out += fmt::format("{}={}\n", var.name, var.show(*this));
  return out;
}

}  // namespace cohort
