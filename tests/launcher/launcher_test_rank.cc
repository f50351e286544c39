// The program cohortrun starts in the launcher tests. Usage:
//   launcher_test_rank MARKER SPEC...
// MARKER is ignored (the tests find leftover processes by it in /proc); each SPEC
// is "R=ACTION" for rank R or "*=ACTION" for the others. Actions:
//   print            print the launcher's variables, a line on stderr, then a
//                    partial line on each stream; exit 0
//   store            join the job's store (detectJobEnvironment + connectJobStore),
//                    meet every rank there, print "store ok ..."; exit 0
//   store-late:MS    as store, then MS ms later use the store again, print "late ok"
//   sleep            print "ready pid=P", sleep until killed
//   ignore-term      ignore SIGTERM, print "ready pid=P", sleep until killed
//   spawn            fork a grandchild that sleeps, print "ready pid=P child=C", sleep
//   exit:N:MS        print "ready pid=P", sleep MS ms, exit with code N
//   segv:MS          print "ready pid=P", sleep MS ms, die by SIGSEGV (no core file)
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "transport/jobenv/job_env.h"

namespace {

using cohort::transport::JobEnvironment;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

[[noreturn]] void sleepForever() {
  for (;;) ::pause();
}

void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

int printEnv() {
  std::string line = "env";
  for (const char* name :
       {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "COHORT_DEVICE_ID",
        "COHORT_ROOT_INFO", "COHORT_JOB_TOKEN", "MASTER_ADDR", "MASTER_PORT", "COHORT_RANKTABLE"}) {
    line += std::string(" ") + name + "=" + env(name);
  }
  say(line);
  std::fprintf(stderr, "to-stderr rank %s\n", env("RANK").c_str());
  std::printf("partial-out");
  std::fprintf(stderr, "partial-err");
  return 0;
}

int meetAtStore(int lateMs) {
  JobEnvironment job;
  cohort::Status s = cohort::transport::detectJobEnvironment(&job);
  std::shared_ptr<cohort::transport::Store> store;
  std::shared_ptr<cohort::transport::TcpStoreServer> server;
  cohort::transport::JobToken token;
  const auto deadline = cohort::Deadline::afterMs(20000);
  if (s.ok()) s = cohort::transport::connectJobStore(job, deadline, &store, &token, &server);
  if (s.ok()) s = store->set("rank" + std::to_string(job.rank), {1});
  std::vector<std::string> keys;
  for (int r = 0; r < job.size; ++r) keys.push_back("rank" + std::to_string(r));
  if (s.ok()) s = store->wait(keys, deadline);
  if (!s.ok()) {
    std::fprintf(stderr, "store failed: %s\n", s.toString().c_str());
    return 1;
  }
  say("store ok rank=" + std::to_string(job.rank) + " size=" + std::to_string(job.size) +
      " source=" + job.source + " token=" + token.hex());
  if (lateMs < 0) return 0;
  sleepMs(lateMs);
  std::int64_t value = 0;
  s = store->add("late", 1, &value);
  if (!s.ok()) {
    std::fprintf(stderr, "late store call failed: %s\n", s.toString().c_str());
    return 1;
  }
  say("late ok");
  return 0;
}

int run(const std::string& action) {
  const std::string pid = std::to_string(::getpid());
  if (action == "print") return printEnv();
  if (action == "store") return meetAtStore(-1);
  if (action.rfind("store-late:", 0) == 0) return meetAtStore(std::atoi(action.c_str() + 11));
  if (action == "ignore-term") ::signal(SIGTERM, SIG_IGN);
  if (action == "spawn") {
    const pid_t child = ::fork();
    if (child == 0) sleepForever();
    say("ready pid=" + pid + " child=" + std::to_string(child));
    sleepForever();
  }
  say("ready pid=" + pid);
  if (action == "sleep" || action == "ignore-term") sleepForever();
  if (action.rfind("exit:", 0) == 0) {
    const std::size_t colon = action.find(':', 5);
    sleepMs(std::atoi(action.c_str() + colon + 1));
    return std::atoi(action.substr(5, colon - 5).c_str());
  }
  if (action.rfind("segv:", 0) == 0) {
    const rlimit noCore{0, 0};
    ::setrlimit(RLIMIT_CORE, &noCore);
    sleepMs(std::atoi(action.c_str() + 5));
    ::signal(SIGSEGV, SIG_DFL);  // die by the signal even where a sanitizer catches it
    ::raise(SIGSEGV);
  }
  std::fprintf(stderr, "launcher_test_rank: unknown action '%s'\n", action.c_str());
  return 99;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string rank = env("RANK");
  std::string action;
  for (int i = 2; i < argc; ++i) {
    const std::string spec = argv[i];
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos) continue;
    const std::string who = spec.substr(0, eq);
    if (who == rank || (who == "*" && action.empty())) action = spec.substr(eq + 1);
    if (who == rank) break;
  }
  return run(action);
}
