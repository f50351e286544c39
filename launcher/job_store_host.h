// The job's rendezvous store as cohortrun hosts it, and the variables that tell
// each rank where it is (the launcher's half of the environment contract that
// transport/jobenv/job_env.h reads).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "launcher/launch_plan.h"
#include "transport/root_info.h"
#include "transport/tcp_store.h"

namespace cohort::launcher {

using Variables = std::vector<std::pair<std::string, std::string>>;

/// Owns the store server (when this machine serves it) for the job's lifetime;
/// destroying it stops the server. Not thread-safe; one per cohortrun.
class JobStoreHost {
 public:
  /// One machine: createRoot (COHORT_IF_IP / COHORT_IF_BASE_PORT choose where).
  /// Several: the root info names --master; the machine holding rank 0 serves
  /// there, with COHORT_JOB_TOKEN's token or, with a warning, a hash of the address.
  static Status start(const LaunchPlan& plan, std::unique_ptr<JobStoreHost>* out);

  const transport::RootInfo& rootInfo() const { return root_; }
  /// RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, COHORT_DEVICE_ID,
  /// COHORT_ROOT_INFO, COHORT_JOB_TOKEN, and MASTER_ADDR/MASTER_PORT,
  /// COHORT_RANKTABLE when the plan has them.
  Variables rankVariables(const LaunchPlan& plan, const RankSlot& slot) const;

 private:
  transport::RootInfo root_;
  std::shared_ptr<transport::TcpStoreServer> server_;
};

}  // namespace cohort::launcher
