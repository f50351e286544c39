// Stream-ordered memory pools: allocation and free in stream order with real data,
// reuse on one stream and across streams, idle blocks, the release threshold,
// trimming, destroying a pool in use, device resets, failed streams, many threads.
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "acl_mempool_test_util.h"

namespace cohort::acltest {
namespace {

TEST_F(AclMemPoolTest, MallocAsyncServesTheWorkQueuedAfterIt) {
  void* p = allocate(1000, stream_);
  ASSERT_NE(p, nullptr);
  runtime::PointerAttributes attributes;
  ASSERT_OK(runtime::pointerGetAttributes(p, &attributes));
  EXPECT_TRUE(attributes.isDevice);
  EXPECT_EQ(attributes.device, 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(used(pool_), 2 * kMiB);  // rounded up to a block
  EXPECT_EQ(reserved(pool_), 2 * kMiB);
  char* in = pinned(1000);
  char* out = pinned(1000);
  for (int i = 0; i < 1000; ++i) in[i] = static_cast<char>(i * 7);
  ASSERT_ACL_OK(aclrtMemcpyAsync(p, 1000, in, 1000, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
  ASSERT_ACL_OK(aclrtMemcpyAsync(out, 1000, p, 1000, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(std::memcmp(in, out, 1000), 0);
  EXPECT_EQ(used(pool_), 0u);
  EXPECT_EQ(reserved(pool_), 0u);  // release threshold 0: nothing idle is kept
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 2 * kMiB);
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 2 * kMiB);
  ASSERT_ACL_OK(aclrtFreeHost(in));
  ASSERT_ACL_OK(aclrtFreeHost(out));
  void* none = &in;
  ASSERT_ACL_OK(aclrtMemPoolMallocAsync(&none, 0, pool_, stream_));  // size 0 gives NULL
  EXPECT_EQ(none, nullptr);
}

TEST_F(AclMemPoolTest, AStreamReusesItsOwnFreeBeforeItRuns) {
  char* outA = pinned(kMiB);
  char* outB = pinned(kMiB);
  Gate gate;
  gate.hold(stream_);
  void* a = allocate(kMiB, stream_);
  ASSERT_ACL_OK(aclrtMemsetAsync(a, kMiB, 'a', kMiB, stream_));
  ASSERT_ACL_OK(aclrtMemcpyAsync(outA, kMiB, a, kMiB, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(a, stream_));
  void* b = allocate(kMiB, stream_);
  EXPECT_EQ(b, a);  // the same block: stream order puts b's work after a's
  EXPECT_EQ(used(pool_), 2 * kMiB);
  EXPECT_EQ(reserved(pool_), 2 * kMiB);
  ASSERT_ACL_OK(aclrtMemsetAsync(b, kMiB, 'b', kMiB, stream_));
  ASSERT_ACL_OK(aclrtMemcpyAsync(outB, kMiB, b, kMiB, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(b, stream_));
  EXPECT_EQ(used(pool_), 2 * kMiB);  // the free has not run: the gate holds the stream
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_TRUE(allBytes(outA, kMiB, 'a'));
  EXPECT_TRUE(allBytes(outB, kMiB, 'b'));
  EXPECT_EQ(used(pool_), 0u);
  ASSERT_ACL_OK(aclrtFreeHost(outA));
  ASSERT_ACL_OK(aclrtFreeHost(outB));
}

TEST_F(AclMemPoolTest, OtherStreamsTakeAQueuedFreeOnlyWithInternalDependencies) {
  aclrtStream other = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&other));
  Gate gate;
  gate.hold(stream_);
  void* p = allocate(2 * kMiB, stream_);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));  // queued behind the gate
  void* q = allocate(2 * kMiB, other);
  EXPECT_NE(q, p);  // the free has not run, and nothing orders `other` after it
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(q, other));
  ASSERT_ACL_OK(aclrtSynchronizeStream(other));

  const uint32_t on = 1;
  ASSERT_ACL_OK(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                                    const_cast<uint32_t*>(&on)));
  void* r = allocate(2 * kMiB, other);
  EXPECT_EQ(r, p);  // taken early: `other` now waits for the free on stream_
  char* out = pinned(64);
  ASSERT_ACL_OK(aclrtMemsetAsync(r, 2 * kMiB, 'c', 2 * kMiB, other));
  ASSERT_ACL_OK(aclrtMemcpyAsync(out, 64, r, 64, ACL_MEMCPY_DEVICE_TO_HOST, other));
  aclrtEvent done = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&done));
  ASSERT_ACL_OK(aclrtRecordEvent(done, other));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
  ASSERT_ACL_OK(aclrtQueryEventStatus(done, &status));
  EXPECT_EQ(status, ACL_EVENT_RECORDED_STATUS_NOT_READY);
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(other));
  EXPECT_TRUE(allBytes(out, 64, 'c'));
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(r, other));
  ASSERT_ACL_OK(aclrtSynchronizeStream(other));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(used(pool_), 0u);
  ASSERT_ACL_OK(aclrtDestroyEvent(done));
  ASSERT_ACL_OK(aclrtFreeHost(out));
  ASSERT_ACL_OK(aclrtDestroyStream(other));
}

TEST_F(AclMemPoolTest, IdleBlocksServeEveryStreamSmallestFirstUntilTrimmed) {
  setThreshold(pool_, 32 * kMiB);  // keep everything idle
  void* a = allocate(2 * kMiB, stream_);
  void* b = allocate(4 * kMiB, stream_);
  void* c = allocate(8 * kMiB, stream_);
  for (void* p : {a, b, c}) ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(used(pool_), 0u);
  EXPECT_EQ(reserved(pool_), 14 * kMiB);

  aclrtStream other = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&other));
  EXPECT_EQ(allocate(3 * kMiB, other), b);  // 4 MiB: the smallest idle block that fits
  EXPECT_EQ(allocate(7 * kMiB, other), c);
  EXPECT_EQ(allocate(1, other), a);
  EXPECT_EQ(used(pool_), 14 * kMiB);
  EXPECT_EQ(reserved(pool_), 14 * kMiB);
  for (void* p : {a, b, c}) ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, other));
  ASSERT_ACL_OK(aclrtSynchronizeStream(other));
  ASSERT_ACL_OK(aclrtDestroyStream(other));

  // Largest first, keeping at least what is asked: 8 MiB goes, 4 + 2 stay.
  ASSERT_ACL_OK(aclrtMemPoolTrimTo(pool_, 5 * kMiB));
  EXPECT_EQ(reserved(pool_), 6 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolTrimTo(pool_, 64 * kMiB));  // more than held: nothing to do
  EXPECT_EQ(reserved(pool_), 6 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolTrimTo(pool_, 0));
  EXPECT_EQ(reserved(pool_), 0u);

  // Memory in use stays; the threshold applies when frees run.
  void* x = allocate(2 * kMiB, stream_);
  ASSERT_ACL_OK(aclrtMemPoolTrimTo(pool_, 0));
  EXPECT_EQ(reserved(pool_), 2 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(x, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(reserved(pool_), 2 * kMiB);
  setThreshold(pool_, 0);
  EXPECT_EQ(reserved(pool_), 2 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolTrimTo(pool_, 0));
  EXPECT_EQ(reserved(pool_), 0u);
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH), 14 * kMiB);
  EXPECT_EQ(attribute(pool_, ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH), 14 * kMiB);
}

TEST_F(AclMemPoolTest, ReleaseThresholdKeepsThatMuchIdle) {
  setThreshold(pool_, 4 * kMiB);
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(allocate(2 * kMiB, stream_));
  EXPECT_EQ(reserved(pool_), 8 * kMiB);
  for (void* p : blocks) ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(used(pool_), 0u);
  EXPECT_EQ(reserved(pool_), 4 * kMiB);
  size_t freeBytes = 0, total = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &freeBytes, &total));
  EXPECT_LE(freeBytes, total - 4 * kMiB);  // the device lends the pool what it keeps
  ASSERT_ACL_OK(aclrtMemPoolTrimTo(pool_, 0));
  size_t after = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &after, &total));
  EXPECT_EQ(after, freeBytes + 4 * kMiB);
}

TEST_F(AclMemPoolTest, FreeAsyncFreesAclrtMallocMemoryInStreamOrder) {
  size_t before = 0, total = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &before, &total));
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&p, 3 * kMiB, ACL_MEM_MALLOC_HUGE_FIRST));
  char* out = pinned(64);
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtMemsetAsync(p, 3 * kMiB, 'm', 3 * kMiB, stream_));
  ASSERT_ACL_OK(aclrtMemcpyAsync(out, 64, p, 64, ACL_MEMCPY_DEVICE_TO_HOST, stream_));
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
  size_t during = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &during, &total));
  EXPECT_LT(during, before);  // not freed yet: the stream has not got there
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_TRUE(allBytes(out, 64, 'm'));
  size_t after = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &after, &total));
  EXPECT_EQ(after, before);
  EXPECT_ACL_ERROR(aclrtFree(p), ACL_ERROR_RT_MEMORY_FREE, "was already freed");
  ASSERT_ACL_OK(aclrtFreeHost(out));
}

TEST_F(AclMemPoolTest, DestroyingAPoolInUse) {
  size_t before = 0, total = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &before, &total));
  setThreshold(pool_, 32 * kMiB);
  void* idle = allocate(2 * kMiB, stream_);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(idle, stream_));
  void* p = allocate(4 * kMiB, stream_);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  ASSERT_ACL_OK(aclrtMemPoolDestroy(pool_));
  aclrtMemPool destroyed = pool_;
  pool_ = nullptr;
  uint64_t value = 0;
  EXPECT_ACL_ERROR(aclrtMemPoolGetAttr(destroyed, ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT, &value),
                   ACL_ERROR_RT_PARAM_INVALID, "is not a live memory pool");
  size_t during = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &during, &total));
  EXPECT_EQ(during, before - 4 * kMiB);  // the idle block went back; p is still there
  const std::vector<char> in(4 * kMiB, 'k');
  std::vector<char> out(4 * kMiB, 0);
  ASSERT_ACL_OK(aclrtMemcpy(p, 4 * kMiB, in.data(), in.size(), ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), out.size(), p, 4 * kMiB, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(in, out);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  size_t after = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &after, &total));
  EXPECT_EQ(after, before);  // given back to the device, not to the destroyed pool
  EXPECT_ACL_ERROR(aclrtMemPoolFreeAsync(p, stream_), ACL_ERROR_RT_PARAM_INVALID,
                   "is neither memory of a pool");
}

TEST_F(AclMemPoolTest, ADeviceResetTakesThePoolsMemory) {
  void* p = allocate(2 * kMiB, stream_);
  EXPECT_EQ(reserved(pool_), 2 * kMiB);
  ASSERT_ACL_OK(aclrtResetDevice(0));  // the only reference: streams and memory go
  stream_ = nullptr;
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_EQ(reserved(pool_), 0u);
  EXPECT_EQ(used(pool_), 0u);
  EXPECT_ACL_ERROR(aclrtMemPoolFreeAsync(p, nullptr), ACL_ERROR_RT_PARAM_INVALID,
                   "is neither memory of a pool");
  ASSERT_ACL_OK(aclrtCreateStream(&stream_));
  void* q = allocate(2 * kMiB, stream_);  // the pool works on the device's new life
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reserved(pool_), 2 * kMiB);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(q, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(reserved(pool_), 0u);
}

TEST_F(AclMemPoolTest, AFailedStreamStillGivesTheMemoryBack) {
  void* p = allocate(2 * kMiB, stream_);
  failStream(stream_, ErrorCode::kInternal);
  ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream_));
  // A failed stream's synchronize may return before the worker passed the free: an
  // event recorded after it (records run on failed streams too) tells when it has.
  aclrtEvent passed = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&passed));
  ASSERT_ACL_OK(aclrtRecordEvent(passed, stream_));
  aclrtSynchronizeEvent(passed);
  EXPECT_NE(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  aclGetRecentErrMsg();
  ASSERT_ACL_OK(aclrtDestroyEvent(passed));
  EXPECT_EQ(used(pool_), 0u);  // the free point was passed, though later tasks are skipped
  EXPECT_EQ(reserved(pool_), 0u);
}

TEST_F(AclMemPoolTest, StreamsOfManyThreadsShareAPool) {
  const uint32_t on = 1;
  ASSERT_ACL_OK(aclrtMemPoolSetAttr(pool_, ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                                    const_cast<uint32_t*>(&on)));
  setThreshold(pool_, 8 * kMiB);
  constexpr int kThreads = 4;
  constexpr int kRounds = 8;
  constexpr int kPerRound = 5;
  std::vector<std::thread> threads;
  std::vector<int> wrong(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ASSERT_ACL_OK(aclrtSetDevice(0));
      aclrtStream stream = nullptr;
      ASSERT_ACL_OK(aclrtCreateStream(&stream));
      char* out = pinned(2 * 64 * kPerRound);
      std::mt19937 random(t);
      for (int round = 0; round < kRounds; ++round) {
        for (int i = 0; i < kPerRound; ++i) {
          const size_t size = 64 + random() % (3 * kMiB);
          void* p = nullptr;
          ASSERT_ACL_OK(aclrtMemPoolMallocAsync(&p, size, pool_, stream));
          const char value = static_cast<char>('A' + (t * kPerRound + i) % 50);
          ASSERT_ACL_OK(aclrtMemsetAsync(p, size, value, size, stream));
          char* slot = out + 2 * 64 * i;
          ASSERT_ACL_OK(aclrtMemcpyAsync(slot, 64, p, 64, ACL_MEMCPY_DEVICE_TO_HOST, stream));
          ASSERT_ACL_OK(aclrtMemcpyAsync(slot + 64, 64, static_cast<char*>(p) + size - 64, 64,
                                         ACL_MEMCPY_DEVICE_TO_HOST, stream));
          ASSERT_ACL_OK(aclrtMemPoolFreeAsync(p, stream));
        }
        ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
        for (int i = 0; i < kPerRound; ++i) {
          const char value = static_cast<char>('A' + (t * kPerRound + i) % 50);
          if (!allBytes(out + 2 * 64 * i, 2 * 64, value)) ++wrong[t];
        }
      }
      ASSERT_ACL_OK(aclrtDestroyStream(stream));
      ASSERT_ACL_OK(aclrtFreeHost(out));
      ASSERT_ACL_OK(aclrtResetDevice(0));
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  EXPECT_EQ(used(pool_), 0u);
  EXPECT_LE(reserved(pool_), 8 * kMiB);
}

}  // namespace
}  // namespace cohort::acltest
