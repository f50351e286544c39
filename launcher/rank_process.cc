// fork + exec rather than posix_spawn: the child must set its death signal and
// process group, which posix_spawn cannot do. Between fork and exec the child of
// this multi-threaded process calls only async-signal-safe functions on data
// prepared before the fork.
#include "launcher/rank_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "common/error.h"

namespace cohort::launcher {

namespace {

struct Pipe {
  int read = -1;
  int write = -1;
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
  Status open(const char* what) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return systemError(errno, std::string("pipe for ") + what);
    read = fds[0];
    write = fds[1];
    return Status::Ok();
  }
  int takeRead() { return std::exchange(read, -1); }
};

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Everything the child needs, prepared before fork.
struct ChildSetup {
  pid_t parent;
  int stdinFd, stdoutFd, stderrFd, execStatusFd;
  const cpu_set_t* cpus;  // nullptr: not bound
  const char* path;
  char* const* argv;
  char* const* envp;
};

void closeFrom(int first, int last) {
  if (first > last) return;
  if (::close_range(first, last, 0) == 0) return;
  for (int fd = first; fd <= last && fd < 4096; ++fd) ::close(fd);
}

[[noreturn]] void runChild(const ChildSetup& c) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != c.parent) ::_exit(127);  // cohortrun died before the line above
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, nullptr);
  if (c.cpus != nullptr) (void)::sched_setaffinity(0, sizeof(cpu_set_t), c.cpus);
  // The three sources are pipes or /dev/null opened after fds 0-2 were ensured
  // open, so none of them is 0, 1 or 2 and dup2 never clobbers a later source.
  if (::dup2(c.stdinFd, 0) < 0 || ::dup2(c.stdoutFd, 1) < 0 || ::dup2(c.stderrFd, 2) < 0) {
    const int err = errno;
    (void)!::write(c.execStatusFd, &err, sizeof(err));
    ::_exit(127);
  }
  closeFrom(3, c.execStatusFd - 1);
  closeFrom(c.execStatusFd + 1, ~0U >> 1);
  ::execve(c.path, c.argv, c.envp);
  const int err = errno;
  (void)!::write(c.execStatusFd, &err, sizeof(err));
  ::_exit(127);
}

bool isExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The status pipe closes on a successful exec (close-on-exec) or carries the
// child's errno when exec failed.
Status awaitExec(pid_t pid, int statusFd, const std::string& path) {
  int childErr = 0;
  ssize_t n;
  do {
    n = ::read(statusFd, &childErr, sizeof(childErr));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(childErr))) return Status::Ok();
  ::waitpid(pid, nullptr, 0);
  return systemError(childErr, "cannot execute '" + path + "'");
}

}  // namespace

Status resolveProgram(const std::string& program, const std::string& pathVariable,
                      std::string* path) {
  if (program.empty()) return makeError(ErrorCode::kInvalidArgument, "empty program name");
  if (program.find('/') != std::string::npos) {
    if (!isExecutableFile(program)) {
      return makeError(ErrorCode::kInvalidArgument, "'{}' is not an executable file", program);
    }
    *path = program;
    return Status::Ok();
  }
  std::size_t start = 0;
  while (start <= pathVariable.size()) {
    std::size_t end = pathVariable.find(':', start);
    if (end == std::string::npos) end = pathVariable.size();
    const std::string dir = end == start ? "." : pathVariable.substr(start, end - start);
    if (isExecutableFile(dir + "/" + program)) {
      *path = dir + "/" + program;
      return Status::Ok();
    }
    start = end + 1;
  }
  return makeError(ErrorCode::kInvalidArgument, "'{}': command not found (searched PATH)", program);
}

std::vector<std::string> mergeEnvironment(
    char** base, const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::set<std::string> replaced;
  for (const auto& [name, value] : overrides) replaced.insert(name);
  std::vector<std::string> out;
  for (char** entry = base; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    const std::string name = eq ? std::string(*entry, eq - *entry) : std::string(*entry);
    if (replaced.count(name) == 0) out.emplace_back(*entry);
  }
  for (const auto& [name, value] : overrides) out.push_back(name + "=" + value);
  return out;
}

Status spawnRank(const std::string& path, const std::vector<std::string>& argv,
                 const std::vector<std::string>& env, RankProcess* out,
                 const std::vector<int>& cpus) {
  Pipe outPipe, errPipe, statusPipe;
  COHORT_RETURN_IF_ERROR(outPipe.open("stdout"));
  COHORT_RETURN_IF_ERROR(errPipe.open("stderr"));
  COHORT_RETURN_IF_ERROR(statusPipe.open("exec status"));
  const int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devNull < 0) return systemError(errno, "open /dev/null");
  std::vector<char*> argvPtrs = pointers(argv);
  std::vector<char*> envPtrs = pointers(env);
  cpu_set_t cpuSet;
  CPU_ZERO(&cpuSet);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &cpuSet);
  }
  const ChildSetup setup{::getpid(),     devNull,          outPipe.write,
                         errPipe.write,  statusPipe.write, cpus.empty() ? nullptr : &cpuSet,
                         path.c_str(),   argvPtrs.data(),  envPtrs.data()};
  const pid_t pid = ::fork();
  if (pid == 0) runChild(setup);
  const int forkErr = errno;
  ::close(devNull);
  if (pid < 0) return systemError(forkErr, "fork for '" + path + "'");
  ::setpgid(pid, pid);  // also here: no window where a group signal misses the child
  ::close(std::exchange(statusPipe.write, -1));
  ::close(std::exchange(outPipe.write, -1));
  ::close(std::exchange(errPipe.write, -1));
  COHORT_RETURN_IF_ERROR(awaitExec(pid, statusPipe.read, path));
  out->pid = pid;
  out->stdoutFd = outPipe.takeRead();
  out->stderrFd = errPipe.takeRead();
  ::fcntl(out->stdoutFd, F_SETFL, O_NONBLOCK);
  ::fcntl(out->stderrFd, F_SETFL, O_NONBLOCK);
  return Status::Ok();
}

}  // namespace cohort::launcher
