// Device memory shared by key between processes: a second process (acl_ipc_mem_peer)
// imports the key, sees the exporter's data and writes its own, which the exporter then
// sees; a process not on the whitelist is refused; closed keys import no more.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "acl_peer_util.h"
#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

constexpr size_t kBytes = 1 << 20;

// A running acl_ipc_mem_peer with its stdin and stdout connected to us.
class Peer {
 public:
  Peer(const std::string& key, size_t bytes, int seed) {
    const std::string sizeArg = std::to_string(bytes), seedArg = std::to_string(seed);
    char* argv[] = {const_cast<char*>(COHORT_IPC_MEM_PEER), const_cast<char*>(key.c_str()),
                    const_cast<char*>(sizeArg.c_str()), const_cast<char*>(seedArg.c_str()),
                    nullptr};
    pid_ = spawnWithPipes(argv, &toChild_, &fromChild_);
  }
  ~Peer() {
    if (toChild_ >= 0) close(toChild_);
    if (fromChild_ >= 0) close(fromChild_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  // Lets the peer import, then returns everything it printed and its exit status.
  std::string run(int* exitCode) {
    const char go[] = "go\n";
    if (write(toChild_, go, sizeof(go) - 1) != static_cast<ssize_t>(sizeof(go) - 1)) return "";
    std::string text;
    char buf[512];
    ssize_t n;
    while ((n = read(fromChild_, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    *exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return text;
  }

 private:
  pid_t pid_ = -1;
  int toChild_ = -1;
  int fromChild_ = -1;
};

class AclIpcMemTest : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
    ASSERT_ACL_OK(aclrtMalloc(&dev_, kBytes + 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  }
  // Byte i of [p, p + bytes) becomes (seed + i) % 256.
  void fill(void* p, size_t bytes, int seed) {
    std::vector<unsigned char> data(bytes);
    for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(seed + i);
    ASSERT_ACL_OK(aclrtMemcpy(p, bytes, data.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  }
  void expectFilled(const void* p, size_t bytes, int seed) {
    std::vector<unsigned char> data(bytes);
    ASSERT_ACL_OK(aclrtMemcpy(data.data(), bytes, p, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < bytes; ++i) {
      ASSERT_EQ(data[i], static_cast<unsigned char>(seed + i)) << "byte " << i;
    }
  }
  void* dev_ = nullptr;
};

TEST_F(AclIpcMemTest, AnotherProcessSeesAndWritesTheSameMemory) {
  // Share 1 MiB starting 4 KiB into the allocation.
  char* shared = static_cast<char*>(dev_) + 4096;
  fill(shared, kBytes, 17);
  char key[65];
  ASSERT_ACL_OK(aclrtIpcMemGetExportKey(shared, kBytes, key, sizeof(key), 0));
  EXPECT_LT(std::strlen(key), sizeof(key));
  Peer peer(key, kBytes, 17);
  ASSERT_GT(peer.pid(), 0);
  int32_t pid = peer.pid();
  ASSERT_ACL_OK(aclrtIpcMemSetImportPid(key, &pid, 1));
  int exitCode = -1;
  const std::string out = peer.run(&exitCode);
  EXPECT_EQ(exitCode, 0) << out;
  EXPECT_NE(out.find("import 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("check 1\n"), std::string::npos) << out;  // it saw our data
  EXPECT_NE(out.find("close 0\n"), std::string::npos) << out;
  expectFilled(shared, kBytes, 18);  // and we see what it wrote
  ASSERT_ACL_OK(aclrtIpcMemClose(key));
}

TEST_F(AclIpcMemTest, AProcessNotOnTheWhitelistIsRefused) {
  fill(dev_, kBytes, 40);
  char key[65];
  ASSERT_ACL_OK(
      aclrtIpcMemGetExportKey(dev_, kBytes, key, sizeof(key), ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT));
  Peer peer(key, kBytes, 40);
  ASSERT_GT(peer.pid(), 0);
  int32_t other = peer.pid() + 100000;  // somebody else
  ASSERT_ACL_OK(aclrtIpcMemSetImportPid(key, &other, 1));
  int exitCode = -1;
  const std::string out = peer.run(&exitCode);
  EXPECT_EQ(exitCode, 0) << out;
  EXPECT_NE(out.find("import " + std::to_string(ACL_ERROR_RT_NO_PERMISSION) + "\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("is not on the whitelist"), std::string::npos) << out;
  expectFilled(dev_, kBytes, 40);  // untouched
  ASSERT_ACL_OK(aclrtIpcMemClose(key));
}

TEST_F(AclIpcMemTest, WithoutPidValidationAnyProcessMayImport) {
  fill(dev_, 4096, 99);
  char key[65];
  ASSERT_ACL_OK(aclrtIpcMemGetExportKey(dev_, 4096, key, sizeof(key),
                                        ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
  Peer peer(key, 4096, 99);
  int exitCode = -1;
  const std::string out = peer.run(&exitCode);
  EXPECT_NE(out.find("import 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("check 1\n"), std::string::npos) << out;
  expectFilled(dev_, 4096, 100);
  ASSERT_ACL_OK(aclrtIpcMemClose(key));
}

TEST_F(AclIpcMemTest, AClosedKeyImportsNoMore) {
  char key[65];
  ASSERT_ACL_OK(aclrtIpcMemGetExportKey(dev_, 4096, key, sizeof(key),
                                        ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
  ASSERT_ACL_OK(aclrtIpcMemClose(key));
  Peer peer(key, 4096, 0);
  int exitCode = -1;
  const std::string out = peer.run(&exitCode);
  EXPECT_NE(out.find("import " + std::to_string(ACL_ERROR_INVALID_PARAM) + "\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("is not exported"), std::string::npos) << out;
}

TEST_F(AclIpcMemTest, ImportInTheSameProcessAndClose) {
  fill(dev_, 4096, 5);
  char key[65];
  ASSERT_ACL_OK(aclrtIpcMemGetExportKey(dev_, 4096, key, sizeof(key), 0));
  void* p = nullptr;
  EXPECT_ACL_ERROR(aclrtIpcMemImportByKey(&p, key, 0), ACL_ERROR_RT_NO_PERMISSION,
                   "is not on the whitelist");
  int32_t self = getpid();
  ASSERT_ACL_OK(aclrtIpcMemSetImportPid(key, &self, 1));
  ASSERT_ACL_OK(aclrtIpcMemSetImportPid(key, &self, 1));  // listed once
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtIpcMemImportByKey(&p, key, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS));
  EXPECT_NE(p, dev_);  // a second mapping of the same memory
  expectFilled(p, 4096, 5);
  int32_t enabled = 0;
  ASSERT_ACL_OK(aclrtDevicePeerAccessStatus(1, 0, &enabled));
  EXPECT_EQ(enabled, 1);  // the import enabled device 1 -> device 0
  ASSERT_ACL_OK(aclrtDeviceDisablePeerAccess(0));
  fill(p, 4096, 6);
  expectFilled(dev_, 4096, 6);
  void* q = nullptr;
  ASSERT_ACL_OK(aclrtIpcMemImportByKey(&q, key, 0));
  EXPECT_EQ(q, p);  // imported once, counted twice
  ASSERT_ACL_OK(aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK,
                                   ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS));
  ASSERT_ACL_OK(aclrtIpcMemClose(key));  // the imports
  ASSERT_ACL_OK(aclrtIpcMemClose(key));
  runtime::PointerAttributes a;
  ASSERT_OK(runtime::pointerGetAttributes(p, &a));
  EXPECT_FALSE(a.isDevice);              // unmapped
  ASSERT_ACL_OK(aclrtIpcMemClose(key));  // the export
  EXPECT_ACL_ERROR(aclrtIpcMemClose(key), ACL_ERROR_INVALID_PARAM,
                   "was neither exported nor imported by this process");
  EXPECT_ACL_ERROR(aclrtIpcMemSetImportPid(key, &self, 1), ACL_ERROR_INVALID_PARAM,
                   "was not exported by this process");
}

TEST_F(AclIpcMemTest, Errors) {
  char key[65];
  EXPECT_ACL_ERROR(aclrtIpcMemGetExportKey(dev_, 4096, key, 64, 0), ACL_ERROR_INVALID_PARAM,
                   "len >= 65 (got 64)");
  EXPECT_ACL_ERROR(aclrtIpcMemGetExportKey(dev_, 4096, key, 65, 2), ACL_ERROR_INVALID_PARAM,
                   "flags 0 or 1 (got 2)");
  EXPECT_ACL_ERROR(aclrtIpcMemGetExportKey(dev_, kBytes + 4097, key, 65, 0),
                   ACL_ERROR_INVALID_PARAM, "overrun its allocation");
  std::vector<char> host(4096);
  EXPECT_ACL_ERROR(aclrtIpcMemGetExportKey(host.data(), 4096, key, 65, 0), ACL_ERROR_INVALID_PARAM,
                   "not memory of a live aclrtMalloc allocation");
  void* p = nullptr;
  EXPECT_ACL_ERROR(aclrtIpcMemImportByKey(&p, "nonsense", 0), ACL_ERROR_INVALID_PARAM,
                   "is not a key of aclrtIpcMemGetExportKey");
  EXPECT_ACL_ERROR(aclrtIpcMemImportByKey(&p, "999999999.3.0.1000.-1/0123456789abcdef", 0),
                   ACL_ERROR_INVALID_PARAM, "is not exported");
  ASSERT_ACL_OK(aclrtIpcMemGetExportKey(dev_, 4096, key, 65, 0));
  // The right record with the wrong nonce: a stale key.
  std::string stale = key;
  stale.back() = stale.back() == '0' ? '1' : '0';
  EXPECT_ACL_ERROR(aclrtIpcMemImportByKey(&p, stale.c_str(), 0), ACL_ERROR_INVALID_PARAM,
                   "closed by its exporter");
  EXPECT_ACL_ERROR(aclrtIpcMemImportByKey(&p, key, 2), ACL_ERROR_INVALID_PARAM,
                   "flags 0 or 1 (got 2)");
  int32_t bad = 0;
  EXPECT_ACL_ERROR(aclrtIpcMemSetImportPid(key, &bad, 1), ACL_ERROR_INVALID_PARAM,
                   "pid[0] = 0 is not a process");
  EXPECT_ACL_ERROR(aclrtIpcMemSetImportPid(key, nullptr, 1), ACL_ERROR_INVALID_PARAM,
                   "pid is null");
  EXPECT_ACL_ERROR(aclrtIpcMemSetAttr(key, ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 4),
                   ACL_ERROR_INVALID_PARAM, "a link 0..3 (got 4)");
  EXPECT_ACL_ERROR(aclrtIpcMemSetAttr("unknown", ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0),
                   ACL_ERROR_INVALID_PARAM, "was not exported by this process");
  aclrtServerPid server{0, &bad, 1};
  EXPECT_ACL_ERROR(aclrtIpcMemImportPidInterServer(key, &server, 1),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "one node only");
  ASSERT_ACL_OK(aclrtIpcMemClose(key));
}

}  // namespace
}  // namespace cohort::acltest
