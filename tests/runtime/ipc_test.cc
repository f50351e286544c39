// Two processes share a device buffer through an exported handle.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cohort/runtime.h"
#include "test_util.h"

extern char** environ;

namespace cohort::runtime {
namespace {

std::string toHex(const MemHandle& h) {
  std::string out;
  char buf[3];
  for (auto b : h.bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

int runPeer(const std::string& hex, std::size_t size) {
  const char* peer = std::getenv("COHORT_IPC_PEER");
  if (peer == nullptr) return -1;
  std::string sizeArg = std::to_string(size);
  char* argv[] = {const_cast<char*>(peer), const_cast<char*>(hex.c_str()),
                  const_cast<char*>(sizeArg.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, peer, nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(IpcTest, AnotherProcessSeesAndWritesTheSameMemory) {
  ASSERT_OK(setDevice(1));
  constexpr std::size_t n = (1 << 20) + 3;
  void* a = nullptr;
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&a, 4096));  // so the buffer does not start at offset 0
  ASSERT_OK(deviceMalloc(&d, n));
  auto* bytes = static_cast<unsigned char*>(d);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(i % 251);
  MemHandle h;
  ASSERT_OK(memExport(d, &h));
  // The peer checks i % 251 everywhere, then writes (i * 3) % 253.
  ASSERT_EQ(runPeer(toHex(h), n), 0);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(bytes[i], (i * 3) % 253) << i;
  ASSERT_OK(deviceFree(d));
  ASSERT_OK(deviceFree(a));
  ASSERT_OK(resetDevice(1));
}

TEST(IpcTest, ImportInTheSameProcessAliasesTheBuffer) {
  ASSERT_OK(setDevice(1));
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&d, 8192));
  MemHandle h;
  ASSERT_OK(memExport(d, &h));
  void* alias = nullptr;
  ASSERT_OK(memImport(h, &alias));
  EXPECT_NE(alias, d);
  static_cast<int*>(d)[100] = 12345;
  EXPECT_EQ(static_cast<int*>(alias)[100], 12345);
  PointerAttributes attr;
  ASSERT_OK(pointerGetAttributes(alias, &attr));
  EXPECT_TRUE(attr.isDevice);
  // Imported memory counts as device memory for copies.
  std::vector<int> host(2048);
  ASSERT_OK(memcpy(host.data(), 8192, alias, 8192, MemcpyKind::kDeviceToHost));
  EXPECT_EQ(host[100], 12345);
  ASSERT_OK(memClose(alias));
  EXPECT_ERROR(memClose(alias), kInvalidPointer, "not an imported buffer");
  ASSERT_OK(deviceFree(d));
  ASSERT_OK(resetDevice(1));
}

TEST(IpcTest, BadHandlesAndPointersAreRejected) {
  ASSERT_OK(setDevice(1));
  MemHandle junk{};
  void* p = nullptr;
  EXPECT_ERROR(memImport(junk, &p), kInvalidArgument, "not a memory handle");
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&d, 256));
  MemHandle h;
  EXPECT_ERROR(memExport(static_cast<char*>(d) + 64, &h), kInvalidPointer, "not the start");
  int local = 0;
  EXPECT_ERROR(memExport(&local, &h), kInvalidPointer, "live device allocation");
  ASSERT_OK(deviceFree(d));
  ASSERT_OK(resetDevice(1));
}

// Shared blocks (the shm transport's control blocks): a second user in this process
// takes a reference at the same address, and the memory stays until the last release.
TEST(IpcTest, SharedMemoryIsRetainedAtOneAddressUntilTheLastFree) {
  void* p = nullptr;
  MemHandle h;
  ASSERT_OK(sharedAlloc(4096, &p, &h));
  static_cast<unsigned char*>(p)[100] = 42;
  void* q = nullptr;
  ASSERT_OK(sharedRetain(h, &q));
  EXPECT_EQ(q, p);
  ASSERT_OK(sharedFree(p));  // the owner's: the reference keeps it
  EXPECT_EQ(static_cast<unsigned char*>(q)[100], 42);
  static_cast<unsigned char*>(q)[101] = 7;
  ASSERT_OK(sharedFree(q));  // the last
  EXPECT_ERROR(sharedFree(q), kInvalidPointer, "not from sharedAlloc");
  EXPECT_ERROR(sharedRetain(h, &q), kInvalidPointer, "was released");
  MemHandle junk{};
  EXPECT_ERROR(sharedRetain(junk, &q), kInvalidArgument, "not a memory handle");
  EXPECT_ERROR(sharedRetain(h, nullptr), kInvalidArgument, "null output");
}

}  // namespace
}  // namespace cohort::runtime
