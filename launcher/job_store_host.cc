// Every rank gets COHORT_ROOT_INFO, also on several machines: the store is then
// already served (by node 0's cohortrun), so no rank tries to serve it again as
// MASTER_ADDR alone would ask rank 0 to.
#include "launcher/job_store_host.h"

#include "cohort/version.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/jobenv/job_env.h"

namespace cohort::launcher {

Status JobStoreHost::start(const LaunchPlan& plan, std::unique_ptr<JobStoreHost>* out) {
  auto host = std::make_unique<JobStoreHost>();
  if (plan.masterAddr.empty()) {
    COHORT_RETURN_IF_ERROR(transport::createRoot(&host->root_, &host->server_));
  } else {
    bool hashed = false;
    host->root_.host = plan.masterAddr;
    host->root_.port = static_cast<std::uint16_t>(plan.masterPort);
    host->root_.protocolVersion = COHORT_PROTOCOL_VERSION;
    host->root_.token = transport::masterJobToken(Config::global().jobToken, plan.masterAddr,
                                                  plan.masterPort, plan.worldSize, &hashed);
    if (hashed) {
      COHORT_LOG(kWarn, "launcher",
                 "COHORT_JOB_TOKEN is not set: the job token is a hash of {}:{}/{}, which anyone "
                 "who knows the address can compute; set COHORT_JOB_TOKEN to the same secret on "
                 "every node",
                 plan.masterAddr, plan.masterPort, plan.worldSize);
    }
    if (plan.servesStore) {
      COHORT_RETURN_IF_ERROR(transport::startMasterStore(plan.masterAddr, plan.masterPort,
                                                         host->root_.token, &host->server_));
    }
  }
  transport::RootInfo parsed;  // what the ranks will parse: refuse a bad address here
  COHORT_RETURN_IF_ERROR(transport::RootInfo::fromText(host->root_.toText(), &parsed));
  COHORT_LOG(kInfo, "launcher", "job store {} ({})", host->root_.toText(),
             host->server_ ? "served here" : "served by another node");
  *out = std::move(host);
  return Status::Ok();
}

Variables JobStoreHost::rankVariables(const LaunchPlan& plan, const RankSlot& slot) const {
  Variables vars = {
      {"RANK", std::to_string(slot.rank)},
      {"LOCAL_RANK", std::to_string(slot.localRank)},
      {"WORLD_SIZE", std::to_string(plan.worldSize)},
      {"LOCAL_WORLD_SIZE", std::to_string(plan.localSize)},
      {"COHORT_DEVICE_ID", std::to_string(slot.deviceId)},
      {"COHORT_ROOT_INFO", root_.toText()},
      {"COHORT_JOB_TOKEN", root_.token.hex()},
  };
  if (!plan.masterAddr.empty()) {
    vars.emplace_back("MASTER_ADDR", plan.masterAddr);
    vars.emplace_back("MASTER_PORT", std::to_string(plan.masterPort));
  }
  if (!plan.ranktablePath.empty()) vars.emplace_back("COHORT_RANKTABLE", plan.ranktablePath);
  return vars;
}

}  // namespace cohort::launcher
