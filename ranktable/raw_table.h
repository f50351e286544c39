// The table as written, before validation: every value is the text found in the
// file plus where it was found. The JSON and YAML readers fill a RawTable and
// report what only they can see (syntax, missing keys, wrong types, version,
// status); the validator checks every other rule on the RawTable, so both
// formats obey exactly the same rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cohort/ranktable.h"

namespace cohort::ranktable {

/// One scalar value (a string, or a number converted to its text).
struct RawValue {
  bool keyFound = false;  ///< the key is in the file (with a usable value or not)
  bool present = false;   ///< text holds the value
  std::string text;
  Location location;  ///< where the value is (or would be, when absent)
};

struct RawDevice {
  Location location;
  RawValue deviceId;
  RawValue deviceIp;
  RawValue devicePort;
  RawValue hostPort;
  RawValue rankId;  ///< readers fill it from the file order when ranks are implicit
  RawValue superDeviceId;
  RawValue backupDeviceIp;
  RawValue backupDevicePort;
};

struct RawServer {
  Location location;
  RawValue serverId;
  RawValue hostIp;
  RawValue transport;
  RawValue superPodId;  ///< YAML: the super pod named on the server itself
  Location devicesLocation;
  bool hasDeviceList = false;  ///< the device list was there (maybe empty)
  std::vector<RawDevice> devices;
};

/// A JSON super_pod_list entry.
struct RawSuperPod {
  Location location;
  RawValue superPodId;
  Location serversLocation;
  bool hasServerList = false;
  std::vector<RawValue> serverIds;
};

struct RawTable {
  std::string version = "1.0";  ///< "1.0" or "1.2" (the reader checked it)
  RawValue serverCount;         ///< absent: not checked
  Location serversLocation;
  bool hasServerList = false;  ///< the server list was there (maybe empty)
  int serverListSize = 0;      ///< entries in the server list, readable or not
  std::vector<RawServer> servers;
  std::vector<RawSuperPod> superPods;  ///< JSON only; YAML uses RawServer::superPodId
};

/// What a reader made of the text.
enum class ReadResult {
  kRead,          ///< the table was read (maybe with errors): validate it
  kInitializing,  ///< status "initializing": the rest is not looked at
  kUnusable,      ///< syntax error, wrong top-level type or unknown version
};

/// Reads rank table JSON (1.0, 1.2 or the legacy template).
ReadResult readJsonTable(std::string_view text, Diagnostics* diagnostics, RawTable* table);
/// Reads a YAML cluster file.
ReadResult readYamlTable(std::string_view text, Diagnostics* diagnostics, RawTable* table);

/// Checks the `status` value (absent means the reader already reported it, or
/// that the format makes it optional).
ReadResult checkStatus(const RawValue& status, Diagnostics* diagnostics);

/// Checks a declared count (server_count, group_count...): a positive integer
/// equal to `actual`, the length of the list at `listPointer`. False on error.
bool checkCount(const RawValue& count, int actual, const std::string& listPointer,
                Diagnostics* diagnostics);

/// Checks every rule that does not depend on the file format and, when no error
/// was found (here or before, by the reader), fills *spec.
void validateTable(const RawTable& table, const LoadOptions& options, Diagnostics* diagnostics,
                   ClusterSpec* spec);

}  // namespace cohort::ranktable
