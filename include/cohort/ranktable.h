// Rank tables: who is where. Reads an HCCL rank table (JSON "1.0", "1.2", or the
// legacy template without a version) or a Cohort YAML cluster file into one
// validated ClusterSpec: ranks -> server, device, addresses and ports.
//
// Validation is exhaustive: every problem of a file is reported at once, each
// with its location (a JSON pointer such as /server_list/1/device/3/rank_id, or a
// YAML line:column), the rule it breaks, the value found and what was expected.
//
//   cohort::ranktable::ClusterSpec spec;
//   cohort::ranktable::Diagnostics diagnostics;
//   Status s = cohort::ranktable::loadClusterFile("cluster.json", {}, &spec, &diagnostics);
//   if (!s.ok()) for (const auto& d : diagnostics.errors()) puts(d.toString().c_str());
//
// All functions are thread-safe (they share no state). The YAML schema is
// documented in ranktable/README.md.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cohort/status.h"

namespace cohort::ranktable {

// ---- The cluster ----------------------------------------------------------------

/// The inter-node transport a server asks for (JSON `net_protocol`, YAML `transport`).
enum class Transport { kAuto = 0, kTcp = 1, kRdma = 2 };

/// One rank: a device of a server, with the addresses its peers use.
struct RankInfo {
  int rankId = -1;
  int serverIndex = -1;        ///< index into ClusterSpec::servers
  int localRank = -1;          ///< position among the ranks of its server
  int deviceId = -1;           ///< physical device id on the server
  std::string deviceIp;        ///< device NIC address; empty = not given
  int devicePort = 0;          ///< 0 = not given
  std::string hostIp;          ///< the server's host address; empty = not given
  int hostPort = 0;            ///< 0 = not given
  int superDeviceId = -1;      ///< "1.2" only; -1 = not given
  std::string backupDeviceIp;  ///< "1.2" only; empty = not given
  int backupDevicePort = 0;    ///< "1.2" only; 0 = not given

  bool operator==(const RankInfo& other) const;
  bool operator!=(const RankInfo& other) const { return !(*this == other); }
};

/// One machine.
struct ServerInfo {
  std::string serverId;  ///< unique, 1..64 characters
  std::string hostIp;    ///< empty = not given
  Transport transport = Transport::kAuto;
  std::string superPodId;  ///< empty = in no super pod
  std::vector<int> ranks;  ///< its rank ids, ascending (= local rank order)

  bool operator==(const ServerInfo& other) const;
  bool operator!=(const ServerInfo& other) const { return !(*this == other); }
};

/// A group of servers joined by a super-node fabric ("1.2").
struct SuperPod {
  std::string superPodId;
  std::vector<int> servers;  ///< indexes into ClusterSpec::servers, ascending

  bool operator==(const SuperPod& other) const;
  bool operator!=(const SuperPod& other) const { return !(*this == other); }
};

/// A validated cluster. Ranks are 0..rankCount()-1 and ranks[r].rankId == r; the
/// ranks of one server are contiguous; every server has ranksPerServer() ranks.
/// Super pods are ordered by their first server. A plain value: copy freely.
struct ClusterSpec {
  std::string version = "1.0";  ///< rank table version it stands for: "1.0" or "1.2"
  std::vector<ServerInfo> servers;
  std::vector<RankInfo> ranks;  ///< indexed by rank id
  std::vector<SuperPod> superPods;

  int rankCount() const { return static_cast<int>(ranks.size()); }
  int serverCount() const { return static_cast<int>(servers.size()); }
  /// Ranks of every server when they all have the same number, else 0.
  int ranksPerServer() const;
  /// The rank ids of one server, ascending. Server index must be valid.
  const std::vector<int>& localRanks(int server) const;
  /// The rank's server index, or -1 for a rank not in the table.
  int serverOf(int rank) const;
  /// Index into superPods of a server's super pod, or -1.
  int superPodOf(int server) const;

  bool operator==(const ClusterSpec& other) const;
  bool operator!=(const ClusterSpec& other) const { return !(*this == other); }
};

// ---- Problems found in a file ----------------------------------------------------

/// Every rule a table can break. ruleName() gives the stable kebab-case name.
enum class Rule {
  kUnreadable,               ///< the file cannot be read
  kSyntax,                   ///< not valid JSON / YAML (line:column of the error)
  kMissingKey,               ///< a required key is absent
  kWrongType,                ///< a value has the wrong JSON/YAML type
  kNumberValue,              ///< (warning) a number where HCCL writes a string
  kUnknownKey,               ///< (warning) a YAML key this schema does not know
  kIgnoredKey,               ///< (warning) a key that is read but has no effect
  kUnknownVersion,           ///< version is not "1.0" or "1.2"
  kBadStatus,                ///< status is not "completed" (or "initializing")
  kStatusInitializing,       ///< status is "initializing": the table is not ready
  kBadCount,                 ///< server_count (or a template count) not a positive integer
  kCountMismatch,            ///< server_count (or a template count) differs from the list
  kEmptyServerList,          ///< no servers (or a super pod without servers)
  kEmptyDeviceList,          ///< a server without devices
  kEmptyServerId,            ///< server_id is ""
  kServerIdTooLong,          ///< server_id longer than 64 characters
  kBadCharacters,            ///< an id holds control characters or bytes that are not UTF-8
  kDuplicateServerId,        ///< two servers with one server_id
  kDuplicatePodName,         ///< legacy template: two instances with one pod_name
  kBadDeviceId,              ///< device_id not a non-negative integer
  kDuplicateDeviceId,        ///< one device_id twice on a server
  kBadRankId,                ///< rank_id not a non-negative integer
  kDuplicateRankId,          ///< one rank_id twice
  kRankIdOutOfRange,         ///< rank_id >= number of ranks (ids are not exactly 0..N-1)
  kRanksNotContiguous,       ///< the ranks of one server are not consecutive
  kBadIp,                    ///< not an IPv4 or IPv6 address
  kDuplicateIp,              ///< one device_ip used twice
  kMixedIpFamily,            ///< IPv4 and IPv6 addresses mixed
  kBadPort,                  ///< port not an integer in 1..65535
  kDuplicatePort,            ///< one host_port twice on a server
  kBadTransport,             ///< transport not tcp or rdma
  kEmptySuperPodId,          ///< super_pod_id is ""
  kDuplicateSuperPodId,      ///< two super pods with one id
  kUnknownSuperPodServer,    ///< a super pod names a server not in server_list
  kDuplicateSuperPodServer,  ///< a server in two super pods (or twice in one)
  kSuperPodNotContiguous,    ///< the servers of a super pod are not adjacent
  kBadSuperDeviceId,         ///< super_device_id not a non-negative integer
  kDuplicateSuperDeviceId,   ///< one super_device_id twice in a super pod
  kUnevenDevices,            ///< servers have different numbers of devices
  kBadDevicesPerServer,      ///< profile 910: devices per server not 1, 2, 4, 8 or 16
  kRankNotInTable,           ///< the caller's own rank is not in the table
};

/// "duplicate-rank-id" and so on; stable (tools and tests match on it).
const char* ruleName(Rule rule);

/// Where a problem is: a JSON pointer into the document and, when known, a
/// 1-based line and column (YAML values, syntax errors).
struct Location {
  std::string pointer;  ///< "/server_list/1/device/3/rank_id"; "" = the document
  int line = 0;         ///< 0 = unknown
  int column = 0;

  /// "/server_list/1/device/3/rank_id", "12:7 /servers/0/id", or "(document)".
  std::string toString() const;
};

enum class Severity { kWarning, kError };

/// One problem. `found` is what the file holds (string values in quotes,
/// "(missing)" for an absent key); `expected` says what would be valid.
struct Diagnostic {
  Severity severity = Severity::kError;
  Rule rule = Rule::kSyntax;
  Location location;
  std::string found;
  std::string expected;

  /// "/server_list/0/device/1/rank_id: duplicate-rank-id: found "0", expected ...".
  std::string toString() const;
};

/// Every problem found while loading one table, errors and warnings, in the
/// order found. Not thread-safe; one per load.
class Diagnostics {
 public:
  void add(Severity severity, Rule rule, Location location, std::string found,
           std::string expected);
  void error(Rule rule, Location location, std::string found, std::string expected) {
    add(Severity::kError, rule, std::move(location), std::move(found), std::move(expected));
  }
  void warning(Rule rule, Location location, std::string found, std::string expected) {
    add(Severity::kWarning, rule, std::move(location), std::move(found), std::move(expected));
  }

  const std::vector<Diagnostic>& all() const { return items_; }
  std::vector<Diagnostic> errors() const;
  std::vector<Diagnostic> warnings() const;
  bool hasErrors() const;
  /// The first error breaking `rule`, or nullptr.
  const Diagnostic* findError(Rule rule) const;
  void clear() { items_.clear(); }

  /// Ok without errors; otherwise kInvalidArgument (unreadable file), kParseError
  /// (syntax error), kNotReady (status "initializing") or kValidationError, with a
  /// message naming `source` and listing every error, one per line.
  Status status(const std::string& source) const;

 private:
  std::vector<Diagnostic> items_;
};

// ---- Loading ----------------------------------------------------------------------

enum class Format { kAuto, kJson, kYaml };

/// Extra rules on top of the default ones.
enum class Profile {
  kDefault,  ///< every rule above except kBadDevicesPerServer
  k910,      ///< also: 1, 2, 4, 8 or 16 devices per server (Atlas 910)
};

/// Parses "default" or "910"; false for anything else.
bool parseProfile(std::string_view name, Profile* profile);

struct LoadOptions {
  Format format = Format::kAuto;  ///< kAuto: by extension (.yaml/.yml), else by content
  Profile profile = Profile::kDefault;
  int ownRank = -1;  ///< >= 0: the caller's rank, which must be in the table
  /// How long loadClusterFile re-reads an "initializing" table; < 0: the
  /// COHORT_RANKTABLE_TIMEOUT setting (default 60 s).
  int timeoutMs = -1;
  int pollIntervalMs = 1000;  ///< re-read period while "initializing"
  bool logWarnings = true;    ///< also log warnings (subsystem "ranktable")
};

/// Parses rank table JSON text (any version). On success fills *spec; on failure
/// *spec is untouched and the status lists every error. `diagnostics` (optional)
/// is cleared, then receives errors and warnings; warnings are also logged
/// unless options.logWarnings is false.
/// An "initializing" table gives kNotReady.
Status parseRankTableJson(std::string_view text, const LoadOptions& options, ClusterSpec* spec,
                          Diagnostics* diagnostics = nullptr);

/// Parses a YAML cluster file (schema in ranktable/README.md), like parseRankTableJson.
Status parseClusterYaml(std::string_view text, const LoadOptions& options, ClusterSpec* spec,
                        Diagnostics* diagnostics = nullptr);

/// Reads and parses a file. While its status is "initializing" (or, after that,
/// while it is being rewritten and does not parse) the file is re-read every
/// pollIntervalMs until the timeout, then kTimeout. An unreadable file is
/// kInvalidArgument.
Status loadClusterFile(const std::string& path, const LoadOptions& options, ClusterSpec* spec,
                       Diagnostics* diagnostics = nullptr);

/// The format loadClusterFile would use for a file with this path and content.
Format detectFormat(const std::string& path, std::string_view text);

// ---- Writing ------------------------------------------------------------------------

/// An HCCL rank table (status "completed", every value a string). The version is
/// spec.version, raised to "1.2" when the spec holds super pods or 1.2 fields.
std::string toJson(const ClusterSpec& spec);

/// A YAML cluster file that parses back to an equal spec.
std::string toYaml(const ClusterSpec& spec);

/// A regular test cluster: `servers` servers of `devicesPerServer` devices,
/// rank r on server r / devicesPerServer.
struct GenerateOptions {
  int servers = 1;
  int devicesPerServer = 8;
  std::string deviceIpBase = "192.168.100.1";  ///< device IPs count up from here
  std::string hostIpBase = "10.0.0.1";         ///< host IPs (and server ids) count up
  int serversPerSuperPod = 0;                  ///< > 0: version "1.2" with super pods
};

/// Builds the cluster; kInvalidArgument for counts < 1 or addresses that run out.
Status generateCluster(const GenerateOptions& options, ClusterSpec* spec);

}  // namespace cohort::ranktable
