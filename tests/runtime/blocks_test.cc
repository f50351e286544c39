// launchBlocks: a kernel's blocks on the device's AI Core pool. Every block runs
// once, no more than `cores` at once; the first failing (or throwing) block fails
// the stream and blocks not yet started never start; bad arguments are refused;
// a stream destroyed by force runs the blocks queued on it; the host's synchronous
// memory calls see the kernels launched before them, but never wait behind a wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

class BlocksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(setDevice(0));
    ASSERT_OK(streamCreate(&stream_));
  }
  void TearDown() override {
    if (stream_ != nullptr) ASSERT_OK(streamDestroy(stream_));
    ASSERT_OK(resetDevice(0));
  }
  Stream* stream_ = nullptr;
};

TEST_F(BlocksTest, EveryBlockRunsOnceWithinTheCoreLimit) {
  for (std::uint32_t cores : {1u, 2u, 7u}) {
    std::vector<std::atomic<int>> runs(37);
    std::atomic<int> running{0}, peak{0};
    ASSERT_OK(launchBlocks(stream_, 37, cores, [&](std::uint32_t b) {
      const int now = ++running;
      int seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
      for (volatile int i = 0; i < 20000; i = i + 1) {
      }
      ++runs[b];
      --running;
      return Status::Ok();
    }));
    ASSERT_OK(streamSynchronize(stream_, -1));
    for (std::size_t b = 0; b < runs.size(); ++b) EXPECT_EQ(runs[b].load(), 1) << b;
    EXPECT_LE(peak.load(), static_cast<int>(cores));
  }
}

TEST_F(BlocksTest, TheFirstFailureStopsTheKernelAndFailsTheStream) {
  std::atomic<int> ran{0};
  ASSERT_OK(launchBlocks(stream_, 10, 1, [&](std::uint32_t b) -> Status {
    ++ran;
    if (b == 3) return Status(ErrorCode::kKernelFault, "block 3 trapped");
    return Status::Ok();
  }));
  const Status s = streamSynchronize(stream_, -1);
  EXPECT_EQ(s.code(), ErrorCode::kKernelFault);
  EXPECT_NE(s.message().find("block 3 trapped"), std::string::npos) << s.message();
  EXPECT_EQ(ran.load(), 4);
  ASSERT_OK(streamDestroy(stream_));
  ASSERT_OK(streamCreate(&stream_));
  ASSERT_OK(launchBlocks(stream_, 2, 2, [](std::uint32_t) -> Status {
    throw std::runtime_error("out of range");
  }));
  const Status t = streamSynchronize(stream_, -1);
  EXPECT_EQ(t.code(), ErrorCode::kKernelFault);
  EXPECT_NE(t.message().find("threw: out of range"), std::string::npos) << t.message();
}

TEST_F(BlocksTest, AFaultingBlockFailsTheKernelNotTheProcess) {
  int* volatile nowhere = reinterpret_cast<int*>(std::uintptr_t{0x40});  // never mapped
  ASSERT_OK(launchBlocks(stream_, 3, 1, [&](std::uint32_t b) {
    if (b == 1) __builtin_trap();
    return Status::Ok();
  }, "trapper"));
  Status s = streamSynchronize(stream_, -1);
  EXPECT_EQ(s.code(), ErrorCode::kKernelFault);
  EXPECT_NE(s.message().find("kernel trapper block 1 of 3: an illegal instruction (SIGILL)"),
            std::string::npos) << s.message();
  ASSERT_OK(streamDestroy(stream_));
  ASSERT_OK(streamCreate(&stream_));
  ASSERT_OK(launchBlocks(stream_, 4, 4, [&](std::uint32_t b) {
    if (b == 2) *nowhere = 1;
    return Status::Ok();
  }, "writer"));
  s = streamSynchronize(stream_, -1);
  EXPECT_EQ(s.code(), ErrorCode::kKernelFault);
  EXPECT_NE(s.message().find("kernel writer block 2 of 4: an invalid memory access (SIGSEGV) "
                             "at address 0x40"),
            std::string::npos) << s.message();
}

TEST(BlockFaultDeathTest, AFaultOutsideEveryBlockStillEndsTheProcess) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(
      {
        ASSERT_OK(setDevice(0));
        Stream* s = nullptr;
        ASSERT_OK(streamCreate(&s));
        // A kernel installs the handlers; then a fault of the host thread.
        ASSERT_OK(launchBlocks(s, 1, 1, [](std::uint32_t) { return Status::Ok(); }));
        ASSERT_OK(streamSynchronize(s, -1));
        int* volatile nowhere = reinterpret_cast<int*>(std::uintptr_t{0x40});  // never mapped
        *nowhere = 1;
      },
      "");
}

TEST_F(BlocksTest, BadArgumentsAreRefused) {
  EXPECT_EQ(launchBlocks(stream_, 0, 1, [](std::uint32_t) { return Status::Ok(); }).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(launchBlocks(stream_, 1, 0, [](std::uint32_t) { return Status::Ok(); }).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(launchBlocks(stream_, 1, 1, nullptr).code(), ErrorCode::kInvalidArgument);
}

TEST_F(BlocksTest, AStreamDestroyedByForceRunsWhatWasQueued) {
  std::atomic<int> ran{0};
  for (int k = 0; k < 3; ++k) {
    ASSERT_OK(launchBlocks(stream_, 4, 2, [&](std::uint32_t) {
      ++ran;
      return Status::Ok();
    }));
  }
  ASSERT_OK(streamDestroyForce(stream_));
  stream_ = nullptr;
  // The device's reset (TearDown) waits for the retired stream's work.
  ASSERT_OK(resetDevice(0));
  EXPECT_EQ(ran.load(), 12);
  ASSERT_OK(setDevice(0));
}

// A kernel of `blocks` blocks that, after a nap, writes value + b to words[b].
Status launchLateWrite(Stream* stream, int* words, std::uint32_t blocks, int value) {
  return launchBlocks(stream, blocks, 2, [words, value](std::uint32_t b) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    words[b] = value + static_cast<int>(b);
    return Status::Ok();
  });
}

TEST_F(BlocksTest, SynchronousMemoryCallsSeeTheKernelsLaunchedBeforeThem) {
  constexpr std::uint32_t kBlocks = 5;
  void* dev = nullptr;
  ASSERT_OK(deviceMalloc(&dev, kBlocks * sizeof(int)));
  int* words = static_cast<int*>(dev);
  std::vector<int> host(kBlocks, -1);
  const std::size_t bytes = kBlocks * sizeof(int);
  // A kernel, a copy behind it, then the host's copy: it sees both.
  ASSERT_OK(launchLateWrite(stream_, words, kBlocks, 100));
  ASSERT_OK(memcpy(host.data(), bytes, dev, bytes, MemcpyKind::kDeviceToHost));
  for (std::uint32_t b = 0; b < kBlocks; ++b) EXPECT_EQ(host[b], 100 + static_cast<int>(b)) << b;
  // The host's set lands after the kernel's writes, not under them.
  ASSERT_OK(launchLateWrite(stream_, words, kBlocks, 200));
  ASSERT_OK(memset(dev, bytes, 0, bytes));
  ASSERT_OK(streamSynchronize(stream_, -1));
  ASSERT_OK(memcpy(host.data(), bytes, dev, bytes, MemcpyKind::kDeviceToHost));
  for (std::uint32_t b = 0; b < kBlocks; ++b) EXPECT_EQ(host[b], 0) << b;
  // A free waits for the kernel that reads the memory.
  std::atomic<int> read{-1};
  ASSERT_OK(launchBlocks(stream_, 1, 1, [words, &read](std::uint32_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    read = words[0];
    return Status::Ok();
  }));
  ASSERT_OK(deviceFree(dev));
  EXPECT_EQ(read.load(), 0);
}

TEST_F(BlocksTest, SynchronousMemoryCallsDoNotWaitForAKernelBehindAWait) {
  void* dev = nullptr;
  ASSERT_OK(deviceMalloc(&dev, sizeof(int)));
  int zero = 0, seen = -1;
  ASSERT_OK(memcpy(dev, sizeof(int), &zero, sizeof(int), MemcpyKind::kHostToDevice));
  // stream_ waits for an event that a host kernel on `other` holds back.
  Stream* other = nullptr;
  ASSERT_OK(streamCreate(&other));
  Event* event = nullptr;
  ASSERT_OK(eventCreate(&event));
  std::atomic<bool> release{false};
  ASSERT_OK(launchKernel(other, [&release](Stream*) {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::Ok();
  }));
  ASSERT_OK(eventRecord(event, other));
  ASSERT_OK(streamWaitEvent(stream_, event));
  ASSERT_OK(launchLateWrite(stream_, static_cast<int*>(dev), 1, 7));
  ASSERT_OK(memcpy(&seen, sizeof(int), dev, sizeof(int), MemcpyKind::kDeviceToHost));
  EXPECT_EQ(seen, 0);  // returned without the kernel behind the wait
  release = true;
  ASSERT_OK(streamSynchronize(stream_, -1));
  ASSERT_OK(memcpy(&seen, sizeof(int), dev, sizeof(int), MemcpyKind::kDeviceToHost));
  EXPECT_EQ(seen, 7);
  ASSERT_OK(eventDestroy(event));
  ASSERT_OK(streamDestroy(other));
  ASSERT_OK(deviceFree(dev));
}

}  // namespace
}  // namespace cohort::runtime
