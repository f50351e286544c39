#include "rank_processes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "free_port.h"

extern char** environ;

namespace cohort::testing {

namespace {

// Sanitizer settings of the test run reach the workers too.
void inheritSanitizerOptions(std::map<std::string, std::string>* env) {
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    for (const char* prefix : {"ASAN_", "UBSAN_", "LSAN_", "TSAN_"}) {
      if (entry.rfind(prefix, 0) == 0) {
        const auto eq = entry.find('=');
        (*env)[entry.substr(0, eq)] = entry.substr(eq + 1);
      }
    }
  }
}

void apply(const std::vector<std::string>& entries, std::map<std::string, std::string>* env) {
  for (const std::string& e : entries) {
    const auto eq = e.find('=');
    (*env)[e.substr(0, eq)] = eq == std::string::npos ? "" : e.substr(eq + 1);
  }
}

std::map<std::string, std::string> rankEnvironment(const JobSpec& spec, int r, int port) {
  std::map<std::string, std::string> env = {
      {"RANK", std::to_string(r)},
      {"WORLD_SIZE", std::to_string(spec.ranks)},
      {"LOCAL_RANK", std::to_string(r)},
      {"LOCAL_WORLD_SIZE", std::to_string(spec.ranks)},
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", std::to_string(port)},
      {"COHORT_IF_IP", "127.0.0.1"},
      {"COHORT_IF_BASE_PORT", std::to_string(port)},
      {"COHORT_TRANSPORT", spec.transport},
      {"COHORT_DEVICE_MEMORY", "1G"},
      {"COHORT_CONNECT_TIMEOUT", "20"},
      {"COHORT_JOB_TOKEN", "reliability-job-" + std::to_string(port)},
  };
  inheritSanitizerOptions(&env);
  apply(spec.env, &env);
  const auto own = spec.rankEnv.find(r);
  if (own != spec.rankEnv.end()) apply(own->second, &env);
  return env;
}

pid_t spawnRank(const std::string& worker, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env, const std::string& logPath) {
  std::vector<std::string> envText;
  for (const auto& [name, value] : env) envText.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& e : envText) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argText = {worker};
  argText.insert(argText.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argText) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, worker.c_str(), &files, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  return rc == 0 ? pid : -1;
}

int decodeStatus(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int failureCode(const std::string& log) {
  const auto at = log.find("FAILED code=");
  return at == std::string::npos ? -1 : std::atoi(log.c_str() + at + 12);
}

std::string lineWith(const std::string& log, const std::string& needle) {
  const auto at = log.find(needle);
  if (at == std::string::npos) return "";
  const auto begin = log.rfind('\n', at);
  const auto end = log.find('\n', at);
  const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
  return log.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

std::string failureLine(const std::string& log) { return lineWith(log, "FAILED code="); }

double secondsSince(const RankProcess& p, Clock::time_point since) {
  return Seconds(p.exitedAt - since).count();
}

Job::Job(const std::string& worker, JobSpec spec) : port_(::cohort::test::freePort()) {
  for (int r = 0; r < spec.ranks; ++r) {
    RankProcess p;
    p.rank = r;
    p.logPath = std::string(::testing::TempDir()) + "reliability_" + std::to_string(getpid()) +
                "_" + std::to_string(port_) + "_" + std::to_string(r) + ".log";
    bool skip = false;
    for (int s : spec.notStarted) skip = skip || s == r;
    if (!skip) {
      const auto own = spec.rankArgs.find(r);
      std::vector<std::string> args = own != spec.rankArgs.end() ? own->second : spec.args;
      if (spec.rankArgument) args.push_back(std::to_string(r));
      p.pid = spawnRank(worker, args, rankEnvironment(spec, r, port_), p.logPath);
    }
    ranks_.push_back(p);
  }
}

Job::~Job() {
  for (RankProcess& p : ranks_) {
    if (p.pid > 0 && p.exitCode == -2) {
      ::kill(p.pid, SIGKILL);
      int status = 0;
      ::waitpid(p.pid, &status, 0);
      p.exitCode = -1;
    }
    std::remove(p.logPath.c_str());
  }
}

std::string Job::log(int r) const {
  std::ifstream in(ranks_[static_cast<std::size_t>(r)].logPath);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Job::waitFor(int r, const std::string& needle, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (log(r).find(needle) != std::string::npos) return true;
    RankProcess& p = rank(r);
    int status = 0;
    if (p.exitCode == -2 && ::waitpid(p.pid, &status, WNOHANG) == p.pid) {
      p.exitCode = decodeStatus(status);
      p.exitedAt = Clock::now();
    }
    if (p.exitCode != -2) return log(r).find(needle) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void Job::signal(int r, int sig) {
  if (rank(r).pid > 0 && rank(r).exitCode == -2) ::kill(rank(r).pid, sig);
}

int Job::wait(int r, std::chrono::milliseconds limit) {
  RankProcess& p = rank(r);
  if (p.pid <= 0 || p.exitCode != -2) return p.exitCode;
  const auto end = Clock::now() + limit;
  int status = 0;
  while (Clock::now() < end) {
    if (::waitpid(p.pid, &status, WNOHANG) == p.pid) {
      p.exitedAt = Clock::now();
      p.exitCode = decodeStatus(status);
      return p.exitCode;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(p.pid, SIGKILL);
  ::waitpid(p.pid, &status, 0);
  p.exitedAt = Clock::now();
  p.exitCode = -1;
  return -1;
}

void Job::waitAll(std::chrono::milliseconds limit) {
  for (std::size_t r = 0; r < ranks_.size(); ++r) wait(static_cast<int>(r), limit);
}

std::string Job::leftBehind() const {
  std::string out;
  for (const RankProcess& p : ranks_) {
    if (p.pid <= 0) continue;
    if (p.exitCode == -2) out += " rank " + std::to_string(p.rank) + " not reaped;";
    if (::kill(p.pid, 0) == 0 || errno != ESRCH) {
      out += " rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ") alive;";
    }
  }
  return out;
}

}  // namespace cohort::testing
