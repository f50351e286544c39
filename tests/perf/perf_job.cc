#include "perf/perf_job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "free_port.h"

namespace cohort::perf::test {

namespace {

struct Child {
  pid_t pid = -1;
  std::string outPath, errPath;
};

// fork + exec with stdout/stderr redirected to files and `env` added.
Child spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& dir, int index) {
  Child c;
  c.outPath = dir + "/out." + std::to_string(index);
  c.errPath = dir + "/err." + std::to_string(index);
  c.pid = fork();
  if (c.pid != 0) return c;
  const int out = open(c.outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int err = open(c.errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
  // Only the variables given here describe the job (not a launcher around the test).
  if (env.count("RANK") != 0) {
    for (const char* v : {"COHORT_ROOT_INFO", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                          "PMIX_RANK", "SLURM_PROCID", "COHORT_DEVICE_ID"}) {
      unsetenv(v);
    }
  }
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

JobResult waitAll(std::vector<Child>& children, int timeoutS) {
  JobResult r;
  r.exitCodes.assign(children.size(), -1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutS);
  std::size_t left = children.size();
  while (left > 0) {
    for (std::size_t i = 0; i < children.size(); ++i) {
      int status = 0;
      if (children[i].pid < 0 || waitpid(children[i].pid, &status, WNOHANG) != children[i].pid) {
        continue;
      }
      r.exitCodes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      children[i].pid = -1;
      --left;
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (auto& c : children) {
        if (c.pid <= 0) continue;
        kill(c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
      }
      break;  // those still running keep exit code -1
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (const auto& c : children) {
    r.out.push_back(readFile(c.outPath));
    r.err.push_back(readFile(c.errPath));
    std::remove(c.outPath.c_str());
    std::remove(c.errPath.c_str());
  }
  return r;
}

std::string makeTempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/cohort_perf_test.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return "/tmp";
  return pattern;
}

}  // namespace

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int JobResult::exitCode() const {
  for (int c : exitCodes) {
    if (c != 0) return c;
  }
  return 0;
}

std::string JobResult::allErrors() const {
  std::string all;
  for (std::size_t i = 0; i < err.size(); ++i) {
    if (!err[i].empty()) all += "[stderr " + std::to_string(i) + "] " + err[i];
  }
  return all;
}

JobResult runRanks(const std::string& program, int nranks, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& extraEnv, int timeoutS) {
  const std::string dir = makeTempDir();
  const std::string port = std::to_string(::cohort::test::freePort());
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<Child> children;
  for (int r = 0; r < nranks; ++r) {
    std::map<std::string, std::string> env = {
        {"RANK", std::to_string(r)},       {"WORLD_SIZE", std::to_string(nranks)},
        {"LOCAL_RANK", std::to_string(r)}, {"LOCAL_WORLD_SIZE", std::to_string(nranks)},
        {"MASTER_ADDR", "127.0.0.1"},      {"MASTER_PORT", port}};
    for (const auto& kv : extraEnv) env[kv.first] = kv.second;
    children.push_back(spawn(argv, env, dir, r));
  }
  JobResult r = waitAll(children, timeoutS);
  rmdir(dir.c_str());
  return r;
}

JobResult runShell(const std::string& command, int timeoutS) {
  const std::string dir = makeTempDir();
  std::vector<Child> children = {spawn({"/bin/sh", "-c", command}, {}, dir, 0)};
  JobResult r = waitAll(children, timeoutS);
  rmdir(dir.c_str());
  return r;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

}  // namespace cohort::perf::test
