// Which local address to listen on and advertise (as HCCL picks its socket
// interface): COHORT_IF_IP, then COHORT_SOCKET_IFNAME ("eth,enp" prefixes,
// "^eth" excludes, "=eth0" exact, "^=eth0" exact exclude), then the first
// non-loopback interface, then loopback.
#pragma once

#include <string>
#include <vector>

#include "cohort/status.h"

namespace cohort::transport {

struct NetInterface {
  std::string name;     // "eth0"
  std::string address;  // "10.0.0.2" or "fe80::1"
  bool ipv6 = false;
  bool loopback = false;
};

/// Lists the interfaces that are up and have an address (getifaddrs).
Status listInterfaces(std::vector<NetInterface>* out);

/// Applies the selection rules to `candidates` (pure: testable with any list).
/// `ifIp` and `ifname` are the two variables' values ("" when unset).
Status chooseInterface(const std::vector<NetInterface>& candidates, const std::string& ifIp,
                       const std::string& ifname, NetInterface* out);

/// chooseInterface over this machine's interfaces and the global configuration.
Status selectInterface(NetInterface* out);

}  // namespace cohort::transport
