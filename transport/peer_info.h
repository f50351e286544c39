// Who a rank is, as far as choosing a transport goes: its node identity, process,
// device and addresses. Exchanged through the bootstrap at communicator start.
#pragma once

#include <cstdint>
#include <string>

#include "transport/store.h"

namespace cohort::transport {

struct PeerInfo {
  int rank = -1;
  /// Node identity: hostname + boot id + network namespace (so two namespaces
  /// are two machines), or COHORT_HOST_ID.
  std::string hostId;
  std::string hostname;
  std::int32_t pid = 0;
  int device = -1;          // logical device of the rank's communicator
  int physicalDevice = -1;
  std::string address;      // the interface address its TCP listener uses
  /// Where its standby store listens (at `address`), 0 if it has none: the
  /// survivors' store if the job's dies with a failed rank.
  int standbyPort = 0;
  std::uint32_t libraryVersion = 0;
  std::uint32_t protocolVersion = 0;
  /// Position among the communicator's ranks of the same node (not sent: computed
  /// by connectPeers from everyone's hostId).
  int localIndex = -1;

  Bytes encode() const;
  static Status decode(const Bytes& bytes, PeerInfo* out);
  bool sameNode(const PeerInfo& o) const { return hostId == o.hostId; }
};

/// This node's identity (cached): COHORT_HOST_ID if set, else
/// "<hostname>/<boot id>/net:<netns inode>".
const std::string& localHostId();

/// The job store's key under which a launcher (cohortrun) notes that process `pid`
/// of node `hostId` (localHostId()) ended with a failure: what a survivor cannot
/// see for itself when the process ran on another machine.
std::string endedProcessKey(const std::string& hostId, std::int32_t pid);

}  // namespace cohort::transport
