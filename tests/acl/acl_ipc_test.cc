// IPC across two real processes: an event recorded in one and waited for in the
// other (both ways), a notify imported by a whitelisted process, a value written by
// one process into device memory the other waits on. The peer is acl_ipc_peer.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "acl_stream_family_util.h"

extern char** environ;

namespace cohort::acltest {
namespace {

std::string toHex(const void* data, size_t size) {
  std::string out;
  char buf[3];
  for (size_t i = 0; i < size; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<const unsigned char*>(data)[i]);
    out += buf;
  }
  return out;
}

pid_t spawnPeer(std::vector<std::string> args) {
  const char* peer = COHORT_ACL_IPC_PEER;
  args.insert(args.begin(), peer);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, peer, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

int exitCode(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool running(pid_t pid) {
  int status = 0;
  return waitpid(pid, &status, WNOHANG) == 0;
}

// Words both processes map (the test's end of the hand-shake).
struct SharedWords {
  SharedWords() {
    void* p = nullptr;
    EXPECT_OK(runtime::sharedAlloc(64, &p, &handle));
    words = static_cast<std::atomic<uint64_t>*>(p);
  }
  ~SharedWords() { EXPECT_OK(runtime::sharedFree(words)); }
  std::string hex() const { return toHex(handle.bytes, sizeof(handle.bytes)); }
  std::atomic<uint64_t>* words = nullptr;
  runtime::MemHandle handle{};
};

using AclIpcTest = AclDevice0Test;

TEST_F(AclIpcTest, EventRecordedHereReleasesTheOtherProcessAndBack) {
  SharedWords shared;
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateEventExWithFlag(&event, ACL_EVENT_IPC));
  Gate gate;
  gate.hold(stream);
  std::atomic<uint64_t>* word = shared.words;
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream), [word](runtime::Stream*) {
    word->store(42);
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclrtRecordEvent(event, stream));
  aclrtIpcEventHandle handle;
  ASSERT_ACL_OK(aclrtIpcGetEventHandle(event, &handle));
  const pid_t peer =
      spawnPeer({"event", toHex(handle.reserved, sizeof(handle.reserved)), shared.hex()});
  ASSERT_GT(peer, 0) << "cannot start " COHORT_ACL_IPC_PEER;
  sleepMs(300);
  EXPECT_TRUE(running(peer));  // its stream waits for this process's record
  EXPECT_EQ(word->load(), 0u);
  gate.open();
  ASSERT_EQ(exitCode(peer), 0);
  EXPECT_EQ(word->load(), 77u);
  // The peer's record counts here too: the latest record has completed.
  aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  ASSERT_ACL_OK(aclrtQueryEventStatus(event, &status));
  EXPECT_EQ(status, ACL_EVENT_RECORDED_STATUS_COMPLETE);
  ASSERT_ACL_OK(aclrtSynchronizeEvent(event));
  ASSERT_ACL_OK(aclrtDestroyEvent(event));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclIpcTest, NotifyIsImportedByAWhitelistedProcessAndSignalsBothWays) {
  SharedWords shared;
  aclrtNotify notify = nullptr;
  ASSERT_ACL_OK(aclrtCreateNotify(&notify, 0));
  char key[65] = {};
  ASSERT_ACL_OK(
      aclrtNotifyGetExportKey(notify, key, sizeof(key), ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  OrderLog log;
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(notify, stream, 20));
  log.mark(stream, 1);
  const pid_t peer = spawnPeer({"notify", key, shared.hex()});
  ASSERT_GT(peer, 0) << "cannot start " COHORT_ACL_IPC_PEER;
  // The peer was refused, then is named.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (shared.words[0].load() != 1 && std::chrono::steady_clock::now() < until) sleepMs(1);
  ASSERT_EQ(shared.words[0].load(), 1u);
  EXPECT_TRUE(log.marks().empty());
  int32_t pid = static_cast<int32_t>(peer);
  ASSERT_ACL_OK(aclrtNotifySetImportPid(notify, &pid, 1));
  shared.words[1].store(1);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));  // released by the peer's record
  EXPECT_EQ(log.marks(), std::vector<int>{1});
  shared.words[2].store(1);
  sleepMs(50);
  EXPECT_NE(shared.words[0].load(), 2u);  // the peer waits for this process's record
  ASSERT_ACL_OK(aclrtRecordNotify(notify, stream));
  ASSERT_EQ(exitCode(peer), 0);
  EXPECT_EQ(shared.words[0].load(), 2u);
  ASSERT_ACL_OK(aclrtDestroyNotify(notify));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclIpcTest, ValueWrittenByAnotherProcessReleasesAWait) {
  void* memory = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&memory, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemset(memory, 64, 0, 64));
  runtime::MemHandle handle;
  ASSERT_OK(runtime::memExport(memory, &handle));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  OrderLog log;
  ASSERT_ACL_OK(aclrtValueWait(memory, 0x5a5a, ACL_STREAM_WAIT_VALUE_EQ, stream));
  log.mark(stream, 1);
  const pid_t peer = spawnPeer({"value", toHex(handle.bytes, sizeof(handle.bytes))});
  ASSERT_GT(peer, 0) << "cannot start " COHORT_ACL_IPC_PEER;
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(log.marks(), std::vector<int>{1});
  ASSERT_EQ(exitCode(peer), 0);
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtFree(memory));
}

}  // namespace
}  // namespace cohort::acltest
