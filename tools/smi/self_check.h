// `cohort-smi check`: the pre-deployment self-check of one machine. Each item
// says OK, WARN or FAIL, and a FAIL says how to fix it:
//   versions       library, API and protocol versions (and that they agree)
//   configuration  every COHORT_*/HCCL_*/ASCEND_* variable valid (one item per error)
//   job            the launcher's variables, when there are any
//   devices        the devices this process would see
//   registry       the node registry that cohort-smi reads can be used
//   /dev/shm       writable, and free space against what the job will map
//   ulimit -n/-u   open files and processes for the job's ranks
//   ports          COHORT_IF_BASE_PORT..+31 free on this machine
//   rank table     (with --ranktable) valid, and naming this host
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cohort::smi {

struct CheckOptions {
  std::uint64_t jobMemory = 0;  ///< bytes the job maps in /dev/shm; 0 = only report free space
  std::string ranktable;        ///< "" = no rank table
  int ranks = 0;                ///< ranks of the job; 0 = from the table, the launcher or devices
  std::string shmDir = "/dev/shm";
};

enum class CheckStatus { kOk, kWarn, kFail };

/// One line of the report. A plain value.
struct CheckItem {
  std::string name;
  CheckStatus status = CheckStatus::kOk;
  std::string detail;
  std::string fix;  ///< empty for OK and WARN
};

inline CheckItem ok(std::string name, std::string detail) {
  return CheckItem{std::move(name), CheckStatus::kOk, std::move(detail), ""};
}

inline CheckItem fail(std::string name, std::string detail, std::string fix) {
  return CheckItem{std::move(name), CheckStatus::kFail, std::move(detail), std::move(fix)};
}

/// Every item, in the order of the file comment.
std::vector<CheckItem> runSelfCheck(const CheckOptions& options);

// The items one by one (tests call them with chosen inputs).
CheckItem checkVersions();
/// One item when every variable is valid, else one FAIL per error (naming the
/// variable); warnings (unknown COHORT_* names) as WARN items.
std::vector<CheckItem> checkConfiguration(const std::map<std::string, std::string>& env);
CheckItem checkShm(const std::string& dir, std::uint64_t jobMemory);
/// ulimit -n against `ranks` ranks with `socketsPerPeer` sockets, ulimit -u
/// against `localRanks` ranks on this machine.
std::vector<CheckItem> checkLimits(int ranks, int localRanks, int socketsPerPeer);
CheckItem checkPorts(int basePort);
/// Valid (every error listed), naming this machine (one of `localAddresses` is a
/// server's host_ip or one of its device_ip), its device ids below `deviceCount`.
std::vector<CheckItem> checkRankTable(const std::string& path,
                                      const std::vector<std::string>& localAddresses,
                                      int deviceCount);

bool anyFailed(const std::vector<CheckItem>& items);
std::string checkText(const std::vector<CheckItem>& items);
nlohmann::json checkJson(const std::vector<CheckItem>& items);

}  // namespace cohort::smi
