// HcclCommInitClusterInfo's rendezvous, from the rank table alone: every rank
// derives the same root info from the table (rank 0's host_ip, else device_ip;
// its host_port, else HCCL_IF_BASE_PORT; the job token), and the table's rank 0
// serves the store there. The communicator is then made with
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
  std::string store;  ///< "ADDR:PORT", for messages
};

/// Loads and checks the table (HCCL_E_OPEN_FILE_FAILURE when it cannot be read,
/// HCCL_E_PARA with EI0004/EI0014 text when it is invalid), checks `rank` and the
/// calling thread's device against it (HCCL_E_RUNTIME without a device,
/// HCCL_E_UNAVAIL for another device_id), and prepares the root info of this
/// communicator of the table (the n-th one this process makes for this rank uses
/// the base port + n); rank 0 starts serving the store, kept until the process
/// exits. Thread-safe.
Outcome prepareClusterJoin(const char* function, const char* path, std::uint32_t rank,
                           ClusterJoin* out);

}  // namespace cohort::hccl
