// Starting one rank: a child process in its own process group (so that a signal
// to the group reaches whatever the rank started), killed by the kernel if
// cohortrun dies (PR_SET_PDEATHSIG), with stdin from /dev/null and stdout/stderr
// on pipes that cohortrun reads.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "cohort/status.h"

namespace cohort::launcher {

/// A started rank. The caller owns the two descriptors (non-blocking, close-on-exec)
/// and must reap the pid.
struct RankProcess {
  pid_t pid = -1;
  int stdoutFd = -1;
  int stderrFd = -1;
};

/// PROG as execvp would find it: a name with a '/' as is, else the first
/// executable file of that name in `pathVariable` (a PATH value). kInvalidArgument
/// naming the program when there is none ("command not found").
Status resolveProgram(const std::string& program, const std::string& pathVariable,
                      std::string* path);

/// "NAME=value" entries: `base` (such as environ) with `overrides` replacing or
/// adding variables. Order: base order, then new names in override order.
std::vector<std::string> mergeEnvironment(
    char** base, const std::vector<std::pair<std::string, std::string>>& overrides);

/// Forks and execs `path` with `argv` (argv[0] included) and `env`. Returns once
/// the exec succeeded; an exec failure is kSystemError naming the path and errno
/// (the child is reaped). Must be called from the thread that stays alive for
/// the job (the death signal follows the forking thread). Call with cohortrun's
/// signals blocked: the child unblocks them and restores SIGPIPE. Non-empty
/// `cpus` binds the child to those processors (best effort: a refused binding
/// leaves it unbound).
Status spawnRank(const std::string& path, const std::vector<std::string>& argv,
                 const std::vector<std::string>& env, RankProcess* out,
                 const std::vector<int>& cpus = {});

}  // namespace cohort::launcher
