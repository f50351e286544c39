// Collectives between real processes over shm and over tcp, and a rank killed
// mid-operation: every survivor reports the dead rank promptly.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "free_port.h"

extern char** environ;

namespace {

struct Rank {
  pid_t pid;
  std::string log;
};

using cohort::test::freePort;

std::vector<Rank> start(int n, const std::string& mode, const std::string& transport, int port,
                        const std::string& table = "",
                        const std::vector<std::vector<std::string>>& rankEnv = {}) {
  std::vector<Rank> ranks;
  for (int r = 0; r < n; ++r) {
    Rank rk;
    rk.log = std::string(testing::TempDir()) + "mp_" + std::to_string(getpid()) + "_" + std::to_string(port) + "_" + std::to_string(r) + ".log";
    std::vector<std::string> env = {"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(n),
                                    "LOCAL_RANK=" + std::to_string(r), "LOCAL_WORLD_SIZE=" + std::to_string(n),
                                    "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
                                    "COHORT_TRANSPORT=" + transport, "COHORT_IF_IP=127.0.0.1",
                                    "COHORT_DEVICE_MEMORY=1G", "COHORT_CONNECT_TIMEOUT=30",
                                    "COHORT_IF_BASE_PORT=" + std::to_string(table.empty() ? 60000 : port)};
    if (static_cast<std::size_t>(r) < rankEnv.size()) {
      env.insert(env.end(), rankEnv[r].begin(), rankEnv[r].end());
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string worker = COHORT_MP_WORKER;
    std::string rankArg = std::to_string(r);
    std::vector<char*> argv = {const_cast<char*>(worker.c_str()), const_cast<char*>(mode.c_str())};
    if (!table.empty()) {
      argv.push_back(const_cast<char*>(table.c_str()));
      argv.push_back(rankArg.data());
    }
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, rk.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn(&rk.pid, worker.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ranks.push_back(rk);
  }
  return ranks;
}

// Waits for a rank with a deadline; kills it past the deadline (-1).
int waitRank(pid_t pid, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class MultiProcessTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MultiProcessTest, CollectivesAcrossProcesses) {
  for (int n : {2, 3, 4}) {
    auto ranks = start(n, "check", GetParam(), freePort());
    for (int r = 0; r < n; ++r) {
      const int code = waitRank(ranks[r].pid, std::chrono::seconds(120));
      const std::string log = slurp(ranks[r].log);
      EXPECT_EQ(code, 0) << "n=" << n << " rank " << r << ":\n" << log;
      EXPECT_NE(log.find("check OK"), std::string::npos) << log;
      EXPECT_NE(log.find(GetParam() == "tcp" ? "tcp" : "shm"), std::string::npos) << log;
    }
  }
}

// Small collectives (the mesh's posted ones) queued without a synchronization, with
// one rank per processor and with more ranks than processors: outputs seen by
// the host, a kernel, another stream and a large call are all right.
TEST(PostedTest, OutputsAreThereWheneverTheStreamSaysTheCallIsDone) {
  for (int n : {3, 5}) {
    auto ranks = start(n, "posted", "shm", freePort());
    for (int r = 0; r < n; ++r) {
      const int code = waitRank(ranks[r].pid, std::chrono::seconds(120));
      const std::string log = slurp(ranks[r].log);
      EXPECT_EQ(code, 0) << "n=" << n << " rank " << r << ":\n" << log;
      EXPECT_NE(log.find("posted OK"), std::string::npos) << log;
    }
  }
}

// A posted call that does not match fails on every rank when the stream is
// synchronized: another count, a large (not posted) call on the other ranks,
// a rank that exited.
TEST(PostedTest, AMismatchOrADeadRankFailsEveryOtherRank) {
  constexpr int n = 3;
  struct Case {
    const char* kind;
    const char* others;  // what ranks 0 and 2 must report
  };
  for (const Case& c : {Case{"mismatch", "mismatched collective"}, Case{"crossed", "mismatched collective"},
                        Case{"dead", "remote rank 1"}}) {
    std::vector<std::vector<std::string>> env(n, {std::string("POSTFAIL=") + c.kind});
    auto ranks = start(n, "postfail", "shm", freePort(), "", env);
    const auto begin = std::chrono::steady_clock::now();
    // Rank 1 first: until it is reaped, an exited rank looks alive to its peers.
    for (int r : {1, 0, 2}) {
      const int code = waitRank(ranks[r].pid, std::chrono::seconds(60));
      const std::string log = slurp(ranks[r].log);
      if (r == 1 && std::string(c.kind) == "dead") continue;
      EXPECT_EQ(code, 7) << c.kind << " rank " << r << ":\n" << log;
      EXPECT_NE(log.find(r == 1 ? "mismatched collective" : c.others), std::string::npos)
          << c.kind << " rank " << r << ":\n" << log;
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), 20)
        << c.kind;
  }
}

// Two "nodes" of two ranks each (COHORT_HOST_ID): shm inside a node, tcp between.
// Numbered node by node (A A B B), all five collectives run hierarchical;
// interleaved (A B A B), allgather and reduce-scatter cannot place blocks that way
// and run flat. Every element is checked either way.
TEST(HierarchicalTest, FiveCollectivesOverTwoNodes) {
  struct Layout {
    std::vector<const char*> hosts;
    const char* expect;
  };
  for (const Layout& layout : {Layout{{"A", "A", "B", "B"},
                                      "allreduce,allgather,reducescatter,broadcast,reduce"},
                               Layout{{"A", "B", "A", "B"}, "allreduce,broadcast,reduce"}}) {
    std::vector<std::vector<std::string>> env;
    for (const char* host : layout.hosts) {
      env.push_back({std::string("COHORT_HOST_ID=mp-") + host, std::string("HIER_EXPECT=") + layout.expect});
    }
    auto ranks = start(4, "hier", "auto", freePort(), "", env);
    for (int r = 0; r < 4; ++r) {
      const int code = waitRank(ranks[r].pid, std::chrono::seconds(120));
      const std::string log = slurp(ranks[r].log);
      EXPECT_EQ(code, 0) << layout.hosts[1] << " layout, rank " << r << ":\n" << log;
      EXPECT_NE(log.find("hier OK"), std::string::npos) << log;
    }
  }
}

// SIGKILL one of 4 ranks during a 64 MiB allreduce loop: every survivor fails
// with a "remote rank ... died/closed" error within 5 s, and none is left behind.
TEST_P(MultiProcessTest, KilledRankIsReportedBySurvivors) {
  const int n = 4;
  auto ranks = start(n, "loop", GetParam(), freePort());
  // Every rank must be in the loop before the kill, or a survivor may fail some other way
  // (initialising). Starting 4 processes takes seconds on a loaded machine: up to 60 s.
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int looping = 0;
  while (looping < n && std::chrono::steady_clock::now() < giveUp) {
    looping = 0;
    for (const Rank& rk : ranks) looping += slurp(rk.log).find("looping") != std::string::npos;
    if (looping < n) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (looping < n) {
    std::string logs;
    for (const Rank& rk : ranks) logs += slurp(rk.log) + "\n";
    for (const Rank& rk : ranks) waitRank(rk.pid, std::chrono::seconds(0));  // kills, reaps
    FAIL() << looping << " of " << n << " ranks started looping within 60 s:\n" << logs;
  }
  // Let them run a while.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(ranks[2].pid, SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  waitRank(ranks[2].pid, std::chrono::seconds(5));
  for (int r : {0, 1, 3}) {
    const int code = waitRank(ranks[r].pid, std::chrono::seconds(10));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
    const std::string log = slurp(ranks[r].log);
    EXPECT_EQ(code, 7) << "rank " << r << " did not report the failure (code " << code << "):\n" << log;
    EXPECT_LT(secs, 5.5) << "rank " << r;
    EXPECT_TRUE(log.find("remote") != std::string::npos) << log;
  }
}

// Ranks started by hand from one rank table find each other through it.
TEST(RankTableJobTest, RanksStartedFromATableFindEachOther) {
  const std::string table = std::string(testing::TempDir()) + "table_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream out(table);
    out << R"({"version": "1.0", "status": "completed", "server_count": "1", "server_list": [
      {"server_id": "node0", "host_ip": "127.0.0.1", "device": [
        {"device_id": "0", "device_ip": "192.168.100.1", "rank_id": "0"},
        {"device_id": "1", "device_ip": "192.168.100.2", "rank_id": "1"},
        {"device_id": "2", "device_ip": "192.168.100.3", "rank_id": "2"}]}]})";
  }
  // The table's ports follow from one base (a range, not one free port): below
  // the ephemeral range (32768-60999 here), where no other test's socket can
  // hold one (it once took 30 s to fail, a rank connecting elsewhere).
  auto ranks = start(3, "table", "auto", 20000 + (getpid() % 200) * 40, table);
  for (int r = 0; r < 3; ++r) {
    const int code = waitRank(ranks[r].pid, std::chrono::seconds(120));
    const std::string log = slurp(ranks[r].log);
    EXPECT_EQ(code, 0) << "rank " << r << ":\n" << log;
    EXPECT_NE(log.find("check OK"), std::string::npos) << log;
  }
  std::remove(table.c_str());
}

INSTANTIATE_TEST_SUITE_P(Transports, MultiProcessTest, ::testing::Values("shm", "tcp"));

}  // namespace
