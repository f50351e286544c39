// What HcclCommDestroy, HcclCommResume and HcclGroupStart/End share with
// state_api.cc: the registered communicator state callbacks and the calling
// thread's group depth.
#pragma once

#include "cohort/status.h"
#include "hccl/hccl_comm.h"

namespace cohort::hccl {

/// Runs every callback of HcclCommRegCommStateCallback for `comm` at `phase`; the
/// first that does not return HCCL_SUCCESS stops them and is the error.
Status runStateCallbacks(HcclComm comm, HcclCommStatePhase phase);
/// HcclGroupStart (+1) and a successful HcclGroupEnd (-1) on the calling thread.
void noteGroup(int delta);

}  // namespace cohort::hccl
