// Using and releasing communicators: HcclCommDestroy, HcclCommAbort, HcclGetCommName,
// HcclGetRankSize, HcclGetRankId, HcclGetCommAsyncError, HcclGetErrorString.
#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/comm_registry.h"
#include "hccl/hccl.h"
#include "hccl/result_map.h"
#include "hccl/state_callbacks.h"

namespace {

using cohort::Communicator;
using cohort::ErrorCode;
using cohort::Status;
using cohort::hccl::apiCall;
using cohort::hccl::CommEntry;
using cohort::hccl::CommRegistry;
using cohort::hccl::lookupComm;
using cohort::hccl::nothingToDo;
using cohort::hccl::nullPointer;
using cohort::hccl::Outcome;

// The entry of `comm` and a non-null output pointer.
template <typename T>
Outcome lookupWithOutput(const char* function, HcclComm comm, T* output, const char* outputName,
                         std::shared_ptr<CommEntry>* entry) {
  HCCL_RETURN_IF_FAILED(lookupComm(function, comm, entry));
  if (output == nullptr) return nullPointer(function, outputName);
  return Status::Ok();
}

// The end of HcclCommDestroy and HcclCommAbort, once `entry` has left the
// registry: the state callbacks around the release. Their failures are reported,
// but the communicator goes either way. Without `abort` the release waits for
// its pending operations and for the peers still reading this rank's data (a
// peer that never comes is HCCL_E_TIMEOUT, and it is released anyway).
Outcome release(HcclComm comm, std::shared_ptr<CommEntry> entry, bool abort) {
  Status pre = cohort::hccl::runStateCallbacks(comm, HCCL_COMM_STATE_PHASE_DESTROY_PRE);
  Status released = abort ? Communicator::destroy(std::move(entry->comm), /*abortPending=*/true)
                          : entry->comm->finalize();
  entry.reset();
  Status post = cohort::hccl::runStateCallbacks(comm, HCCL_COMM_STATE_PHASE_DESTROY_POST);
  // An abort's own "aborted" is what it was asked for, not a failure.
  if (abort && released.code() == ErrorCode::kAborted) released = Status::Ok();
  return !pre.ok() ? pre : !released.ok() ? released : post;
}

}  // namespace

HcclResult HcclCommDestroy(HcclComm comm) {
  const char* fn = "HcclCommDestroy";
  return apiCall(fn, [&]() -> Outcome {
    // HCCL's own unit tests expect success for a null comm (nothing to destroy).
    if (comm == nullptr) return nothingToDo(fn, "comm is null");
    std::shared_ptr<CommEntry> entry;
    switch (CommRegistry::get().remove(comm, &entry)) {
      case CommRegistry::Removal::kUnknown: {
        std::shared_ptr<CommEntry> none;
        return lookupComm(fn, comm, &none);  // the same EI0003 refusal as every call
      }
      case CommRegistry::Removal::kBusy:
        return Outcome(HCCL_E_AGAIN,
                       cohort::makeError(ErrorCode::kNotReady,
                                         "{}: comm {} is in use, please try again later (another "
                                         "thread is inside a call on it)",
                                         fn, cohort::hccl::pointerText(comm)));
      case CommRegistry::Removal::kRemoved:
        break;
    }
    return release(comm, std::move(entry), /*abort=*/false);
  });
}

HcclResult HcclCommAbort(HcclComm comm) {
  const char* fn = "HcclCommAbort";
  return apiCall(fn, [&]() -> Outcome {
    if (comm == nullptr) return nothingToDo(fn, "comm is null");
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    entry->comm->abort();  // any thread: the operations in flight fail now
    entry.reset();
    switch (CommRegistry::get().remove(comm, &entry)) {
      case CommRegistry::Removal::kUnknown:
        return Status::Ok();  // another thread released it meanwhile
      case CommRegistry::Removal::kBusy:
        return Outcome(HCCL_E_AGAIN,
                       cohort::makeError(ErrorCode::kNotReady,
                                         "{}: comm {} is aborted but another thread is inside a "
                                         "call on it: destroy it once that call returns",
                                         fn, cohort::hccl::pointerText(comm)));
      case CommRegistry::Removal::kRemoved:
        break;
    }
    return release(comm, std::move(entry), /*abort=*/true);
  });
}

HcclResult HcclGetCommName(HcclComm comm, char* commName) {
  const char* fn = "HcclGetCommName";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupWithOutput(fn, comm, commName, "commName", &entry));
    const std::size_t n = std::min<std::size_t>(entry->name.size(), COMM_NAME_MAX_LENGTH - 1);
    std::memcpy(commName, entry->name.data(), n);
    commName[n] = '\0';
    return Status::Ok();
  });
}

HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize) {
  const char* fn = "HcclGetRankSize";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupWithOutput(fn, comm, rankSize, "rankSize", &entry));
    *rankSize = static_cast<uint32_t>(entry->comm->size());
    return Status::Ok();
  });
}

HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank) {
  const char* fn = "HcclGetRankId";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupWithOutput(fn, comm, rank, "rank", &entry));
    *rank = static_cast<uint32_t>(entry->comm->rank());
    return Status::Ok();
  });
}

HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError) {
  const char* fn = "HcclGetCommAsyncError";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupWithOutput(fn, comm, asyncError, "asyncError", &entry));
    *asyncError = cohort::hccl::toHcclResult(entry->comm->asyncError().code());
    return Status::Ok();
  });
}

const char* HcclGetErrorString(HcclResult code) { return cohort::hccl::resultString(code); }
