// What a communicator checks of its callers' arguments: counts, types and
// collectives that differ between ranks (every rank fails, naming both values,
// and no buffer is written), bad arguments refused before anything is queued,
// and a repeated call checked again. Ranks as threads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

#define EXPECT_ALL_OK(results) EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results)

// Memory of device 3 (no rank's device here), allocated from a thread of its own.
void* otherDeviceMemory(std::size_t bytes) {
  void* p = nullptr;
  std::thread([&] {
    (void)runtime::setDevice(3);
    (void)runtime::deviceMalloc(&p, bytes);
  }).join();
  return p;
}

// Notes in `out` a status that lacks `code` or does not name `needle`.
void expectError(std::string* out, const Status& st, ErrorCode code, const char* needle) {
  if (st.code() != code || st.message().find(needle) == std::string::npos) {
    *out += std::string("\n expected '") + needle + "', got " + st.toString();
  }
}

// After calls refused before anything was queued: the stream is clean and the
// communicator has no asynchronous error ("" if so).
std::string leftClean(Communicator& c, runtime::Stream* s) {
  std::string out;
  Status st = runtime::streamSynchronize(s);
  if (!st.ok()) out += "\n stream: " + st.toString();
  if (!c.asyncError().ok()) out += "\n asyncError: " + c.asyncError().toString();
  return out;
}

// Runs `body` on rank 0 of the shared pool of two ranks (rank 1 makes no call:
// the calls it makes are refused before anything reaches a peer); its text is
// the failures.
void onRankZero(const std::function<std::string(Communicator&, runtime::Stream*)>& body) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    return r != 0 ? std::string() : body(pool.comm(0), pool.stream(0));
  }));
}

// Mismatched arguments fail on every rank with the parameter and both values,
// and no buffer is written past its end.
TEST(CommTest, MismatchedCountsAndTypesAreDetectedOnBothRanks) {
  for (const char* algo : {"", "allreduce=ring"}) {
    RankPool pool(2);  // a fresh pair: a failed communicator stays failed
    ASSERT_OK(pool.initStatus());
    auto results = pool.run([&](int r) -> std::string {
      if (!pool.comm(r).setAlgorithm(algo).ok()) return "setAlgorithm";
      void* buf = nullptr;
      (void)runtime::deviceMalloc(&buf, 4096);
      std::memset(buf, 0, 4096);
      const std::size_t count = r == 0 ? 256 : 512;
      Status st = pool.comm(r).allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, pool.stream(r));
      if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
      (void)runtime::deviceFree(buf);
      return st.toString();
    });
    for (int r = 0; r < 2; ++r) {
      EXPECT_NE(results[r].find("count: "), std::string::npos) << algo << " rank " << r << ": " << results[r];
      EXPECT_NE(results[r].find("256"), std::string::npos) << results[r];
      EXPECT_NE(results[r].find("512"), std::string::npos) << results[r];
      EXPECT_NE(results[r].find("mismatched"), std::string::npos) << results[r];
    }
    // The communicator reports it asynchronously too.
    EXPECT_EQ(pool.comm(0).asyncError().code(), ErrorCode::kMismatch);
  }
}

// A small allreduce over 4 ranks checks the arguments round by round with the
// partner of each round (recursive doubling). Rank 2's count differs: its
// first partner (3) and itself name the difference; ranks 0 and 1, which
// learn of it through the failure, fail too. Nobody's buffer is written.
TEST(CommTest, AMismatchWithALaterPartnerFailsEveryRankAndWritesNothing) {
  RankPool pool(4);
  ASSERT_OK(pool.initStatus());
  constexpr std::size_t kCount = 256;
  std::vector<std::vector<float>> outs(4);
  auto results = pool.run([&](int r) -> std::string {
    if (!pool.comm(r).setAlgorithm("allreduce=hd").ok()) return "setAlgorithm";
    void *in = nullptr, *out = nullptr;
    if (!runtime::deviceMalloc(&in, (kCount + 1) * 4).ok() ||
        !runtime::deviceMalloc(&out, (kCount + 1) * 4).ok()) {
      return "deviceMalloc";
    }
    for (std::size_t i = 0; i <= kCount; ++i) {
      static_cast<float*>(in)[i] = 1.0f;
      static_cast<float*>(out)[i] = -7.0f;
    }
    const std::size_t count = r == 2 ? kCount + 1 : kCount;
    Status st = pool.comm(r).allReduce(in, out, count, DataType::kFloat32, ReduceOp::kSum, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    outs[static_cast<std::size_t>(r)].assign(static_cast<float*>(out), static_cast<float*>(out) + kCount + 1);
    (void)runtime::deviceFree(in);
    (void)runtime::deviceFree(out);
    return st.ok() ? "returned ok" : st.toString();
  });
  for (int r : {2, 3}) {
    EXPECT_NE(results[r].find("mismatched collective between rank " + std::to_string(r)),
              std::string::npos) << "rank " << r << ": " << results[r];
    EXPECT_NE(results[r].find("count: "), std::string::npos) << results[r];
  }
  for (int r : {0, 1}) EXPECT_NE(results[r], "returned ok") << "rank " << r;
  for (int r = 0; r < 4; ++r) {
    for (float v : outs[static_cast<std::size_t>(r)]) {
      ASSERT_EQ(v, -7.0f) << "rank " << r << "'s output was written";
    }
  }
}

TEST(CommTest, DifferentCollectivesAreDetected) {
  RankPool pool(2);
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    void* buf = nullptr;
    (void)runtime::deviceMalloc(&buf, 4096);
    Status st = r == 0 ? pool.comm(r).allReduce(buf, buf, 16, DataType::kInt32, ReduceOp::kSum, pool.stream(r))
                       : pool.comm(r).broadcast(buf, 16, DataType::kInt32, 0, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    (void)runtime::deviceFree(buf);
    return st.toString();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(results[r].find("collective: "), std::string::npos) << results[r];
    EXPECT_NE(results[r].find("allreduce"), std::string::npos) << results[r];
    EXPECT_NE(results[r].find("broadcast"), std::string::npos) << results[r];
  }
}

// A small broadcast's root leaves its data in the eager ring and goes on: a
// rank whose count differs fails at once (and leaves), and the root at its next
// call that waits for that rank, naming it and its cause (never silently).
TEST(CommTest, ABroadcastRootLearnsOfAMismatchAtItsNextWait) {
  RankPool pool(2);
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    void* buf = nullptr;
    (void)runtime::deviceMalloc(&buf, 4096);
    const std::size_t count = r == 0 ? 16 : 32;
    Status st = pool.comm(r).broadcast(buf, count, DataType::kInt32, 0, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    std::string out = st.toString();
    if (r == 0 && st.ok()) {
      st =
          pool.comm(r).allReduce(buf, buf, count, DataType::kInt32, ReduceOp::kSum, pool.stream(r));
      if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
      out += " | next call: " + st.toString();
    }
    (void)runtime::deviceFree(buf);
    return out;
  });
  EXPECT_NE(results[1].find("mismatched collective"), std::string::npos) << results[1];
  EXPECT_NE(results[1].find("count: 32 vs 16"), std::string::npos) << results[1];
  EXPECT_EQ(results[0].rfind("success | next call: ", 0), 0u) << results[0];
  EXPECT_NE(results[0].find("remote rank 1"), std::string::npos) << results[0];
  EXPECT_NE(results[0].find("count: 32 vs 16"), std::string::npos) << results[0];
  EXPECT_EQ(pool.comm(0).asyncError().code(), ErrorCode::kRemoteError);
}

TEST(CommTest, BadArgumentsAreRejectedBeforeAnythingIsQueued) {
  onRankZero([](Communicator& c, runtime::Stream* s) -> std::string {
    void* small = nullptr;
    (void)runtime::deviceMalloc(&small, 64);
    std::string out;
    auto expect = [&](Status st, ErrorCode code, const char* needle) {
      expectError(&out, st, code, needle);
    };
    expect(c.allReduce(nullptr, small, 4, DataType::kFloat32, ReduceOp::kSum, s), ErrorCode::kInvalidArgument, "sendbuf is null");
    expect(c.allReduce(small, small, 100, DataType::kFloat32, ReduceOp::kSum, s), ErrorCode::kSizeOverflow, "holds 64 bytes, the operation needs 400");
    expect(c.allReduce(small, small, 4, static_cast<DataType>(99), ReduceOp::kSum, s), ErrorCode::kInvalidArgument, "unknown data type 99");
    expect(c.allReduce(small, small, 4, DataType::kInt32, ReduceOp::kAvg, s), ErrorCode::kInvalidArgument, "not valid for int32");
    expect(c.allReduce(small, small, 4, DataType::kInt32, static_cast<ReduceOp>(42), s), ErrorCode::kInvalidArgument, "reduce op 42");
    expect(c.broadcast(small, 4, DataType::kInt32, 2, s), ErrorCode::kInvalidArgument, "root 2 is not a rank");
    expect(c.allToAll(small, small, 2, DataType::kInt32, s), ErrorCode::kInvalidArgument, "in-place alltoall");
    expect(c.allReduce(small, small, ~std::size_t(0) / 2, DataType::kFloat32, ReduceOp::kSum, s), ErrorCode::kInvalidArgument, "overflows");
    expect(c.send(small, 4, DataType::kInt32, 5, s), ErrorCode::kInvalidArgument, "peer 5");
    runtime::Stream* foreign = nullptr;
    std::thread([&] {
      (void)runtime::setDevice(3);
      (void)runtime::streamCreate(&foreign);
    }).join();
    expect(c.allReduce(small, small, 4, DataType::kFloat32, ReduceOp::kSum, foreign), ErrorCode::kInvalidArgument, "stream belongs to device 3");
    void* other = otherDeviceMemory(64);
    expect(c.allReduce(other, small, 4, DataType::kFloat32, ReduceOp::kSum, s), ErrorCode::kInvalidArgument, "memory of device 3");
    (void)runtime::deviceFree(small);
    (void)runtime::deviceFree(other);
    (void)runtime::streamDestroy(foreign);
    return out + leftClean(c, s);  // nothing was queued
  });
}

// The V calls and send/recv check their buffers as the others do: the extent a
// V call's counts and displacements reach, freed memory, another device's
// memory, a send or receive buffer too small. Nothing is queued.
TEST(CommTest, VCallsAndSendRecvCheckTheirBuffers) {
  onRankZero([](Communicator& c, runtime::Stream* s) -> std::string {
    void *small = nullptr, *big = nullptr, *freed = nullptr;
    (void)runtime::deviceMalloc(&small, 64);
    (void)runtime::deviceMalloc(&big, 4096);
    (void)runtime::deviceMalloc(&freed, 4096);
    (void)runtime::deviceFree(freed);
    void* other = otherDeviceMemory(4096);
    std::string out;
    auto expect = [&](Status st, ErrorCode code, const char* needle) {
      expectError(&out, st, code, needle);
    };
    const std::vector<std::size_t> four{4, 4};
    // Rank 1's 4 floats land at element 60: 256 bytes of recvbuf.
    expect(c.allGatherV(big, 4, small, four, {0, 60}, DataType::kFloat32, s),
           ErrorCode::kSizeOverflow, "recvbuf");
    expect(c.allGatherV(big, 4, small, four, {0, 60}, DataType::kFloat32, s),
           ErrorCode::kSizeOverflow, "holds 64 bytes, the operation needs 256");
    expect(c.allGatherV(freed, 4, big, four, {0, 4}, DataType::kFloat32, s),
           ErrorCode::kInvalidPointer, "sendbuf");
    expect(c.reduceScatterV(other, four, {0, 4}, big, 4, DataType::kFloat32, ReduceOp::kSum, s),
           ErrorCode::kInvalidArgument, "memory of device 3");
    expect(c.reduceScatterV(small, four, {0, 16}, big, 4, DataType::kFloat32, ReduceOp::kSum, s),
           ErrorCode::kSizeOverflow, "the operation needs 80");
    expect(c.allToAllV(big, four, {0, 4}, freed, four, {0, 4}, DataType::kFloat32, s),
           ErrorCode::kInvalidPointer, "not in a live allocation");
    expect(c.allToAllV(big, four, {0, ~std::size_t(0) - 2}, big, four, {0, 4},
                       DataType::kFloat32, s),
           ErrorCode::kInvalidArgument, "overflows");
    expect(c.send(freed, 4, DataType::kInt32, 1, s), ErrorCode::kInvalidPointer,
           "send buffer");
    expect(c.recv(small, 17, DataType::kInt32, 1, s), ErrorCode::kSizeOverflow,
           "holds 64 bytes, the operation needs 68");
    expect(c.recv(other, 4, DataType::kInt32, 1, s), ErrorCode::kInvalidArgument,
           "memory of device 3");
    (void)runtime::deviceFree(small);
    (void)runtime::deviceFree(big);
    (void)runtime::deviceFree(other);
    return out + leftClean(c, s);  // nothing was queued
  });
}

// A V call whose counts or displacements are not one per rank, or whose own
// count is not the one it passes, is refused naming both; nothing is queued.
TEST(CommTest, VCallsOfTheWrongShapeAreRefused) {
  onRankZero([](Communicator& c, runtime::Stream* s) -> std::string {
    void* buf = nullptr;
    (void)runtime::deviceMalloc(&buf, 4096);
    std::string out;
    auto expect = [&](Status st, const char* needle) {
      expectError(&out, st, ErrorCode::kInvalidArgument, needle);
    };
    expect(c.allGatherV(buf, 4, buf, {4}, {0}, DataType::kFloat32, s),
           "allgatherv: recvCounts/displs need 2 entries");
    expect(c.allGatherV(buf, 4, buf, {3, 4}, {0, 4}, DataType::kFloat32, s),
           "recvCounts[0] must equal sendCount 4");
    expect(c.reduceScatterV(buf, {4, 4}, {0}, buf, 4, DataType::kFloat32, ReduceOp::kSum, s),
           "reducescatterv: sendCounts/displs need 2 entries");
    expect(c.reduceScatterV(buf, {4, 4}, {0, 4}, buf, 5, DataType::kFloat32, ReduceOp::kSum, s),
           "sendCounts[0] must equal recvCount 5");
    (void)runtime::deviceFree(buf);
    return out + leftClean(c, s);  // nothing was queued
  });
}

// Every call is checked, a repeated one too: after a free and a smaller
// allocation at the same address, or after its stream was destroyed, the same
// call fails on both ranks.
TEST(CommTest, ARepeatedCallIsCheckedAgainOnceItsBufferOrStreamChanged) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  constexpr std::size_t count = 1023;
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    Communicator& c = pool.comm(r);
    runtime::Stream* s = nullptr;
    if (!runtime::streamCreate(&s).ok()) return "streamCreate";
    void* buf = nullptr;
    if (!runtime::deviceMalloc(&buf, count * 4).ok()) return "alloc";
    auto* f = static_cast<float*>(buf);
    std::string out;
    for (int call = 0; call < 3; ++call) {  // the second and third are repeats
      for (std::size_t i = 0; i < count; ++i) f[i] = static_cast<float>((r + 1) * (i % 97));
      Status st = c.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (!st.ok()) return "call " + std::to_string(call) + ": " + st.toString();
      for (std::size_t i = 0; i < count; ++i) {
        if (f[i] != static_cast<float>(3 * (i % 97))) {
          return "call " + std::to_string(call) + ": element " + std::to_string(i) + " is " +
                 std::to_string(f[i]);
        }
      }
    }
    (void)runtime::deviceFree(buf);
    void* smaller = nullptr;
    if (!runtime::deviceMalloc(&smaller, 64).ok()) return "alloc 64";
    if (smaller != buf) return "the pool did not reuse the address; the test needs it";
    Status st = c.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, s);
    if (st.code() != ErrorCode::kSizeOverflow ||
        st.message().find("holds 64 bytes, the operation needs 4092") == std::string::npos) {
      out += "\n after the free: " + st.toString();
    }
    (void)runtime::deviceFree(smaller);
    if (!runtime::deviceMalloc(&buf, count * 4).ok()) return "alloc again";
    st = c.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, s);
    if (st.ok()) st = runtime::streamSynchronize(s);
    if (!st.ok()) out += "\n a valid call after the failed one: " + st.toString();
    (void)runtime::streamDestroy(s);
    st = c.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, s);
    if (st.code() != ErrorCode::kInvalidHandle ||
        st.message().find("not a live stream") == std::string::npos) {
      out += "\n on the destroyed stream: " + st.toString();
    }
    (void)runtime::deviceFree(buf);
    return out;
  }));
}

// A call's buffers are checked again after any change to the runtime's memory,
// though the same pointers passed before (the check is remembered between calls):
// freed memory, a mapping made read-only, then unmapped (its addresses fault),
// host memory registered smaller than the
// call needs. Each refused call fails on both ranks and queues nothing, and the
// same call on valid memory works after it.
TEST(CommTest, ARepeatedCallIsCheckedAgainOnceItsMemoryChanged) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  constexpr std::size_t count = 1023;
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    Communicator& c = pool.comm(r);
    runtime::Stream* s = pool.stream(r);
    std::string out;
    // Runs the allreduce in place on `buf` and checks every element.
    auto sum = [&](void* buf, const char* when) {
      auto* f = static_cast<float*>(buf);
      for (std::size_t i = 0; i < count; ++i) f[i] = static_cast<float>((r + 1) * (i % 89));
      Status st = c.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (!st.ok()) {
        out += std::string("\n ") + when + ": " + st.toString();
        return;
      }
      for (std::size_t i = 0; i < count; ++i) {
        if (f[i] != static_cast<float>(3 * (i % 89))) {
          out += std::string("\n ") + when + ": element " + std::to_string(i) + " is " +
                 std::to_string(f[i]);
          return;
        }
      }
    };
    auto refused = [&](void* buf, ErrorCode code, const char* needle, const char* when) {
      Status st = c.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, s);
      if (st.code() != code || st.message().find(needle) == std::string::npos) {
        out += std::string("\n ") + when + ": expected '" + needle + "', got " + st.toString();
      }
    };
    // Freed, with nothing allocated there since.
    void* dev = nullptr;
    if (!runtime::deviceMalloc(&dev, count * 4).ok()) return "deviceMalloc";
    sum(dev, "device memory");
    (void)runtime::deviceFree(dev);
    refused(dev, ErrorCode::kInvalidPointer, "not in a live allocation", "after its free");

    // A mapping whose access drops to reads, then comes back.
    int device = -1;
    (void)runtime::getDevice(&device);
    const std::size_t g = runtime::vmmGranularity();
    void* va = nullptr;
    runtime::PhysicalMemory* mem = nullptr;
    if (!runtime::vmmReserve(g, 0, nullptr, &va).ok() ||
        !runtime::vmmCreate(device, g, 0, &mem).ok() || !runtime::vmmMap(va, g, 0, mem).ok()) {
      return "vmm set-up";
    }
    sum(va, "mapped memory");
    (void)runtime::vmmSetAccess(va, g, runtime::VmmAccess::kRead);
    refused(va, ErrorCode::kInvalidPointer, "allows read-only access", "read-only mapping");
    (void)runtime::vmmSetAccess(va, g, runtime::VmmAccess::kReadWrite);
    sum(va, "the mapping writable again");
    (void)runtime::vmmUnmap(va);
    refused(va, ErrorCode::kInvalidPointer, "not in a live allocation", "after its unmap");
    (void)runtime::vmmDestroy(mem);
    (void)runtime::vmmRelease(va);

    // Plain host memory (page-aligned, as a registration needs), then registered
    // as a range too small for the call.
    std::unique_ptr<void, decltype(&std::free)> host(std::aligned_alloc(4096, 4096), &std::free);
    sum(host.get(), "host memory");
    if (!runtime::hostRegister(host.get(), 64, false, device).ok()) return "hostRegister";
    refused(host.get(), ErrorCode::kSizeOverflow, "holds 64 bytes, the operation needs 4092",
            "registered smaller");
    (void)runtime::hostUnregister(host.get());
    sum(host.get(), "host memory unregistered");
    if (!c.asyncError().ok()) out += "\n asyncError: " + c.asyncError().toString();
    return out;
  }));
}

}  // namespace
}  // namespace cohort::testing
