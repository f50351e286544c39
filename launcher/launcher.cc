// The order matters: signals are blocked before the store server's thread
// starts; the program is found before anything is spawned, so a typo fails once
// instead of once per rank; log files are opened before the first rank runs.
#include "launcher/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "common/error.h"
#include "common/log.h"
#include "launcher/job_store_host.h"
#include "launcher/node_sync.h"
#include "launcher/supervisor.h"
#include "transport/peer_info.h"
#include "transport/root_info.h"

extern char** environ;

namespace cohort::launcher {

namespace {

int fail(int code, const std::string& message) {
  writeAll(STDERR_FILENO, "cohortrun: " + message + "\n");
  return code;
}

// Pipes opened later must never land on 0, 1 or 2 (see rank_process.cc).
void ensureStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (opened >= 0 && opened != fd) {
        ::dup2(opened, fd);
        ::close(opened);
      }
    }
  }
}

Status openLogs(const std::string& dir, const LaunchPlan& plan, std::vector<int>* fds) {
  fds->assign(plan.ranks.size(), -1);
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return makeError(ErrorCode::kSystemError, "--log-dir {}: cannot create it: {}", dir,
                     ec.message());
  }
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
    const std::string path = dir + "/rank-" + std::to_string(plan.ranks[i].rank) + ".log";
    (*fds)[i] = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if ((*fds)[i] < 0) {
      const int err = errno;
      for (int fd : *fds) {
        if (fd >= 0) ::close(fd);
      }
      return systemError(err, "--log-dir: cannot open " + path);
    }
  }
  return Status::Ok();
}

// Starts every rank; the first that cannot start stops the job.
void spawnAll(const LaunchOptions& options, const LaunchPlan& plan, const std::string& program,
              const JobStoreHost& store, const std::vector<int>& logFds, Supervisor* supervisor) {
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankSlot& slot = plan.ranks[i];
    const auto env = mergeEnvironment(environ, store.rankVariables(plan, slot));
    RankProcess process;
    const Status s = spawnRank(program, options.command, env, &process, slot.cpus);
    if (!s.ok()) {
      for (std::size_t j = i; j < logFds.size(); ++j) {
        if (logFds[j] >= 0) ::close(logFds[j]);
      }
      supervisor->spawnFailed(slot.rank, s.message());
      return;
    }
    supervisor->addRank(slot.rank, process, logFds[i]);
  }
  COHORT_LOG(kInfo, "launcher", "started ranks {}..{} of {} on node {} of {}",
             plan.ranks.front().rank, plan.ranks.back().rank, plan.worldSize, plan.nodeRank,
             plan.nodeCount);
}

}  // namespace

int runJob(const LaunchOptions& options) {
  ensureStandardDescriptors();
  std::unique_ptr<SignalChannel> signals;
  Status s = SignalChannel::open(&signals);
  if (!s.ok()) return fail(1, s.message());
  LaunchPlan plan;
  s = makeLaunchPlan(options, &plan);
  if (!s.ok()) return fail(1, s.message());
  std::string program;
  const char* path = std::getenv("PATH");
  s = resolveProgram(options.command[0], path ? path : "/usr/local/bin:/usr/bin:/bin", &program);
  if (!s.ok()) return fail(127, s.message());
  std::unique_ptr<JobStoreHost> store;
  s = JobStoreHost::start(plan, &store);
  if (!s.ok()) return fail(1, "cannot start the job's store: " + s.message());
  std::vector<int> logFds;
  s = openLogs(options.logDir, plan, &logFds);
  if (!s.ok()) return fail(1, s.message());
  const Deadline jobDeadline =
      options.timeoutS > 0 ? Deadline::after(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::duration<double>(options.timeoutS)))
                           : Deadline::never();
  // The job's store learns which ranks died: survivors that shrink past them cannot
  // look at a process of another machine. At most a second per death, and only
  // once the store answered (it may be gone with the serving node).
  std::shared_ptr<transport::Store> notes;
  bool notesReachable = true;
  const transport::RootInfo root = store->rootInfo();
  SupervisorOptions supervised;
  supervised.graceS = options.graceS;
  supervised.timeoutS = options.timeoutS;
  supervised.keepGoing = options.keepGoing;
  supervised.onRankFailed = [&](int rank, pid_t pid, int waitStatus) {
    if (notes == nullptr && notesReachable &&
        !transport::connectStore(root, -1, Deadline::afterMs(1000), &notes).ok()) {
      notes.reset();
      notesReachable = false;
    }
    if (notes == nullptr) return;
    const std::string what =
        fmt::format("rank {} (pid {}) {}", rank, pid, describeWaitStatus(waitStatus));
    (void)notes->setBefore(transport::endedProcessKey(transport::localHostId(), pid),
                           transport::Bytes(what.begin(), what.end()), Deadline::afterMs(1000));
  };
  Supervisor supervisor(supervised, signals.get());
  spawnAll(options, plan, program, *store, logFds, &supervisor);
  NodeSync nodes(plan, store->rootInfo());
  nodes.start();
  int code = supervisor.run();
  nodes.finish(code, jobDeadline, [&] {
    for (int sig = signals->next(); sig != 0; sig = signals->next()) {
      if (sig == SIGCHLD) continue;
      code = 128 + sig;
      return true;
    }
    return false;
  });
  return code;
}

}  // namespace cohort::launcher
