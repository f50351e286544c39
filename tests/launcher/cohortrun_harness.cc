// fork/exec of cohortrun with its two streams on pipes read by poll(); the test
// process never blocks on one stream while cohortrun blocks on the other.
#include "cohortrun_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <regex>
#include <sstream>
#include <thread>

extern char** environ;

namespace cohort::launcher::testing {

namespace {

double nowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A /proc file's bytes, or what was read before an error. Read with read(2): a
// process that exits meanwhile makes the read fail with ESRCH, which an ifstream
// turns into an exception.
std::string readProcFile(const std::string& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fd);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool isLiveJobProcess(pid_t pidNumber, const std::string& marker) {
  const std::string pid = std::to_string(pidNumber);
  if (readProcFile("/proc/" + pid + "/cmdline").find(marker) == std::string::npos) return false;
  const std::string line = readProcFile("/proc/" + pid + "/stat");
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

std::vector<std::string> rankJob(std::vector<std::string> options, const std::string& marker,
                                 const std::vector<std::string>& specs) {
  options.push_back("--");
  options.push_back(TEST_RANK_PATH);
  options.push_back(marker);
  options.insert(options.end(), specs.begin(), specs.end());
  return options;
}

Cohortrun::Cohortrun(const std::vector<std::string>& cohortrunArgs,
                     const std::vector<std::string>& extraEnv) {
  std::vector<std::string> args = {COHORTRUN_PATH};
  args.insert(args.end(), cohortrunArgs.begin(), cohortrunArgs.end());
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back("COHORT_IF_IP=127.0.0.1");
  env.push_back("COHORT_IF_BASE_PORT=47500");
  env.insert(env.end(), extraEnv.begin(), extraEnv.end());
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return;
  auto argv = pointers(args);
  auto envp = pointers(env);
  startS_ = nowS();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(126);
  }
  ::close(out[1]);
  ::close(err[1]);
  outFd_ = out[0];
  errFd_ = err[0];
}

Cohortrun::~Cohortrun() {
  if (pid_ > 0 && result_.exitCode == -1 && result_.termSignal == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (outFd_ >= 0) ::close(outFd_);
  if (errFd_ >= 0) ::close(errFd_);
}

bool Cohortrun::readSome(int timeoutMs) {
  pollfd fds[2] = {{outFd_, POLLIN, 0}, {errFd_, POLLIN, 0}};
  if (outFd_ < 0 && errFd_ < 0) return false;
  if (::poll(fds, 2, timeoutMs) <= 0) return true;
  char buffer[4096];
  int* fdPtrs[2] = {&outFd_, &errFd_};
  std::string* sinks[2] = {&result_.out, &result_.err};
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || fds[i].revents == 0) continue;
    const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
    if (n > 0) {
      sinks[i]->append(buffer, static_cast<std::size_t>(n));
    } else {
      ::close(*fdPtrs[i]);
      *fdPtrs[i] = -1;
    }
  }
  return true;
}

bool Cohortrun::waitReadyThenSignal(int count, int sig) {
  const double until = nowS() + 10;
  auto ready = [&] {
    int n = 0;
    for (std::size_t at = result_.out.find("ready pid="); at != std::string::npos;
         at = result_.out.find("ready pid=", at + 1)) {
      ++n;
    }
    return n >= count;
  };
  while (!ready()) {
    if (nowS() > until || !readSome(100)) return false;
  }
  if (sig != 0) ::kill(pid_, sig);
  return true;
}

RunResult Cohortrun::finish() {
  const double until = nowS() + 30;
  while (outFd_ >= 0 || errFd_ >= 0) {
    if (nowS() > until) {
      result_.hung = true;
      ::kill(pid_, SIGKILL);
      break;
    }
    readSome(100);
  }
  int status = 0;
  ::waitpid(pid_, &status, 0);
  result_.seconds = nowS() - startS_;
  if (WIFEXITED(status)) result_.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.termSignal = WTERMSIG(status);
  return result_;
}

std::string uniqueMarker(const char* test) {
  static std::atomic<int> counter{0};
  return std::string("cohortrun-test-") + test + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

std::vector<pid_t> processesLeft(const std::string& marker, int waitMs) {
  const double until = nowS() + waitMs / 1000.0;
  for (;;) {
    std::vector<pid_t> left;
    DIR* proc = ::opendir("/proc");
    for (dirent* e = ::readdir(proc); e != nullptr; e = ::readdir(proc)) {
      const std::string name = e->d_name;
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      if (isLiveJobProcess(std::stoi(name), marker)) left.push_back(std::stoi(name));
    }
    ::closedir(proc);
    if (left.empty() || nowS() > until) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<pid_t> reportedPids(const std::string& output) {
  std::vector<pid_t> pids;
  const std::regex field("(pid|child)=([0-9]+)");
  for (std::sregex_iterator it(output.begin(), output.end(), field), end; it != end; ++it) {
    pids.push_back(std::stoi((*it)[2]));
  }
  return pids;
}

std::vector<std::string> linesStartingWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

void expectNothingLeft(const std::string& marker, const RunResult& r) {
  const std::vector<pid_t> left = processesLeft(marker);
  EXPECT_TRUE(left.empty()) << "processes of the job remain";
  for (pid_t pid : left) ::kill(pid, SIGKILL);  // do not leak them into the next tests
  for (pid_t pid : reportedPids(r.out)) {
    EXPECT_FALSE(isLiveJobProcess(pid, marker)) << "pid " << pid << " reported by a rank lives";
  }
}

}  // namespace cohort::launcher::testing
