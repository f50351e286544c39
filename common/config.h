// The one place that reads COHORT_* environment variables. Config::global() reads
// them all once (thread-safe), validates them, and keeps the first error; every
// public entry point refuses to run while that error stands. Tests build their
// own Config from a map with Config::parse().
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "common/wait.h"

namespace cohort {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

struct Config {
  // Logging.
  LogLevel logLevel = LogLevel::kWarn;
  std::vector<std::string> logSubsystems;  ///< empty = all; "^x" entries exclude
  std::string logDir;                      ///< one log file per process when set
  bool logToStdout = false;                ///< ASCEND_SLOG_PRINT_TO_STDOUT=1
  // Devices.
  int deviceCount = 8;                 ///< emulated devices per node
  std::vector<int> visibleDevices;     ///< physical ids; empty = all
  std::uint64_t deviceMemory = 16ull << 30;  ///< bytes per device
  // Waiting (spin, then sched_yield, then futex sleep).
  int waitSpinUs = 2;
  int waitYieldUs = 5000;
  int processors = 0;  ///< processors the ranks of a node share; 0 = the online ones
  /// The last-level cache the direct collectives size their stores by; 0 = sysfs.
  std::uint64_t cacheBytes = 0;
  // Timeouts (seconds).
  int connectTimeoutS = 120;
  int execTimeoutS = 1800;  ///< 0 = never
  int ranktableTimeoutS = 60;
  // Interfaces and transports.
  std::string ifIp;
  std::string socketIfname;
  int ifBasePort = 60000;
  std::string transport = "auto";  ///< auto | shm | tcp | rdma
  int nsocksPerPeer = 2;
  std::string tcpCongestion = "cubic";
  int rdmaTc = 132;
  int rdmaSl = 4;
  int rdmaTimeout = 20;
  int rdmaRetryCnt = 7;
  std::string linkCheck = "basic";  ///< off | basic | full
  // Re-establishing broken links (HCCL_OP_RETRY_ENABLE, HCCL_OP_RETRY_PARAMS, with
  // CANN's defaults): per level, L0 within a server, L1 between servers, L2
  // between super pods (none here).
  bool retryL0 = false;
  bool retryL1 = false;
  bool retryL2 = false;
  int retryMaxCnt = 1;          ///< breaks one operation rides out per link
  int retryHoldMs = 5000;       ///< how long a broken link may stay unusable
  int retryIntervalMs = 1000;   ///< between two attempts to re-establish it
  // Collectives.
  std::string algo;                    ///< "allreduce=ring;allgather=mesh"
  std::string hcclAlgo;                ///< HCCL_ALGO, in HCCL's syntax
  std::uint64_t buffSize = 200ull << 20;
  bool deterministic = false;
  /// The kernels' SIMD path: auto (the fastest this processor runs), avx512, avx2 or
  /// scalar (for tests, and for processors that misreport their features).
  std::string simd = "auto";
  // Identity, security, tracing.
  std::string jobToken;
  std::string hostId;
  std::string whitelistFile;
  std::string traceDir;
  /// The SoC the emulated devices stand for (aclrtGetSocName): COHORT_SOC_NAME.
  std::string socName = "Ascend910B4";
  // AscendC kernels (the emulated AI Cores).
  /// Threads that run a device's kernel blocks: COHORT_AICORE_THREADS; 0 = one per
  /// processor (COHORT_PROCESSORS or the online ones).
  int aicoreThreads = 0;
  /// Local (unified) buffer per core: COHORT_UB_SIZE; a kernel asking more traps.
  std::uint64_t ubBytes = 192ull << 10;

  /// Every problem found while parsing (variable, value, what is expected).
  std::vector<std::string> errors;
  /// Unknown COHORT_* names and other non-fatal remarks.
  std::vector<std::string> warnings;

  /// Parses a variable map (name -> value). Never fails: problems go to errors.
  /// HCCL_* and ASCEND_* variables are honoured with HCCL's ranges where the
  /// matching COHORT_* variable is not set.
  static Config parse(const std::map<std::string, std::string>& env);
  /// The process environment, read once.
  static const Config& global();
  /// kConfigError listing every invalid variable, or ok.
  Status status() const;
  /// One "NAME=value" line per known variable, for logs and `cohort-smi check`.
  std::string describe() const;
};

/// COHORT_CONNECT_TIMEOUT (Config::global()) from now: the limit of each step of
/// joining a job (the store, the rendezvous, the connections).
Deadline connectDeadline();

/// The environment of this process as a map (only COHORT_*/HCCL_*/ASCEND_* names).
std::map<std::string, std::string> environmentMap();

/// Parses "16G", "512M", "64K", "1024" (binary units). False when malformed.
bool parseByteSize(const std::string& text, std::uint64_t* bytes);

}  // namespace cohort
