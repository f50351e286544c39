// HcclCommInitClusterInfo's rendezvous: the table's rank 0 makes a root info
// (as HcclGetRootInfo does) and publishes it in a store every rank of the table
// can reach; the others read it there. The communicator is then made with
// Communicator::initRank, as from HcclGetRootInfo's root info.
#pragma once

#include <cstdint>
#include <string>

#include "cohort/communicator.h"
#include "hccl/api_call.h"

namespace cohort::hccl {

/// What one rank needs to join a rank table's communicator.
struct ClusterJoin {
  UniqueId id;
  int rankCount = 0;
  std::string store;  ///< where the ranks met ("ADDR:PORT"), for messages
};

/// Loads and checks the table (HCCL_E_OPEN_FILE_FAILURE when it cannot be read,
/// HCCL_E_PARA with EI0004/EI0014 text when it is invalid), checks `rank` and the
/// calling thread's device against it (HCCL_E_RUNTIME without a device,
/// HCCL_E_UNAVAIL for another device_id), then meets the other ranks: in the
/// launcher's store (COHORT_ROOT_INFO) when there is one, else in a store the
/// table's rank 0 serves at its host_ip (else device_ip) on its host_port (else
/// HCCL_IF_BASE_PORT) until the process exits. Rank 0 publishes a fresh root
/// info there; the others wait for it (HCCL_E_TIMEOUT after the connect timeout).
/// Thread-safe.
Outcome prepareClusterJoin(const char* function, const char* path, std::uint32_t rank,
                           ClusterJoin* out);

}  // namespace cohort::hccl
