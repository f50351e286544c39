// Link checks: every connection is probed at bring-up (a few pings; with
// COHORT_LINK_CHECK=full a short bandwidth probe too) and the results go into a
// report the communicator returns and cohort-linkcheck prints.
#pragma once

#include <string>
#include <vector>

#include "cohort/status.h"
#include "common/wait.h"

namespace cohort::transport {

class Connection;

struct LinkResult {
  int rank = -1;
  int peer = -1;
  std::string transport;  // shm / tcp / rdma
  std::string local;      // describe() of each end
  std::string remote;
  bool ok = false;
  double rttUs = 0;      // median round trip of the pings
  double gbps = 0;       // one-way bandwidth probe (0 when not run)
  int transfers = 0;     // timed transfers the bandwidth probe made
  double lostShare = 0;  // of the counted transfer's time, taken by other processes
  std::string error;     // why the link is bad
};

struct LinkReport {
  std::vector<LinkResult> links;
  /// JSON text: {"links":[{...}]}.
  std::string toJson() const;
};

/// Runs the probe on a connected pair. Both ends call it at the same time;
/// `initiator` is true on exactly one of them. `bandwidthBytes` = 0 skips the
/// bandwidth probe. A transfer that lost time to other processes (they took the
/// ends' processors) is taken again, a few times at most, and `lostShare` says
/// how much the counted one lost; on a shm link that time is left out of the
/// bandwidth, so a busy machine does not make the link look slow (network
/// links: the wall clock's).
Status probeLink(Connection& conn, bool initiator, int pings, std::size_t bandwidthBytes,
                 Deadline deadline, LinkResult* result);

}  // namespace cohort::transport
