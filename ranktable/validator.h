// The rules every table obeys, whatever its format: the validator walks a
// RawTable, reports each broken rule with the value's location, and builds the
// ClusterSpec when nothing is wrong. One Validator per table; not thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ranktable/raw_table.h"

namespace cohort::ranktable {

class Validator {
 public:
  Validator(const RawTable& table, const LoadOptions& options, Diagnostics* diagnostics);

  /// Checks everything; fills *spec when no error was found (by the reader either).
  void run(ClusterSpec* spec);

 private:
  // A device's values once parsed; -1 (0 for ports) when absent or invalid.
  struct Device {
    int deviceId = -1;
    int rank = -1;
    int devicePort = 0;
    int hostPort = 0;
    int superDeviceId = -1;
    int backupDevicePort = 0;
  };
  // A super pod from super_pod_list (JSON) or from the servers' super_pod (YAML).
  struct Pod {
    std::string id;
    std::vector<int> servers;               // in the order listed
    std::vector<Location> memberLocations;  // where each server was put in the pod
  };

  // validate_servers.cc: servers, devices, addresses, device counts.
  void checkServerList();
  void checkServerIds();
  void checkServer(int s);
  void checkDevice(int s, int d, std::map<int, const RawValue*>* deviceIds,
                   std::map<int, const RawValue*>* hostPorts);
  void checkCharacters(const RawValue& id);
  int readPort(const RawValue& value);
  bool checkIp(const RawValue& value);
  void checkDuplicateIps();
  void checkIpFamily(const std::vector<const RawValue*>& addresses, const char* kind);
  void checkDeviceCounts();

  // validate_ranks.cc: rank ids, super pods, the caller's rank, the result.
  void checkRanks();
  void checkContiguous(int s);
  void collectListedPods();
  void addListedMember(const RawValue& serverId, Pod* pod);
  void collectNamedPods();
  void checkSuperPod(const Pod& pod);
  void checkOwnRank();
  void build(ClusterSpec* spec) const;
  void buildServer(int s, ClusterSpec* out) const;

  void error(Rule rule, const Location& location, std::string found, std::string expected) {
    diagnostics_->error(rule, location, std::move(found), std::move(expected));
  }

  const RawTable& table_;
  const LoadOptions& options_;
  Diagnostics* diagnostics_;
  std::vector<std::vector<Device>> devices_;  // [server][device]
  std::map<std::string, int> serverById_;     // server_id -> first server with it
  std::vector<Pod> pods_;
  std::vector<int> podOfServer_;  // index into pods_, or -1
  int rankCount_ = 0;
};

}  // namespace cohort::ranktable
