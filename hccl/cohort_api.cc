// Cohort's own C entry points (hccl/hccl_cohort.h): surviving failed ranks.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/comm_registry.h"
#include "hccl/hccl_cohort.h"

namespace {

using cohort::Communicator;
using cohort::Status;
using cohort::hccl::apiCall;
using cohort::hccl::CommEntry;
using cohort::hccl::CommRegistry;
using cohort::hccl::lookupComm;
using cohort::hccl::nullPointer;
using cohort::hccl::Outcome;

}  // namespace

HcclResult CohortCommShrink(HcclComm comm, HcclComm* newComm) {
  const char* fn = "CohortCommShrink";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (newComm == nullptr) return nullPointer(fn, "newComm");
    std::unique_ptr<Communicator> shrunk;
    COHORT_RETURN_IF_ERROR(entry->comm->shrink(&shrunk));
    *newComm = CommRegistry::get().add(std::move(shrunk), entry->name + "_shrunk");
    return Status::Ok();
  });
}

HcclResult CohortCommGetFailedRanks(HcclComm comm, uint32_t* ranks, uint32_t capacity,
                                    uint32_t* count) {
  const char* fn = "CohortCommGetFailedRanks";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (count == nullptr) return nullPointer(fn, "count");
    if (ranks == nullptr && capacity > 0) return nullPointer(fn, "ranks");
    std::vector<int> failed;
    COHORT_RETURN_IF_ERROR(entry->comm->failedRanks(&failed));
    *count = static_cast<uint32_t>(failed.size());
    const std::size_t n = std::min<std::size_t>(capacity, failed.size());
    for (std::size_t i = 0; i < n; ++i) ranks[i] = static_cast<uint32_t>(failed[i]);
    return Status::Ok();
  });
}
