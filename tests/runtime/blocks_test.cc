// launchBlocks: a kernel's blocks on the device's AI Core pool. Every block runs
// once, no more than `cores` at once; the first failing (or throwing) block fails
// the stream and blocks not yet started never start; bad arguments are refused;
// a stream destroyed by force runs the blocks queued on it.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
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

}  // namespace
}  // namespace cohort::runtime
