// Reading the launcher's variables. Each source is a row of variable names, so
// the order of precedence is one table, and every error can name the variable
// it comes from.
#include "transport/jobenv/job_env.h"

#include <unistd.h>

#include <cstring>

#include "common/config.h"
#include "common/error.h"

extern char** environ;

namespace cohort::transport {

namespace {

// One integer variable: its name (for errors), value, and whether it was set.
struct Field {
  std::string name;
  int value = -1;
  bool present = false;
};

struct RankSource {
  const char* source;
  const char* rank;
  std::vector<const char*> size;  // the first one set is used
  std::vector<const char*> localRank;
  std::vector<const char*> localSize;
  const char* alsoNeeds;  // a variable that must be set too for this source, or nullptr
};

const std::vector<RankSource>& rankSources() {
  static const std::vector<RankSource> kSources = {
      {"cohortrun",
       "RANK",
       {"WORLD_SIZE"},
       {"LOCAL_RANK"},
       {"LOCAL_WORLD_SIZE"},
       "COHORT_ROOT_INFO"},
      {"openmpi",
       "OMPI_COMM_WORLD_RANK",
       {"OMPI_COMM_WORLD_SIZE"},
       {"OMPI_COMM_WORLD_LOCAL_RANK"},
       {"OMPI_COMM_WORLD_LOCAL_SIZE"},
       nullptr},
      {"pmix",
       "PMIX_RANK",
       {"WORLD_SIZE", "SLURM_NTASKS"},
       {"LOCAL_RANK", "SLURM_LOCALID"},
       {"LOCAL_WORLD_SIZE"},
       nullptr},
      {"slurm", "SLURM_PROCID", {"SLURM_NTASKS", "SLURM_NPROCS"}, {"SLURM_LOCALID"}, {}, nullptr},
      {"torchrun/env", "RANK", {"WORLD_SIZE"}, {"LOCAL_RANK"}, {"LOCAL_WORLD_SIZE"}, nullptr},
  };
  return kSources;
}

const std::string* find(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

Status readInt(const EnvMap& env, const char* name, Field* field) {
  const std::string* text = find(env, name);
  if (text == nullptr) return Status::Ok();
  if (text->empty() || text->size() > 9 ||
      text->find_first_not_of("0123456789") != std::string::npos) {
    return makeError(ErrorCode::kConfigError, "{}='{}' is not a non-negative integer", name, *text);
  }
  field->name = name;
  field->value = std::stoi(*text);
  field->present = true;
  return Status::Ok();
}

// The first of `names` that is set.
Status readFirst(const EnvMap& env, const std::vector<const char*>& names, Field* field) {
  for (const char* name : names) {
    if (find(env, name) != nullptr) return readInt(env, name, field);
  }
  return Status::Ok();
}

std::string joinNames(const std::vector<const char*>& names) {
  std::string out;
  for (const char* name : names) out += (out.empty() ? "" : " or ") + std::string(name);
  return out;
}

// Slurm says how many tasks each node runs, not how many this one does.
Status slurmLocalSize(const EnvMap& env, Field* field) {
  const char* var =
      find(env, "SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
  const std::string* text = find(env, var);
  if (text == nullptr) return Status::Ok();
  std::vector<int> counts;
  COHORT_RETURN_IF_ERROR(expandSlurmTasksPerNode(var, *text, &counts));
  Field node;
  COHORT_RETURN_IF_ERROR(readInt(env, "SLURM_NODEID", &node));
  if (!node.present && counts.size() != 1) return Status::Ok();  // which node is unknown
  const int index = node.present ? node.value : 0;
  if (index >= static_cast<int>(counts.size())) {
    return makeError(ErrorCode::kConfigError,
                     "SLURM_NODEID={} is not below the {} nodes of {}='{}'", index, counts.size(),
                     var, *text);
  }
  field->name = var;
  field->value = counts[index];
  field->present = true;
  return Status::Ok();
}

Status checkRanks(const Field& rank, const Field& size, const Field& localRank,
                  const Field& localSize) {
  if (size.value < 1) {
    return makeError(ErrorCode::kConfigError, "{}={} must be at least 1", size.name, size.value);
  }
  if (rank.value >= size.value) {
    return makeError(ErrorCode::kConfigError, "{}={} is not below {}={}", rank.name, rank.value,
                     size.name, size.value);
  }
  if (localSize.present && (localSize.value < 1 || localSize.value > size.value)) {
    return makeError(ErrorCode::kConfigError, "{}={} is not in 1..{}={}", localSize.name,
                     localSize.value, size.name, size.value);
  }
  const Field& bound = localSize.present ? localSize : size;
  if (localRank.present && localRank.value >= bound.value) {
    return makeError(ErrorCode::kConfigError, "{}={} is not below {}={}", localRank.name,
                     localRank.value, bound.name, bound.value);
  }
  return Status::Ok();
}

Status readRanks(const EnvMap& env, JobEnvironment* job) {
  for (const RankSource& src : rankSources()) {
    if (find(env, src.rank) == nullptr) continue;
    if (src.alsoNeeds != nullptr && find(env, src.alsoNeeds) == nullptr) continue;
    Field rank, size, localRank, localSize;
    COHORT_RETURN_IF_ERROR(readInt(env, src.rank, &rank));
    COHORT_RETURN_IF_ERROR(readFirst(env, src.size, &size));
    if (!size.present) {
      return makeError(ErrorCode::kConfigError, "{}={} is set but {} is not ({} launch)", src.rank,
                       rank.value, joinNames(src.size), src.source);
    }
    COHORT_RETURN_IF_ERROR(readFirst(env, src.localRank, &localRank));
    COHORT_RETURN_IF_ERROR(readFirst(env, src.localSize, &localSize));
    if (!localSize.present && find(env, "SLURM_LOCALID") != nullptr) {
      COHORT_RETURN_IF_ERROR(slurmLocalSize(env, &localSize));
    }
    COHORT_RETURN_IF_ERROR(checkRanks(rank, size, localRank, localSize));
    job->source = src.source;
    job->rank = rank.value;
    job->size = size.value;
    job->localRank = localRank.present ? localRank.value : -1;
    job->localSize = localSize.present ? localSize.value : 0;
    return Status::Ok();
  }
  return makeError(
      ErrorCode::kUnavailable,
      "no job environment: none of RANK (with COHORT_ROOT_INFO), OMPI_COMM_WORLD_RANK, "
      "PMIX_RANK, SLURM_PROCID or RANK is set; start the program with cohortrun, "
      "mpirun, srun or torchrun");
}

Status readStoreAddress(const EnvMap& env, JobEnvironment* job) {
  if (const std::string* text = find(env, "COHORT_ROOT_INFO")) {
    RootInfo info;
    const Status s = RootInfo::fromText(*text, &info);
    if (!s.ok()) return Status(s.code(), "COHORT_ROOT_INFO: " + s.message());
    job->rootInfo = info;
  }
  const std::string* addr = find(env, "MASTER_ADDR");
  const std::string* port = find(env, "MASTER_PORT");
  if (addr == nullptr && port == nullptr) return Status::Ok();
  if (addr == nullptr || port == nullptr) {
    return makeError(ErrorCode::kConfigError, "{}='{}' is set but {} is not",
                     addr ? "MASTER_ADDR" : "MASTER_PORT", addr ? *addr : *port,
                     addr ? "MASTER_PORT" : "MASTER_ADDR");
  }
  Field portField;
  const Status s = readInt(env, "MASTER_PORT", &portField);
  if (!s.ok() || portField.value < 1 || portField.value > 65535) {
    return makeError(ErrorCode::kConfigError, "MASTER_PORT='{}' is not a port number (1..65535)",
                     *port);
  }
  if (addr->empty() || addr->find_first_of(" \t/") != std::string::npos) {
    return makeError(ErrorCode::kConfigError, "MASTER_ADDR='{}' is not a host name or address",
                     *addr);
  }
  job->masterAddr = *addr;
  job->masterPort = portField.value;
  return Status::Ok();
}

Status readExtras(const EnvMap& env, JobEnvironment* job) {
  if (const std::string* token = find(env, "COHORT_JOB_TOKEN")) job->jobToken = *token;
  Field device;
  COHORT_RETURN_IF_ERROR(readInt(env, "COHORT_DEVICE_ID", &device));
  job->deviceId = device.present ? device.value : -1;
  for (const char* var : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
    if (const std::string* list = find(env, var)) {
      return expandSlurmNodeList(var, *list, &job->nodeList);
    }
  }
  return Status::Ok();
}

bool isJobVariable(const std::string& name) {
  static const char* kNames[] = {
      "RANK",        "WORLD_SIZE",       "LOCAL_RANK",       "LOCAL_WORLD_SIZE", "MASTER_ADDR",
      "MASTER_PORT", "COHORT_ROOT_INFO", "COHORT_DEVICE_ID", "PMIX_RANK"};
  for (const char* known : kNames) {
    if (name == known) return true;
  }
  return name.rfind("OMPI_COMM_WORLD_", 0) == 0 || name.rfind("SLURM_", 0) == 0;
}

}  // namespace

Status detectJobEnvironment(const EnvMap& env, JobEnvironment* out) {
  JobEnvironment job;
  COHORT_RETURN_IF_ERROR(readRanks(env, &job));
  COHORT_RETURN_IF_ERROR(readStoreAddress(env, &job));
  COHORT_RETURN_IF_ERROR(readExtras(env, &job));
  *out = std::move(job);
  return Status::Ok();
}

EnvMap jobVariables() {
  EnvMap env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    std::string name(*entry, eq - *entry);
    if (isJobVariable(name)) env[name] = eq + 1;
  }
  const std::string& token = Config::global().jobToken;
  if (!token.empty()) env["COHORT_JOB_TOKEN"] = token;
  return env;
}

Status detectJobEnvironment(JobEnvironment* out) {
  return detectJobEnvironment(jobVariables(), out);
}

}  // namespace cohort::transport
