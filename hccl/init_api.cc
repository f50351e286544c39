// Making communicators: HcclGetRootInfo, HcclCommInitRootInfo(Config),
// HcclCommInitClusterInfo(Config), HcclCommInitAll, HcclCreateSubCommConfig.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "cohort/runtime.h"
#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/cluster_join.h"
#include "hccl/comm_config.h"
#include "hccl/comm_registry.h"
#include "hccl/hccl.h"
#include "transport/root_info.h"

namespace {

namespace rt = cohort::runtime;
using cohort::Communicator;
using cohort::ErrorCode;
using cohort::Status;
using cohort::UniqueId;
using cohort::hccl::apiCall;
using cohort::hccl::CommEntry;
using cohort::hccl::CommRegistry;
using cohort::hccl::CommSettings;
using cohort::hccl::invalidParameter;
using cohort::hccl::nullPointer;
using cohort::hccl::Outcome;

// HCCL's limit on the rank table path, NUL included.
constexpr std::size_t kMaxPathBytes = 4096;
constexpr std::uint64_t kNoSubComm = 0xFFFFFFFF;

std::mutex gUsedMu;
std::set<std::string> gUsedRootInfos;  // "token@addr:port#rank": one communicator each

Outcome requireDevice(const char* function) {
  int device = -1;
  if (rt::getDevice(&device).ok()) return Status::Ok();
  return Outcome(HCCL_E_RUNTIME,
                 cohort::makeError(ErrorCode::kInvalidDevice,
                                   "{}: the calling thread has no device; call aclrtSetDevice "
                                   "first",
                                   function));
}

// Makes the communicator from a root info and registers it.
Outcome joinAndRegister(const char* function, const UniqueId& id, int nranks, int rank,
                        const CommSettings& settings, const std::string& defaultName,
                        HcclComm* comm) {
  const std::string name = settings.name.empty() ? defaultName : settings.name;
  std::unique_ptr<Communicator> made;
  cohort::CommOptions options;
  options.name = name;
  options.retryEnable = settings.retryEnable;
  options.retryParams = settings.retryParams;
  COHORT_RETURN_IF_ERROR(Communicator::initRank(id, nranks, rank, &made, options));
  HCCL_RETURN_IF_FAILED(cohort::hccl::applyCommSettings(function, settings, made.get()));
  *comm = CommRegistry::get().add(std::move(made), name);
  return Status::Ok();
}

// Marks a root info as used by `rank` (refusing a second use).
Outcome claimRootInfo(const char* function, const UniqueId& id, std::uint32_t rank,
                      std::string* tokenHex) {
  cohort::transport::RootInfo info;
  Status s = cohort::transport::RootInfo::fromBytes(id.bytes, &info);
  if (!s.ok()) {
    return invalidParameter(function, "(" + s.message() + ")", "rootInfo",
                            "a root info made by HcclGetRootInfo");
  }
  *tokenHex = info.token.hex();
  std::lock_guard<std::mutex> lock(gUsedMu);
  const std::string used = fmt::format("{}@{}:{}#{}", *tokenHex, info.host, info.port, rank);
  if (!gUsedRootInfos.insert(used).second) {
    return invalidParameter(
        function, "(a root info this process already used for rank " + std::to_string(rank) + ")",
        "rootInfo", "a fresh root info: call HcclGetRootInfo again");
  }
  return Status::Ok();
}

Outcome initRootInfo(const char* function, std::uint32_t nRanks, const HcclRootInfo* rootInfo,
                     std::uint32_t rank, const HcclCommConfig* config, HcclComm* comm) {
  HCCL_RETURN_IF_FAILED(
      cohort::hccl::requirePointers(function, {{"rootInfo", rootInfo}, {"comm", comm}}));
  if (nRanks == 0 || nRanks > 0x7fffffff) {
    return invalidParameter(function, std::to_string(nRanks), "nRanks", "at least 1");
  }
  HCCL_RETURN_IF_FAILED(cohort::hccl::checkRank(function, rank, "rank", static_cast<int>(nRanks)));
  HCCL_RETURN_IF_FAILED(cohort::hccl::requireValidEnvironment());
  CommSettings settings;
  HCCL_RETURN_IF_FAILED(cohort::hccl::readCommConfig(function, config, &settings));
  HCCL_RETURN_IF_FAILED(requireDevice(function));
  UniqueId id;
  static_assert(sizeof(id.bytes) == sizeof(rootInfo->internal), "root info sizes differ");
  std::memcpy(id.bytes, rootInfo->internal, sizeof(id.bytes));
  std::string token;
  HCCL_RETURN_IF_FAILED(claimRootInfo(function, id, rank, &token));
  return joinAndRegister(function, id, static_cast<int>(nRanks), static_cast<int>(rank), settings,
                         "hccl_world_" + token.substr(0, 8), comm);
}

Outcome initClusterInfo(const char* function, const char* clusterInfo, std::uint32_t rank,
                        const HcclCommConfig* config, HcclComm* comm) {
  HCCL_RETURN_IF_FAILED(
      cohort::hccl::requirePointers(function, {{"clusterInfo", clusterInfo}, {"comm", comm}}));
  const std::size_t length = strnlen(clusterInfo, kMaxPathBytes);
  if (length == 0 || length >= kMaxPathBytes) {
    return invalidParameter(function, length == 0 ? "\"\"" : "(a path of 4096 or more bytes)",
                            "clusterInfo", "the path of a rank table file, 1 to 4095 bytes");
  }
  HCCL_RETURN_IF_FAILED(cohort::hccl::requireValidEnvironment());
  CommSettings settings;
  HCCL_RETURN_IF_FAILED(cohort::hccl::readCommConfig(function, config, &settings));
  cohort::hccl::ClusterJoin join;
  HCCL_RETURN_IF_FAILED(cohort::hccl::prepareClusterJoin(function, clusterInfo, rank, &join));
  return joinAndRegister(function, join.id, join.rankCount, static_cast<int>(rank), settings,
                         "hccl_world_group", comm);
}

Outcome checkDevices(const char* function, std::uint32_t ndev, const int32_t* devices) {
  int count = 0;
  COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
  std::set<int32_t> seen;
  for (std::uint32_t i = 0; i < ndev; ++i) {
    const std::string name = fmt::format("devices[{}]", i);
    if (devices[i] < 0 || devices[i] >= count) {
      return invalidParameter(function, std::to_string(devices[i]), name.c_str(),
                              fmt::format("a device id in [0, {})", count));
    }
    if (!seen.insert(devices[i]).second) {
      return invalidParameter(function, std::to_string(devices[i]), name.c_str(),
                              "a device id not listed before (no duplicates)");
    }
  }
  return Status::Ok();
}

// The sub-communicator's rank list, checked: ascending, distinct, in range, and
// holding this rank at subCommRankId.
Outcome readRankList(const char* function, const Communicator& parent, std::uint32_t rankNum,
                     const std::uint32_t* rankIds, std::uint32_t subCommRankId,
                     std::vector<int>* ranks) {
  if (rankNum == 0 || rankNum > static_cast<std::uint32_t>(parent.size())) {
    return invalidParameter(function, std::to_string(rankNum), "rankNum",
                            fmt::format("in [1, {}] (the global rank size)", parent.size()));
  }
  for (std::uint32_t i = 0; i < rankNum; ++i) {
    const std::string name = fmt::format("rankIds[{}]", i);
    HCCL_RETURN_IF_FAILED(
        cohort::hccl::checkRank(function, rankIds[i], name.c_str(), parent.size()));
    if (i > 0 && rankIds[i] <= rankIds[i - 1]) {
      return invalidParameter(function, std::to_string(rankIds[i]), name.c_str(),
                              fmt::format("greater than rankIds[{}] = {} (ascending, distinct)",
                                          i - 1, rankIds[i - 1]));
    }
    ranks->push_back(static_cast<int>(rankIds[i]));
  }
  if (subCommRankId >= rankNum ||
      rankIds[subCommRankId] != static_cast<std::uint32_t>(parent.rank())) {
    return invalidParameter(function, std::to_string(subCommRankId), "subCommRankId",
                            fmt::format("the index of this rank ({}) in rankIds", parent.rank()));
  }
  return Status::Ok();
}

// Communicator::subCommunicator keys its rendezvous by the rank list, so a parent
// makes one sub-communicator per list.
Outcome claimRankList(const char* function, const std::vector<int>& ranks, CommEntry* parent) {
  const std::string key = fmt::format("{}", fmt::join(ranks, ","));
  std::lock_guard<std::mutex> lock(parent->mu);
  if (parent->subRankLists.insert(key).second) return Status::Ok();
  return Outcome(HCCL_E_NOT_SUPPORT,
                 cohort::makeError(ErrorCode::kNotSupported,
                                   "{}: communicator '{}' already made a sub-communicator of ranks "
                                   "[{}]; Cohort makes one per rank list",
                                   function, parent->name, key));
}

Outcome createSubComm(const char* function, HcclComm* comm, std::uint32_t rankNum,
                      const std::uint32_t* rankIds, std::uint64_t subCommId,
                      std::uint32_t subCommRankId, const HcclCommConfig* config,
                      HcclComm* subComm) {
  HCCL_RETURN_IF_FAILED(
      cohort::hccl::requirePointers(function, {{"comm", comm}, {"subComm", subComm}}));
  std::shared_ptr<CommEntry> parent;
  HCCL_RETURN_IF_FAILED(cohort::hccl::lookupComm(function, *comm, &parent));
  // HCCL's unit tests give these answers: a rank list without an id, or an id
  // without a list, is E_PARA. (They also refuse a null config with E_PTR;
  // Cohort takes it as the defaults, as before.)
  if (rankIds == nullptr && subCommId == kNoSubComm) {  // this rank joins none
    *subComm = nullptr;
    return Status::Ok();
  }
  if (rankIds == nullptr) {
    return invalidParameter(function, "nullptr", "rankIds",
                            "a rank list (null only with subCommId 0xFFFFFFFF)");
  }
  if (subCommId == kNoSubComm) {
    return invalidParameter(function, "0xFFFFFFFF", "subCommId",
                            "an id other than 0xFFFFFFFF (which joins no sub-communicator, "
                            "with a null rankIds)");
  }
  std::vector<int> ranks;
  HCCL_RETURN_IF_FAILED(
      readRankList(function, *parent->comm, rankNum, rankIds, subCommRankId, &ranks));
  CommSettings settings;
  HCCL_RETURN_IF_FAILED(cohort::hccl::readCommConfig(function, config, &settings));
  HCCL_RETURN_IF_FAILED(claimRankList(function, ranks, parent.get()));
  std::unique_ptr<Communicator> made;
  cohort::CommOptions own;  // the sub-communicator's links follow its own config
  own.name = settings.name;
  own.retryEnable = settings.retryEnable;
  own.retryParams = settings.retryParams;
  COHORT_RETURN_IF_ERROR(parent->comm->subCommunicator(ranks, &made, own));
  HCCL_RETURN_IF_FAILED(cohort::hccl::applyCommSettings(function, settings, made.get()));
  const std::string name =
      settings.name.empty() ? fmt::format("{}_sub_{}", parent->name, subCommId) : settings.name;
  *subComm = CommRegistry::get().add(std::move(made), name);
  return Status::Ok();
}

}  // namespace

HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo) {
  return apiCall("HcclGetRootInfo", [&]() -> Outcome {
    if (rootInfo == nullptr) return nullPointer("HcclGetRootInfo", "rootInfo");
    HCCL_RETURN_IF_FAILED(cohort::hccl::requireValidEnvironment());
    UniqueId id;
    COHORT_RETURN_IF_ERROR(Communicator::getUniqueId(&id));
    std::memcpy(rootInfo->internal, id.bytes, sizeof(id.bytes));
    return Status::Ok();
  });
}

HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                HcclComm* comm) {
  const char* fn = "HcclCommInitRootInfo";
  return apiCall(fn, [&]() { return initRootInfo(fn, nRanks, rootInfo, rank, nullptr, comm); });
}

HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                      const HcclCommConfig* config, HcclComm* comm) {
  const char* fn = "HcclCommInitRootInfoConfig";
  return apiCall(fn, [&]() -> Outcome {
    if (config == nullptr) return nullPointer(fn, "config");
    return initRootInfo(fn, nRanks, rootInfo, rank, config, comm);
  });
}

HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank, HcclComm* comm) {
  const char* fn = "HcclCommInitClusterInfo";
  return apiCall(fn, [&]() { return initClusterInfo(fn, clusterInfo, rank, nullptr, comm); });
}

HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo, uint32_t rank,
                                         HcclCommConfig* config, HcclComm* comm) {
  const char* fn = "HcclCommInitClusterInfoConfig";
  return apiCall(fn, [&]() -> Outcome {
    if (config == nullptr) return nullPointer(fn, "config");
    return initClusterInfo(fn, clusterInfo, rank, config, comm);
  });
}

HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms) {
  const char* fn = "HcclCommInitAll";
  return apiCall(fn, [&]() -> Outcome {
    HCCL_RETURN_IF_FAILED(
        cohort::hccl::requirePointers(fn, {{"devices", devices}, {"comms", comms}}));
    if (ndev == 0) return invalidParameter(fn, "0", "ndev", "at least 1");
    HCCL_RETURN_IF_FAILED(cohort::hccl::requireValidEnvironment());
    HCCL_RETURN_IF_FAILED(checkDevices(fn, ndev, devices));
    std::vector<std::unique_ptr<Communicator>> made;
    COHORT_RETURN_IF_ERROR(Communicator::initAll(std::vector<int>(devices, devices + ndev), &made));
    for (std::uint32_t i = 0; i < ndev; ++i) {
      comms[i] = CommRegistry::get().add(std::move(made[i]), "hccl_world_all");
    }
    return Status::Ok();
  });
}

HcclResult HcclCreateSubCommConfig(HcclComm* comm, uint32_t rankNum, uint32_t* rankIds,
                                   uint64_t subCommId, uint32_t subCommRankId,
                                   HcclCommConfig* config, HcclComm* subComm) {
  const char* fn = "HcclCreateSubCommConfig";
  return apiCall(fn, [&]() {
    return createSubComm(fn, comm, rankNum, rankIds, subCommId, subCommRankId, config, subComm);
  });
}
