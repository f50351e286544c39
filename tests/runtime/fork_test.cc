// Device memory across fork(): the child keeps the contents it inherited, its
// writes never reach the parent, and it refuses to share a pool that held
// allocations (peers would map the file, not the child's pages); a pool that held
// none becomes the child's own, shareable as usual.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

constexpr std::size_t kBytes = 3 * 4096 + 100;  // whole pages and a partial one

bool filledWith(const void* p, std::size_t n, unsigned char v) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    if (b[i] != v) return false;
  }
  return true;
}

// The child's checks, as an exit code: 0 when all hold, else the first that failed.
int childChecks(void* dev, void* host) {
  if (!filledWith(dev, kBytes, 0x5a) || !filledWith(host, kBytes, 0x3c)) return 10;
  std::memset(dev, 0xa5, kBytes);
  std::memset(host, 0xc3, kBytes);
  MemHandle handle;
  const Status exported = memExport(dev, &handle);
  if (exported.code() != ErrorCode::kNotSupported) return 11;
  if (exported.message().find("fork()") == std::string::npos) return 12;
  if (memExportSegment(0, &handle).code() != ErrorCode::kNotSupported) return 13;
  if (memExport(host, &handle).code() != ErrorCode::kNotSupported) return 14;
  // The child's own allocations come from its private copy of the pool.
  void* mine = nullptr;
  if (!deviceMalloc(&mine, kBytes).ok()) return 15;
  std::memset(mine, 0x77, kBytes);
  if (!deviceFree(mine).ok() || !deviceFree(dev).ok()) return 16;
  return 0;
}

TEST(ForkTest, ChildWritesStayInTheChildAndItsPoolsAreNotShared) {
  ASSERT_OK(setDevice(0));
  void* dev = nullptr;
  void* host = nullptr;
  ASSERT_OK(deviceMalloc(&dev, kBytes));
  ASSERT_OK(hostMalloc(&host, kBytes));
  std::memset(dev, 0x5a, kBytes);
  std::memset(host, 0x3c, kBytes);

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(childChecks(dev, host));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's check that failed (see childChecks)";

  EXPECT_TRUE(filledWith(dev, kBytes, 0x5a)) << "the child's write reached the parent";
  EXPECT_TRUE(filledWith(host, kBytes, 0x3c)) << "the child's write reached the parent";
  // The parent's pools are still shared, and its allocator did not hand the child's
  // block to anyone.
  MemHandle handle;
  EXPECT_OK(memExport(dev, &handle));
  void* next = nullptr;
  ASSERT_OK(deviceMalloc(&next, kBytes));
  EXPECT_NE(next, dev);
  EXPECT_OK(deviceFree(next));
  EXPECT_OK(deviceFree(dev));
  EXPECT_OK(hostFree(host));
  EXPECT_OK(resetDevice(0));
}

// A rank forked from a parent that brought a device up but holds no memory on it.
int freshPoolChecks() {
  if (!setDevice(1).ok()) return 20;
  void* mine = nullptr;
  if (!deviceMalloc(&mine, kBytes).ok()) return 21;
  std::memset(mine, 0x77, kBytes);
  MemHandle handle;
  if (!memExportSegment(1, &handle).ok() || !memExport(mine, &handle).ok()) return 22;
  return 0;
}

TEST(ForkTest, AnEmptyPoolBecomesTheChildsOwnAndStaysShareable) {
  ASSERT_OK(setDevice(1));  // brings the pool up, allocates nothing
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(freshPoolChecks());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's check that failed (see freshPoolChecks)";
  // The child's first block sat where the parent's first one does now: its writes
  // went to a file of its own.
  void* first = nullptr;
  ASSERT_OK(deviceMalloc(&first, kBytes));
  EXPECT_TRUE(filledWith(first, kBytes, 0)) << "the child's write reached the parent's pool";
  MemHandle handle;
  EXPECT_OK(memExport(first, &handle));
  EXPECT_OK(deviceFree(first));
  EXPECT_OK(resetDevice(1));
}

}  // namespace
}  // namespace cohort::runtime
