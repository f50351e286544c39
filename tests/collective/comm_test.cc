// Communicator behaviour: stream ordering, overlap, split, mismatches, bad
// arguments, abort. Ranks as threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;

#define EXPECT_ALL_OK(results) EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results)

// compute -> allreduce -> compute on one stream, no host synchronisation between.
TEST(CommTest, StreamOrderingWithoutHostSync) {
  RankPool& pool = RankPool::shared(4);
  ASSERT_OK(pool.initStatus());
  static constexpr std::size_t n = 50000;
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    void *in = nullptr, *out = nullptr;
    if (!runtime::deviceMalloc(&in, n * 4).ok() || !runtime::deviceMalloc(&out, n * 4).ok()) return "alloc";
    runtime::Stream* s = pool.stream(r);
    std::vector<float> host(n, -1);
    // The producer is slow: the collective must wait for it.
    (void)runtime::launchKernel(s, [in, r](runtime::Stream*) {
      std::this_thread::sleep_for(20ms);
      auto* f = static_cast<float*>(in);
      for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(r + 1) * static_cast<float>(i % 13);
      return Status::Ok();
    });
    Status st = pool.comm(r).allReduce(in, out, n, DataType::kFloat32, ReduceOp::kSum, s);
    if (!st.ok()) return st.toString();
    (void)runtime::launchKernel(s, [out, &host](runtime::Stream*) {
      std::memcpy(host.data(), out, n * 4);  // the consumer sees the result
      return Status::Ok();
    });
    st = runtime::streamSynchronize(s);
    (void)runtime::deviceFree(in);
    (void)runtime::deviceFree(out);
    if (!st.ok()) return st.toString();
    for (std::size_t i = 0; i < n; ++i) {
      if (host[i] != 10.0f * static_cast<float>(i % 13)) return "wrong element " + std::to_string(i);
    }
    return "";
  }));
}

// lastChoice() may be read from another thread while the stream's worker runs
// operations that change it (TSan checks the reads; the values must be whole).
TEST(CommTest, LastChoiceIsReadableWhileOperationsRun) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, torn{0};
  std::thread reader([&] {
    while (!done.load()) {
      for (int r = 0; r < 2; ++r) {
        const std::string c = pool.comm(r).lastChoice();
        if (!c.empty() && c.rfind("allreduce=", 0) != 0 && c.rfind("allgather=", 0) != 0) ++torn;
        ++reads;
      }
    }
  });
  // Start the operations once the reader runs, so that it reads while they do however the
  // threads are scheduled (bounded: a reader that never starts fails the check below).
  const auto giveUp = std::chrono::steady_clock::now() + 10s;
  while (reads.load() == 0 && std::chrono::steady_clock::now() < giveUp) std::this_thread::yield();
  static constexpr std::size_t n = 4096;
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    void *in = nullptr, *out = nullptr;
    if (!runtime::deviceMalloc(&in, n * 8).ok() || !runtime::deviceMalloc(&out, n * 8).ok()) return "alloc";
    std::memset(in, 0, n * 8);
    runtime::Stream* s = pool.stream(r);
    Status st;
    for (int i = 0; i < 200 && st.ok(); ++i) {
      // A kernel ahead of each call keeps the stream busy: the calls queue on
      // the worker instead of running inline.
      (void)runtime::launchKernel(s, [](runtime::Stream*) { return Status::Ok(); });
      st = i % 2 == 0 ? pool.comm(r).allReduce(in, out, n, DataType::kFloat32, ReduceOp::kSum, s)
                      : pool.comm(r).allGather(in, out, n / 2, DataType::kFloat32, s);
    }
    if (st.ok()) st = runtime::streamSynchronize(s);
    (void)runtime::deviceFree(in);
    (void)runtime::deviceFree(out);
    return st.ok() ? "" : st.toString();
  }));
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(pool.comm(r).lastChoice().rfind("allgather=", 0), 0u);
}

// Independent compute on another stream runs while a collective progresses: the
// kernel waits for a flag that only a kernel queued after the collective sets.
TEST(CommTest, ComputeOnAnotherStreamOverlapsTheCollective) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    runtime::Stream* other = nullptr;
    if (!runtime::streamCreate(&other).ok()) return "stream";
    void* buf = nullptr;
    if (!runtime::deviceMalloc(&buf, 1 << 20).ok()) return "alloc";
    std::atomic<bool> collectiveDone{false};
    std::atomic<bool> overlapped{false};
    (void)runtime::launchKernel(other, [&](runtime::Stream*) {
      const auto end = std::chrono::steady_clock::now() + 10s;
      while (!collectiveDone.load() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(100us);
      overlapped = collectiveDone.load();
      return Status::Ok();
    });
    runtime::Stream* s = pool.stream(r);
    Status st = pool.comm(r).allReduce(buf, buf, (1 << 20) / 4, DataType::kFloat32, ReduceOp::kSum, s);
    (void)runtime::launchKernel(s, [&](runtime::Stream*) {
      collectiveDone = true;
      return Status::Ok();
    });
    if (st.ok()) st = runtime::streamSynchronize(s);
    Status st2 = runtime::streamSynchronize(other);
    (void)runtime::streamDestroy(other);
    (void)runtime::deviceFree(buf);
    if (!st.ok()) return st.toString();
    if (!st2.ok()) return st2.toString();
    return overlapped.load() ? "" : "the compute stream never saw the collective finish";
  }));
}

TEST(CommTest, CountZeroStillOrdersTheStreams) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    std::atomic<int> step{0};
    runtime::Stream* s = pool.stream(r);
    (void)runtime::launchKernel(s, [&](runtime::Stream*) {
      std::this_thread::sleep_for(10ms);
      step = 1;
      return Status::Ok();
    });
    Status st = pool.comm(r).allReduce(nullptr, nullptr, 0, DataType::kFloat32, ReduceOp::kSum, s);
    int seen = -1;
    (void)runtime::launchKernel(s, [&](runtime::Stream*) {
      seen = step.load();
      return Status::Ok();
    });
    if (st.ok()) st = runtime::streamSynchronize(s);
    if (!st.ok()) return st.toString();
    return seen == 1 ? "" : "work after the collective ran before work queued earlier";
  }));
}


// The launch's fast path (comm_ops.cc): a small call made while the communicator
// has nothing queued and the caller's stream is idle is posted from the calling
// thread, so the rank that calls last finishes it before its call returns: nothing
// on its stream, the result already in its output. The first rank's call waits for
// nobody either; its stream completes it.
TEST(CommTest, TheLastRankToASmallCallFinishesItBeforeTheCallReturns) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  static constexpr std::size_t n = 37;
  std::atomic<bool> firstReturned{false};
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    runtime::Stream* s = pool.stream(r);
    void *in = nullptr, *out = nullptr;
    if (!runtime::deviceMalloc(&in, n * 4).ok() || !runtime::deviceMalloc(&out, n * 4).ok()) {
      return "alloc";
    }
    auto* f = static_cast<float*>(in);
    for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>((r + 1) * (i % 7));
    std::memset(out, 0xff, n * 4);
    std::string failure;
    Status st = runtime::streamSynchronize(s);  // idle, whatever ran before
    if (r == 1) {
      while (!firstReturned.load()) std::this_thread::sleep_for(1ms);
    }
    if (st.ok()) st = pool.comm(r).allReduce(in, out, n, DataType::kFloat32, ReduceOp::kSum, s);
    if (r == 0) firstReturned = true;
    const auto* o = static_cast<const float*>(out);
    if (st.ok() && r == 1) {
      if (!runtime::streamQuery(s).ok()) failure = "the last rank's call left work on its stream";
      for (std::size_t i = 0; i < n && failure.empty(); ++i) {
        if (o[i] != 3.0f * static_cast<float>(i % 7)) {
          failure = "element " + std::to_string(i) + " not final when the call returned";
        }
      }
    }
    if (st.ok()) st = runtime::streamSynchronize(s);
    for (std::size_t i = 0; st.ok() && i < n && failure.empty(); ++i) {
      if (o[i] != 3.0f * static_cast<float>(i % 7)) failure = "wrong element " + std::to_string(i);
    }
    (void)runtime::deviceFree(in);
    (void)runtime::deviceFree(out);
    return st.ok() ? failure : st.toString();
  }));
}
TEST(CommTest, SplitByColorAndKey) {
  RankPool& pool = RankPool::shared(4);
  ASSERT_OK(pool.initStatus());
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    std::unique_ptr<Communicator> sub;
    // Colors: even ranks, odd ranks; rank 3 joins none. Keys reverse the order.
    const int color = r == 3 ? -1 : r % 2;
    Status st = pool.comm(r).split(color, 10 - r, &sub);
    if (!st.ok()) return st.toString();
    if (r == 3) return sub == nullptr ? "" : "rank 3 got a communicator";
    const int expectSize = r % 2 == 0 ? 2 : 1;
    if (sub->size() != expectSize) return "size " + std::to_string(sub->size());
    if (r % 2 == 0 && sub->rank() != (r == 0 ? 1 : 0)) return "key order: rank " + std::to_string(sub->rank());
    void* buf = nullptr;
    if (!runtime::deviceMalloc(&buf, 4).ok()) return "alloc";
    *static_cast<int*>(buf) = r + 1;
    st = sub->allReduce(buf, buf, 1, DataType::kInt32, ReduceOp::kSum, pool.stream(r));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(r));
    const int got = *static_cast<int*>(buf);
    (void)runtime::deviceFree(buf);
    if (!st.ok()) return st.toString();
    const int want = r % 2 == 0 ? 1 + 3 : 2;
    return got == want ? "" : "sum " + std::to_string(got) + " want " + std::to_string(want);
  }));
}

TEST(CommTest, SubCommunicatorFromARankList) {
  RankPool& pool = RankPool::shared(4);
  ASSERT_OK(pool.initStatus());
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    if (r == 1) return "";  // not in the list: does not call
    std::unique_ptr<Communicator> sub;
    Status st = pool.comm(r).subCommunicator({3, 0, 2}, &sub);
    if (!st.ok()) return st.toString();
    const int want = r == 3 ? 0 : r == 0 ? 1 : 2;
    return sub->rank() == want && sub->size() == 3 ? "" : "wrong rank " + std::to_string(sub->rank());
  }));
}

// A sub-communicator's own retry settings (HcclCreateSubCommConfig's config) rule
// its links over its parent's (none here): one the variable would refuse fails
// its creation on every rank, naming it; valid ones are taken.
TEST(CommTest, ASubCommunicatorTakesItsOwnRetrySettings) {
  RankPool pool(2);
  ASSERT_OK(pool.initStatus());
  for (const char* enable : {"L1:2", "L0:1,L1:1"}) {
    auto results = pool.run([&](int r) -> std::string {
      CommOptions own;
      own.retryEnable = enable;
      own.retryParams = "MaxCnt:2,HoldTime:3000";
      std::unique_ptr<Communicator> sub;
      Status st = pool.comm(r).subCommunicator({0, 1}, &sub, own);
      if (!st.ok()) return st.toString();
      return sub != nullptr && sub->size() == 2 ? "" : "no sub-communicator";
    });
    for (int r = 0; r < 2; ++r) {
      if (std::string(enable) == "L1:2") {
        EXPECT_NE(results[r].find("the communicator's retry settings"), std::string::npos)
            << "rank " << r << ": " << results[r];
        EXPECT_NE(results[r].find("HCCL_OP_RETRY_ENABLE"), std::string::npos) << results[r];
      } else {
        EXPECT_EQ(results[r], "") << "rank " << r;
      }
    }
  }
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
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
    if (r != 0) return "";
    Communicator& c = pool.comm(0);
    runtime::Stream* s = pool.stream(0);
    void* small = nullptr;
    (void)runtime::deviceMalloc(&small, 64);
    std::string out;
    auto expect = [&](Status st, ErrorCode code, const char* needle) {
      if (st.code() != code || st.message().find(needle) == std::string::npos) {
        out += std::string("\n expected '") + needle + "', got " + st.toString();
      }
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
    void* other = nullptr;
    std::thread([&] {
      (void)runtime::setDevice(3);
      (void)runtime::deviceMalloc(&other, 64);
    }).join();
    expect(c.allReduce(other, small, 4, DataType::kFloat32, ReduceOp::kSum, s), ErrorCode::kInvalidArgument, "memory of device 3");
    (void)runtime::deviceFree(small);
    (void)runtime::deviceFree(other);
    (void)runtime::streamDestroy(foreign);
    // Nothing was queued: the stream is clean and the communicator still works.
    Status st = runtime::streamSynchronize(s);
    if (!st.ok()) out += "\n stream: " + st.toString();
    if (!c.asyncError().ok()) out += "\n asyncError: " + c.asyncError().toString();
    return out;
  }));
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

TEST(CommTest, AbortUnblocksAWaitingRankWithinASecond) {
  RankPool pool(2);
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    if (r == 1) {  // never joins the collective; aborts rank 0 instead
      std::this_thread::sleep_for(100ms);
      pool.comm(0).abort();
      return "";
    }
    void* buf = nullptr;
    (void)runtime::deviceMalloc(&buf, 1 << 20);
    const auto start = std::chrono::steady_clock::now();
    Status st = pool.comm(0).allReduce(buf, buf, 1 << 18, DataType::kFloat32, ReduceOp::kSum, pool.stream(0));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(0));
    const auto took = std::chrono::steady_clock::now() - start;
    (void)runtime::deviceFree(buf);
    if (st.code() != ErrorCode::kAborted && st.code() != ErrorCode::kTaskFailed) return "got " + st.toString();
    if (st.message().find("abort") == std::string::npos) return "message: " + st.toString();
    return took < 1500ms ? "" : "took too long";
  });
  EXPECT_ALL_OK(results);
  // Later calls fail at once.
  EXPECT_EQ(pool.comm(0).allReduce(nullptr, nullptr, 0, DataType::kFloat32, ReduceOp::kSum, nullptr).code(),
            ErrorCode::kAborted);
}

TEST(CommTest, LinkReportNamesEveryLink) {
  RankPool& pool = RankPool::shared(3);
  ASSERT_OK(pool.initStatus());
  const std::string json = pool.comm(0).linkReportJson();
  EXPECT_NE(json.find("\"peer\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("\"peer\": 2"), std::string::npos) << json;
  EXPECT_NE(json.find("shm"), std::string::npos) << json;
}

}  // namespace
}  // namespace cohort::testing
