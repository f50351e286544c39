// Two processes join a rank table's communicator through the HCCL C API; rank 1
// is killed while rank 0 waits for it in an allreduce: rank 0's stream fails and
// HcclGetCommAsyncError reports HCCL_E_REMOTE, promptly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hccl_test_util.h"

namespace {

struct Worker {
  pid_t pid = -1;
  std::string log;
};

Worker spawnWorker(const std::string& table, int rank, std::string mode = "") {
  Worker w;
  w.log = ::testing::TempDir() + "hccl_mp_" + std::to_string(getpid()) + "_" +
          std::to_string(rank) + ".log";
  std::vector<std::string> env = {"COHORT_IF_IP=127.0.0.1", "COHORT_DEVICE_MEMORY=256M",
                                  "COHORT_EXEC_TIMEOUT=60", "COHORT_CONNECT_TIMEOUT=30"};
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string bin = HCCL_MP_WORKER, rankText = std::to_string(rank), tableArg = table;
  std::vector<char*> argv = {bin.data(), tableArg.data(), rankText.data()};
  if (!mode.empty()) argv.push_back(mode.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, w.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  EXPECT_EQ(posix_spawn(&w.pid, bin.c_str(), &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  return w;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The exit code, or -1 (after SIGKILL) when it runs past the limit.
int waitWorker(pid_t pid, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

TEST(HcclMultiProcess, AKilledPeerIsARemoteError) {
  const std::string table =
      hccl_test::writeTempFile("mp.json", hccl_test::rankTableJson(2, hccl_test::freePort()));
  Worker w0 = spawnWorker(table, 0), w1 = spawnWorker(table, 1);
  for (int i = 0; i < 3000; ++i) {
    if (slurp(w0.log).find("ready") != std::string::npos &&
        slurp(w1.log).find("ready") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(slurp(w1.log).find("rank 1 ready"), std::string::npos) << slurp(w1.log);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rank 0 is waiting in the op
  kill(w1.pid, SIGKILL);
  waitWorker(w1.pid, std::chrono::seconds(5));
  const auto killed = std::chrono::steady_clock::now();
  const int code = waitWorker(w0.pid, std::chrono::seconds(20));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  const std::string log = slurp(w0.log);
  EXPECT_EQ(code, 0) << log;
  EXPECT_NE(log.find("async error 21 (error cqe)"), std::string::npos) << log;
  EXPECT_LT(secs, 10.0) << log;
}

// Bad input as an NPU sees it, ranks as processes (hccl_bad_input_test and
// hccl_errors_test have the threads): each row of README's table, answered and
// named as there, and the communicator then allreduces right.
TEST(HcclMultiProcess, BadInputAnswersAsOnAnNpu) {
  const std::string table =
      hccl_test::writeTempFile("bad.json", hccl_test::rankTableJson(2, hccl_test::freePort()));
  Worker w0 = spawnWorker(table, 0, "badinput"), w1 = spawnWorker(table, 1, "badinput");
  const int code0 = waitWorker(w0.pid, std::chrono::seconds(60));
  const int code1 = waitWorker(w1.pid, std::chrono::seconds(60));
  EXPECT_EQ(code0, 0) << slurp(w0.log);
  EXPECT_EQ(code1, 0) << slurp(w1.log);
  for (const Worker* w : {&w0, &w1}) {
    const std::string log = slurp(w->log);
    EXPECT_NE(log.find("bad input OK"), std::string::npos) << log;
    EXPECT_NE(log.find("HcclAllReduce: count is 0: nothing to do"), std::string::npos) << log;
    EXPECT_NE(log.find("parameter sendBuf is invalid"), std::string::npos) << log;
    EXPECT_NE(log.find("parameter recvBuf is invalid"), std::string::npos) << log;
    EXPECT_NE(log.find("plain host memory"), std::string::npos) << log;
    EXPECT_NE(log.find("parameter dataType is invalid"), std::string::npos) << log;
    EXPECT_NE(log.find("parameter root is invalid"), std::string::npos) << log;
    EXPECT_NE(log.find("holds 64 bytes"), std::string::npos) << log;
  }
}

}  // namespace
