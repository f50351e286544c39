// cohort-smi as a user runs it, against real processes: a live process shows
// with its devices, memory and communicators; once killed it is gone (even as an
// unreaped zombie). `cohort-smi check` passes in a clean environment and fails,
// naming the cause, for a bad variable, a bad or foreign rank table, a small
// /dev/shm and a taken base port. Addresses: 127.0.0.1 only.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "smi/smi_test_util.h"
#include "test_util.h"

namespace {

using cohort::smitest::Result;
using cohort::smitest::run;

nlohmann::json smiJson() {
  const Result r = run({COHORT_SMI, "--json"});
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

// The holder: started with pipes on stdin and stdout; ready once it says so.
struct Holder {
  pid_t pid = -1;
  int stdinFd = -1;
  int stdoutFd = -1;
};

Holder startHolder(int mib, int ops) {
  int in[2], out[2];
  EXPECT_EQ(pipe2(in, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  const std::string m = std::to_string(mib), o = std::to_string(ops);
  std::vector<char*> argv = {const_cast<char*>(SMI_HOLDER), const_cast<char*>(m.c_str()),
                             const_cast<char*>(o.c_str()), nullptr};
  std::vector<std::string> env = {"COHORT_VISIBLE_DEVICES=5,6", "COHORT_DEVICE_MEMORY=256M",
                                  "COHORT_IF_IP=127.0.0.1", "COHORT_LOG_LEVEL=error"};
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  Holder h;
  EXPECT_EQ(posix_spawn(&h.pid, SMI_HOLDER, &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  h.stdinFd = in[1];
  h.stdoutFd = out[0];
  return h;
}

std::string waitReady(const Holder& h) {
  std::string text;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (text.find("ready\n") == std::string::npos && std::chrono::steady_clock::now() < end) {
    pollfd p{h.stdoutFd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    const ssize_t n = read(h.stdoutFd, buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, n);
  }
  return text;
}

const nlohmann::json* findPid(const nlohmann::json& list, int pid, int device) {
  for (const auto& e : list) {
    if (e["pid"] == pid && e["device"] == device) return &e;
  }
  return nullptr;
}

TEST(SmiTool, ShowsALiveProcessThenForgetsItOnceKilled) {
  Holder h = startHolder(24, 5);
  ASSERT_NE(waitReady(h).find("ready"), std::string::npos) << "the holder never got ready";
  nlohmann::json node = smiJson();
  const auto* dev5 = findPid(node["processes"], h.pid, 5);
  ASSERT_NE(dev5, nullptr) << node.dump(2);
  EXPECT_EQ((*dev5)["logical_device"], 0);
  EXPECT_GE((*dev5)["memory_used"].get<std::uint64_t>(), 24u << 20);
  EXPECT_LT((*dev5)["memory_used"].get<std::uint64_t>(), 100u << 20);
  EXPECT_EQ((*dev5)["memory_total"].get<std::uint64_t>(), 256u << 20);
  EXPECT_EQ((*dev5)["command"], "smi_holder");
  ASSERT_NE(findPid(node["processes"], h.pid, 6), nullptr) << "device 6 is held too";
  bool listedOnDevice5 = false;
  for (const auto& d : node["devices"]) {
    for (const auto& p : d["processes"]) listedOnDevice5 |= d["id"] == 5 && p == h.pid;
  }
  EXPECT_TRUE(listedOnDevice5) << node["devices"].dump();
  for (int device : {5, 6}) {
    const auto* comm = findPid(node["communicators"], h.pid, device);
    ASSERT_NE(comm, nullptr) << node["communicators"].dump(2);
    EXPECT_EQ((*comm)["rank"], device - 5);
    EXPECT_EQ((*comm)["size"], 2);
    EXPECT_EQ((*comm)["last_seq"], 5);
    EXPECT_EQ((*comm)["last_op"], "allreduce");
  }
  const Result text = run({COHORT_SMI});
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find(std::to_string(h.pid)), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("allreduce"), std::string::npos) << text.out;

  ASSERT_EQ(kill(h.pid, SIGKILL), 0);
  // Not reaped yet: a zombie holds nothing. The kernel takes a moment to end the process (more
  // on a loaded machine), so look until it is gone, for at most 5 s.
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    node = smiJson();
    const bool gone = findPid(node["processes"], h.pid, 5) == nullptr &&
                      findPid(node["communicators"], h.pid, 5) == nullptr;
    if (gone || std::chrono::steady_clock::now() >= giveUp) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(findPid(node["processes"], h.pid, 5), nullptr) << node.dump(2);
  EXPECT_EQ(findPid(node["communicators"], h.pid, 5), nullptr);
  int status = 0;
  ASSERT_EQ(waitpid(h.pid, &status, 0), h.pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  node = smiJson();
  EXPECT_EQ(findPid(node["processes"], h.pid, 6), nullptr) << node.dump(2);
  EXPECT_EQ(findPid(node["communicators"], h.pid, 6), nullptr);
  close(h.stdinFd);
  close(h.stdoutFd);
}

TEST(SmiTool, AHolderThatEndsNormallyLeavesNothing) {
  Holder h = startHolder(1, 1);
  ASSERT_NE(waitReady(h).find("ready"), std::string::npos);
  ASSERT_NE(findPid(smiJson()["processes"], h.pid, 5), nullptr);
  close(h.stdinFd);  // the holder exits
  int status = 0;
  ASSERT_EQ(waitpid(h.pid, &status, 0), h.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(findPid(smiJson()["processes"], h.pid, 5), nullptr);
  close(h.stdoutFd);
}

}  // namespace
