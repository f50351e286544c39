// Physical allocations shared with a second process (acl_vmm_share_peer, driven one
// command at a time): the importer maps the exporter's pages, so what either side writes
// the other reads; the whitelist is enforced; the memory outlives the exporter's free
// while an importer (even one that died without freeing) holds it, and then returns to
// the exporter's device.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "acl_peer_util.h"
#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

constexpr size_t kHalf = 1 << 20;

// A running acl_vmm_share_peer; ask() sends a command and returns its answer line.
class Peer {
 public:
  Peer() {
    char* argv[] = {const_cast<char*>(COHORT_VMM_SHARE_PEER), nullptr};
    int toChild = -1, fromChild = -1;
    pid_ = spawnWithPipes(argv, &toChild, &fromChild);
    if (toChild < 0) return;
    toChild_ = fdopen(toChild, "w");
    fromChild_ = fdopen(fromChild, "r");
  }
  ~Peer() { finish(); }
  pid_t pid() const { return pid_; }
  std::string readLine() {
    char line[1024];
    if (fromChild_ == nullptr || std::fgets(line, sizeof(line), fromChild_) == nullptr) return "";
    line[std::strcspn(line, "\n")] = '\0';
    return line;
  }
  std::string ask(const std::string& command) {
    if (toChild_ == nullptr) return "";
    std::fprintf(toChild_, "%s\n", command.c_str());
    std::fflush(toChild_);
    return readLine();
  }
  // Ends the peer ("quit": at once, freeing nothing) and waits for it.
  void finish(bool quit = false) {
    if (quit && toChild_ != nullptr) {
      std::fprintf(toChild_, "quit\n");
      std::fflush(toChild_);
    }
    if (toChild_ != nullptr) std::fclose(toChild_);
    if (fromChild_ != nullptr) std::fclose(fromChild_);
    toChild_ = fromChild_ = nullptr;
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* toChild_ = nullptr;
  FILE* fromChild_ = nullptr;
};

std::string num(uint64_t v) { return std::to_string(v); }

class AclVmmShareTest : public AclDevice0VmmTest {
 protected:
  void SetUp() override {
    AclDevice0VmmTest::SetUp();
    ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0_, &total_));
  }
  // A physical allocation of device 0 mapped at va_, its first half (seed + i) % 256.
  void allocate(int seed) {
    ASSERT_ACL_OK(aclrtMallocPhysical(&handle_, gran_, &prop_, 0));
    ASSERT_ACL_OK(aclrtReserveMemAddress(&va_, gran_, 0, nullptr, 0));
    ASSERT_ACL_OK(aclrtMapMem(va_, gran_, 0, handle_, 0));
    write(0, seed);
  }
  void write(size_t offset, int seed) {
    std::vector<unsigned char> data(kHalf);
    for (size_t i = 0; i < kHalf; ++i) data[i] = static_cast<unsigned char>(seed + i);
    ASSERT_ACL_OK(aclrtMemcpy(static_cast<char*>(va_) + offset, kHalf, data.data(), kHalf,
                              ACL_MEMCPY_HOST_TO_DEVICE));
  }
  bool holds(void* va, size_t offset, int seed) {
    std::vector<unsigned char> data(kHalf);
    if (aclrtMemcpy(data.data(), kHalf, static_cast<char*>(va) + offset, kHalf,
                    ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
      return false;
    }
    for (size_t i = 0; i < kHalf; ++i) {
      if (data[i] != static_cast<unsigned char>(seed + i)) return false;
    }
    return true;
  }
  void unmapAndFree() {
    ASSERT_ACL_OK(aclrtUnmapMem(va_));
    ASSERT_ACL_OK(aclrtReleaseMemAddress(va_));
    ASSERT_ACL_OK(aclrtFreePhysical(handle_));
  }
  // Device 0's free memory once blocks nobody imports any more are given back (the next
  // physical allocation or free of this process does it).
  size_t freeAfterSweep() {
    aclrtDrvMemHandle h = nullptr;
    EXPECT_EQ(aclrtMallocPhysical(&h, gran_, &prop_, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreePhysical(h), ACL_SUCCESS);
    size_t freeBytes = 0, total = 0;
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &freeBytes, &total), ACL_SUCCESS);
    return freeBytes;
  }
  size_t free0_ = 0, total_ = 0;
  aclrtDrvMemHandle handle_ = nullptr;
  void* va_ = nullptr;
};

// The whitelisted importer maps the same pages: each side reads what the other wrote.
TEST_F(AclVmmShareTest, WhitelistedProcessSharesThePages) {
  allocate(7);
  uint64_t shareable = 0;
  ASSERT_ACL_OK(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_NONE,
                                                ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &shareable));
  EXPECT_NE(shareable, 0u);
  Peer peer;
  ASSERT_EQ(peer.readLine(), "ready");
  ASSERT_EQ(peer.ask("pid"), "pid " + std::to_string(peer.pid()));
  // Not listed yet: refused.
  EXPECT_EQ(peer.ask("import " + num(shareable) + " 1"),
            "import " + std::to_string(ACL_ERROR_RT_NO_PERMISSION));
  EXPECT_NE(peer.ask("msg").find("not on the whitelist"), std::string::npos);
  int32_t pid = peer.pid();
  ASSERT_ACL_OK(aclrtMemSetPidToShareableHandle(shareable, &pid, 1));
  ASSERT_EQ(peer.ask("import " + num(shareable) + " 1"), "import 0");
  // Once per process: a second import is refused; so is exporting an import.
  EXPECT_EQ(peer.ask("import " + num(shareable) + " 1"),
            "import " + std::to_string(ACL_ERROR_INVALID_PARAM));
  EXPECT_EQ(peer.ask("export"), "export " + std::to_string(ACL_ERROR_INVALID_PARAM));
  // The creator's properties, for the device it was imported for.
  EXPECT_EQ(peer.ask("props"), "props 0 0 0 " + std::to_string(ACL_HBM_MEM_HUGE) + " 1 1");
  ASSERT_EQ(peer.ask("map " + num(gran_)), "map 0");
  EXPECT_EQ(peer.ask("read 0 " + num(kHalf) + " 7"), "read 0 1");
  ASSERT_EQ(peer.ask("write " + num(kHalf) + " " + num(kHalf) + " 9"), "write 0");
  EXPECT_TRUE(holds(va_, kHalf, 9)) << "the importer's write is in the exporter's mapping";
  write(0, 11);
  EXPECT_EQ(peer.ask("read 0 " + num(kHalf) + " 11"), "read 0 1");
  EXPECT_EQ(peer.ask("unmap"), "unmap 0");
  EXPECT_EQ(peer.ask("free"), "free 0");
  EXPECT_EQ(peer.ask("free"), "free " + std::to_string(ACL_ERROR_RT_INVALID_HANDLE));
  peer.finish();
  unmapAndFree();
  EXPECT_EQ(freeAfterSweep(), free0_);
  // The handle is gone with its allocation.
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandle(shareable, &pid, 1), ACL_ERROR_INVALID_PARAM,
                   "not exported");
  Peer late;
  ASSERT_EQ(late.readLine(), "ready");
  EXPECT_EQ(late.ask("import " + num(shareable) + " 1"),
            "import " + std::to_string(ACL_ERROR_INVALID_PARAM));
  EXPECT_NE(late.ask("msg").find("not exported"), std::string::npos);
}

// Without PID validation anyone imports, through V2 as well.
TEST_F(AclVmmShareTest, UncheckedHandleImportsThroughV2) {
  allocate(21);
  uint64_t shareable = 0;
  ASSERT_ACL_OK(aclrtMemExportToShareableHandleV2(handle_,
                                                  ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                  ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, &shareable));
  Peer peer;
  ASSERT_EQ(peer.readLine(), "ready");
  ASSERT_EQ(peer.ask("importv2 " + num(shareable)), "import 0");
  EXPECT_EQ(peer.ask("props"), "props 0 0 0 " + std::to_string(ACL_HBM_MEM_HUGE) + " 1 1");
  ASSERT_EQ(peer.ask("map " + num(gran_)), "map 0");
  EXPECT_EQ(peer.ask("read 0 " + num(kHalf) + " 21"), "read 0 1");
  EXPECT_EQ(peer.ask("unmap"), "unmap 0");
  EXPECT_EQ(peer.ask("free"), "free 0");
  peer.finish();
  unmapAndFree();
}

// The exporter frees first: the importer keeps the pages (they are not reused for the
// exporter's next allocation), new imports are refused, and the memory comes back once
// the importer freed it.
TEST_F(AclVmmShareTest, MemoryOutlivesTheExportersFree) {
  allocate(33);
  uint64_t shareable = 0;
  ASSERT_ACL_OK(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_NONE,
                                                ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                                                &shareable));
  Peer peer;
  ASSERT_EQ(peer.readLine(), "ready");
  ASSERT_EQ(peer.ask("import " + num(shareable) + " 1"), "import 0");
  ASSERT_EQ(peer.ask("map " + num(gran_)), "map 0");
  aclrtDrvMemHandle old = handle_;
  unmapAndFree();
  aclrtPhysicalMemProp p{};
  EXPECT_ACL_ERROR(aclrtMemGetAllocationPropertiesFromHandle(old, &p),
                   ACL_ERROR_RT_INVALID_HANDLE, "not a live");
  EXPECT_LT(freeAfterSweep(), free0_) << "the importer still holds the block";
  // A new allocation of the exporter gets other pages.
  allocate(44);
  EXPECT_EQ(peer.ask("read 0 " + num(kHalf) + " 33"), "read 0 1");
  ASSERT_EQ(peer.ask("write 0 " + num(kHalf) + " 55"), "write 0");
  EXPECT_TRUE(holds(va_, 0, 44));
  unmapAndFree();
  EXPECT_EQ(peer.ask("unmap"), "unmap 0");
  EXPECT_EQ(peer.ask("free"), "free 0");
  EXPECT_EQ(peer.ask("import " + num(shareable) + " 1"),
            "import " + std::to_string(ACL_ERROR_INVALID_PARAM));
  peer.finish();
  EXPECT_EQ(freeAfterSweep(), free0_);
}

// An importer that exits without freeing does not keep the memory forever.
TEST_F(AclVmmShareTest, DeadImporterLetsTheMemoryGo) {
  allocate(3);
  uint64_t shareable = 0;
  ASSERT_ACL_OK(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_NONE, 1,
                                                &shareable));
  Peer peer;
  ASSERT_EQ(peer.readLine(), "ready");
  ASSERT_EQ(peer.ask("import " + num(shareable) + " 0"), "import 0");
  ASSERT_EQ(peer.ask("map " + num(gran_)), "map 0");
  unmapAndFree();
  EXPECT_LT(freeAfterSweep(), free0_);
  peer.finish(/*quit=*/true);
  EXPECT_EQ(freeAfterSweep(), free0_);
}

TEST_F(AclVmmShareTest, WrongUseIsRefused) {
  allocate(1);
  uint64_t shareable = 0;
  EXPECT_ACL_ERROR(aclrtMemExportToShareableHandle(nullptr, ACL_MEM_HANDLE_TYPE_NONE, 0,
                                                   &shareable),
                   ACL_ERROR_INVALID_PARAM, "handle is null");
  EXPECT_ACL_ERROR(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_NONE, 0, nullptr),
                   ACL_ERROR_INVALID_PARAM, "shareableHandle is null");
  EXPECT_ACL_ERROR(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_POSIX, 0,
                                                   &shareable),
                   ACL_ERROR_INVALID_PARAM, "ACL_MEM_HANDLE_TYPE_NONE");
  EXPECT_ACL_ERROR(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_NONE, 2,
                                                   &shareable),
                   ACL_ERROR_INVALID_PARAM, "flags 0x2");
  int32_t pid = 12345;
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandle(0x77, &pid, 1), ACL_ERROR_INVALID_PARAM,
                   "not exported by this process");
  ASSERT_ACL_OK(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_NONE, 0, &shareable));
  EXPECT_ACL_ERROR(aclrtMemExportToShareableHandleV2(handle_, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                                                     &shareable),
                   ACL_ERROR_INVALID_PARAM, "exported already");
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandle(shareable, nullptr, 1), ACL_ERROR_INVALID_PARAM,
                   "pid is null");
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandle(shareable, &pid, 0), ACL_ERROR_INVALID_PARAM,
                   "pidNum is 0");
  int32_t zero = 0;
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandle(shareable, &zero, 1), ACL_ERROR_INVALID_PARAM,
                   "pid[0] = 0");
  ASSERT_ACL_OK(aclrtMemSetPidToShareableHandleV2(&shareable, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                                                  &pid, 1));
  // Importing in the exporting process is not what CANN shares.
  aclrtDrvMemHandle h = nullptr;
  EXPECT_ACL_ERROR(aclrtMemImportFromShareableHandle(shareable, 0, &h),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "between processes only");
  EXPECT_ACL_ERROR(aclrtMemImportFromShareableHandle(shareable, 0, nullptr),
                   ACL_ERROR_INVALID_PARAM, "handle is null");
  EXPECT_ACL_ERROR(aclrtMemImportFromShareableHandle(shareable, 9, &h),
                   ACL_ERROR_RT_INVALID_DEVICEID, "");
  EXPECT_ACL_ERROR(aclrtMemImportFromShareableHandle(0, 0, &h), ACL_ERROR_INVALID_PARAM,
                   "not a shareable handle");
  // V2: DEFAULT only; FABRIC (across servers) is not supported.
  aclrtMemFabricHandle fabric{};
  EXPECT_EQ(aclrtMemExportToShareableHandleV2(handle_, 0, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                                              &fabric),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  EXPECT_EQ(aclrtMemImportFromShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0, &h),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  EXPECT_EQ(aclrtMemSetPidToShareableHandleV2(&fabric, ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, &pid, 1),
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  const auto bad = static_cast<aclrtMemSharedHandleType>(7);
  EXPECT_ACL_ERROR(aclrtMemExportToShareableHandleV2(handle_, 0, bad, &shareable),
                   ACL_ERROR_INVALID_PARAM, "shareType 7");
  EXPECT_ACL_ERROR(aclrtMemImportFromShareableHandleV2(&shareable, bad, 0, &h),
                   ACL_ERROR_INVALID_PARAM, "shareType 7");
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandleV2(&shareable, bad, &pid, 1),
                   ACL_ERROR_INVALID_PARAM, "shareType 7");
  EXPECT_ACL_ERROR(aclrtMemImportFromShareableHandleV2(&shareable,
                                                       ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 1, &h),
                   ACL_ERROR_INVALID_PARAM, "flags 0x1");
  EXPECT_ACL_ERROR(aclrtMemImportFromShareableHandleV2(nullptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                                                       0, &h),
                   ACL_ERROR_INVALID_PARAM, "shareableHandle is null");
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandleV2(nullptr, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                                                     &pid, 1),
                   ACL_ERROR_INVALID_PARAM, "shareableHandle is null");
  unmapAndFree();
  EXPECT_ACL_ERROR(aclrtMemExportToShareableHandle(handle_, ACL_MEM_HANDLE_TYPE_NONE, 0,
                                                   &shareable),
                   ACL_ERROR_RT_INVALID_HANDLE, "not a live");
  EXPECT_ACL_ERROR(aclrtMemSetPidToShareableHandle(shareable, &pid, 1), ACL_ERROR_INVALID_PARAM,
                   "not exported by this process");
}

}  // namespace
}  // namespace cohort::acltest
