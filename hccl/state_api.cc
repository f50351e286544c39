// Process-wide configuration and communicator state: HcclSetConfig/GetConfig,
// HcclGetCommConfigCapability, HcclConfigGetInfo, HcclCommSuspend/Resume,
// HcclCommGetStatus, HcclCommGetHandleWithName, HcclCommRegCommStateCallback,
// HcclGroupStatusGet, HcclCommWorkingDevNicSet.
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/comm_registry.h"
#include "hccl/hccl.h"
#include "hccl/state_callbacks.h"

namespace cohort::hccl {

namespace {
std::mutex gCallbackMu;
struct Registration {
  HcclCommStateCallback cb;
  void* args;
};
std::map<std::string, Registration>& registrations() {
  static auto* r = new std::map<std::string, Registration>();  // used until exit
  return *r;
}
}  // namespace

Status runStateCallbacks(HcclComm comm, HcclCommStatePhase phase) {
  std::vector<Registration> calls;
  {
    std::lock_guard<std::mutex> lock(gCallbackMu);
    for (const auto& [name, r] : registrations()) calls.push_back(r);
  }
  for (const Registration& r : calls) {
    const HcclResult result = r.cb(comm, phase, r.args);
    if (result != HCCL_SUCCESS) {
      return makeError(ErrorCode::kInternal, "a communicator state callback returned {} ({})",
                       static_cast<int>(result), HcclGetErrorString(result));
    }
  }
  return Status::Ok();
}

thread_local int tGroupDepth = 0;
void noteGroup(int delta) { tGroupDepth += delta; }

}  // namespace cohort::hccl

namespace {

using cohort::ErrorCode;
using cohort::Status;
using cohort::hccl::apiCall;
using cohort::hccl::CommEntry;
using cohort::hccl::CommRegistry;
using cohort::hccl::invalidParameter;
using cohort::hccl::lookupComm;
using cohort::hccl::nullPointer;
using cohort::hccl::Outcome;

// HCCL_DETERMINISTIC for the process: from the environment until HcclSetConfig.
std::atomic<int> gDeterministic{-1};
int deterministic() {
  const int v = gDeterministic.load();
  return v >= 0 ? v : (cohort::Config::global().deterministic ? 1 : 0);
}

}  // namespace

HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue) {
  const char* fn = "HcclSetConfig";
  return apiCall(fn, [&]() -> Outcome {
    if (config != HCCL_DETERMINISTIC) {
      return invalidParameter(fn, std::to_string(static_cast<int>(config)), "config",
                              "HCCL_DETERMINISTIC (0)");
    }
    if (configValue.value < 0 || configValue.value > 2) {
      return invalidParameter(fn, std::to_string(configValue.value), "configValue.value",
                              "0, 1 or 2");
    }
    gDeterministic.store(configValue.value);
    return Status::Ok();
  });
}

HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue* configValue) {
  const char* fn = "HcclGetConfig";
  return apiCall(fn, [&]() -> Outcome {
    if (configValue == nullptr) return nullPointer(fn, "configValue");
    if (config != HCCL_DETERMINISTIC) {
      return invalidParameter(fn, std::to_string(static_cast<int>(config)), "config",
                              "HCCL_DETERMINISTIC (0)");
    }
    configValue->value = deterministic();
    return Status::Ok();
  });
}

// Every field of HcclCommConfig up to HCCL_COMM_CONFIG_BUFFER_NAME is read (comm_config.cc).
uint32_t HcclGetCommConfigCapability(void) { return HCCL_COMM_CONFIG_RESERVED; }

HcclResult HcclConfigGetInfo(HcclComm comm, HcclConfigType cfgType, uint32_t infoLen, void* info) {
  const char* fn = "HcclConfigGetInfo";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    if (info == nullptr) return nullPointer(fn, "info");
    if (cfgType == HCCL_CONFIG_TYPE_OP_EXPANSION_MODE) {
      if (infoLen != sizeof(HcclConfigTypeOpExpansionMode)) {
        return invalidParameter(fn, std::to_string(infoLen), "infoLen",
                                std::to_string(sizeof(HcclConfigTypeOpExpansionMode)));
      }
      const HcclConfigTypeOpExpansionMode mode = HCCL_OP_EXPANSION_MODE_HOST;
      std::memcpy(info, &mode, sizeof(mode));
      return Status::Ok();
    }
    if (cfgType == HCCL_CONFIG_TYPE_HCCL_ALGO) {
      if (infoLen < HCCL_COMM_ALGO_MAX_LENGTH) {
        return invalidParameter(fn, std::to_string(infoLen), "infoLen",
                                "at least HCCL_COMM_ALGO_MAX_LENGTH (1600)");
      }
      const std::string& algo = cohort::Config::global().hcclAlgo;
      const std::size_t n = std::min<std::size_t>(algo.size(), infoLen - 1);
      std::memcpy(info, algo.data(), n);
      static_cast<char*>(info)[n] = '\0';
      return Status::Ok();
    }
    return invalidParameter(fn, std::to_string(static_cast<int>(cfgType)), "cfgType",
                            "HCCL_CONFIG_TYPE_OP_EXPANSION_MODE or HCCL_CONFIG_TYPE_HCCL_ALGO");
  });
}

HcclResult HcclCommSuspend(HcclComm comm) {
  const char* fn = "HcclCommSuspend";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    entry->suspended.store(true);
    return Status::Ok();
  });
}

HcclResult HcclCommResume(HcclComm comm) {
  const char* fn = "HcclCommResume";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    COHORT_RETURN_IF_ERROR(cohort::hccl::runStateCallbacks(comm, HCCL_COMM_STATE_PHASE_RESUME_PRE));
    entry->suspended.store(false);
    return cohort::hccl::runStateCallbacks(comm, HCCL_COMM_STATE_PHASE_RESUME_POST);
  });
}

HcclResult HcclCommGetStatus(const char* commId, HcclCommStatus* status) {
  const char* fn = "HcclCommGetStatus";
  return apiCall(fn, [&]() -> Outcome {
    if (commId == nullptr) return nullPointer(fn, "commId");
    if (status == nullptr) return nullPointer(fn, "status");
    HcclComm comm = CommRegistry::get().findByName(commId);
    std::shared_ptr<CommEntry> entry = CommRegistry::get().find(comm);
    if (entry == nullptr) {
      return invalidParameter(fn, commId, "commId", "the name of a live communicator");
    }
    *status = entry->suspended.load() ? HCCL_COMM_STATUS_SUSPENDING : HCCL_COMM_STATUS_READY;
    return Status::Ok();
  });
}

HcclResult HcclCommGetHandleWithName(const char* commName, HcclComm* comm) {
  const char* fn = "HcclCommGetHandleWithName";
  return apiCall(fn, [&]() -> Outcome {
    if (commName == nullptr) return nullPointer(fn, "commName");
    if (comm == nullptr) return nullPointer(fn, "comm");
    HcclComm found = CommRegistry::get().findByName(commName);
    if (found == nullptr) {
      return Outcome(HCCL_E_NOT_FOUND,
                     cohort::makeError(ErrorCode::kInvalidArgument,
                                       "{}: no live communicator is named '{}'", fn, commName));
    }
    *comm = found;
    return Status::Ok();
  });
}

HcclResult HcclCommRegCommStateCallback(const char* regName, HcclCommStateCallback cb,
                                        void* args) {
  const char* fn = "HcclCommRegCommStateCallback";
  return apiCall(fn, [&]() -> Outcome {
    if (regName == nullptr) return nullPointer(fn, "regName");
    if (cb == nullptr) return nullPointer(fn, "cb");
    const std::size_t n = strnlen(regName, 161);
    if (n == 0 || n > 160) {
      return invalidParameter(fn, std::to_string(n) + " bytes", "regName",
                              "a name of 1 to 160 bytes");
    }
    std::lock_guard<std::mutex> lock(cohort::hccl::gCallbackMu);
    cohort::hccl::registrations()[regName] = cohort::hccl::Registration{cb, args};
    return Status::Ok();
  });
}

HcclResult HcclGroupStatusGet(bool* isGroupEnabled) {
  const char* fn = "HcclGroupStatusGet";
  return apiCall(fn, [&]() -> Outcome {
    if (isGroupEnabled == nullptr) return nullPointer(fn, "isGroupEnabled");
    *isGroupEnabled = cohort::hccl::tGroupDepth > 0;
    return Status::Ok();
  });
}

HcclResult HcclCommWorkingDevNicSet(HcclComm comm, uint32_t* ranks, bool* useBackup,
                                    uint32_t nRanks) {
  const char* fn = "HcclCommWorkingDevNicSet";
  return apiCall(fn, [&]() -> Outcome {
    (void)ranks;
    (void)useBackup;
    (void)nRanks;
    std::shared_ptr<CommEntry> entry;
    HCCL_RETURN_IF_FAILED(lookupComm(fn, comm, &entry));
    return Outcome(HCCL_E_NOT_SUPPORT,
                   cohort::makeError(ErrorCode::kNotSupported,
                                     "{}: not supported: Cohort's devices have one link address "
                                     "each, no backup NIC to move traffic to", fn));
  });
}
