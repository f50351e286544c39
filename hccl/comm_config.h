// HcclCommConfig: validated field by field (HCCL's ranges), then turned into what
// a Cohort communicator can take per communicator: its name, its algorithm
// choice (hcclAlgo, in HCCL_ALGO's syntax) and its link retry settings
// (hcclRetryEnable, hcclRetryParams). The buffer size, determinism, RDMA
// class/level, QoS and execution timeout are checked and otherwise come from the
// environment for every communicator alike (Cohort has no per-communicator
// setting for them); Cohort's reductions follow a fixed schedule, so repeated
// runs already give identical results.
#pragma once

#include <string>

#include "cohort/communicator.h"
#include "hccl/api_call.h"
#include "hccl/hccl_types.h"

namespace cohort::hccl {

struct CommSettings {
  std::string name;  ///< "" = the caller's default
  std::string algo;  ///< in COHORT_ALGO's syntax; "" = the environment's
  /// hcclRetryEnable and hcclRetryParams (CommOptions); "" = the environment's,
  /// or for a sub-communicator its parent's.
  std::string retryEnable;
  std::string retryParams;
};

/// Reads a config (null = every field not set). HCCL_E_PARA (EI0003) for a
/// config not initialised with HcclCommConfigInit or a field out of range.
Outcome readCommConfig(const char* function, const HcclCommConfig* config, CommSettings* out);

/// Applies the per-communicator settings to a communicator just made.
Outcome applyCommSettings(const char* function, const CommSettings& settings, Communicator* comm);

}  // namespace cohort::hccl
