// Communicator behaviour: stream ordering, overlap, split and sub-communicators,
// abort, the link report. Ranks as threads. Argument checks: comm_arguments_test.cc.
#include <fmt/format.h>
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

// A chain of small (posted) calls, each reading what the one before it wrote:
// out of place, in place, an allgather's output reduce-scattered, the program's
// own kernel between two calls. In the first rounds rank 0 makes every call
// before rank 1 makes any, so none of them may wait for a peer; in the others
// the ranks race. Every element of every output is checked.
TEST(CommTest, SmallCallsBehindPostedOnesReadWhatTheCallsBeforeWrote) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  static constexpr std::size_t n = 37;
  for (int round = 0; round < 24; ++round) {
    const bool rankOneLate = round < 4;
    std::atomic<bool> firstReturned{false};
    EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
      runtime::Stream* s = pool.stream(r);
      constexpr int kBuffers = 6;  // a, b, c, g (2n), h, d; the last output is a again
      void* buf[kBuffers] = {};
      for (void*& p : buf) {
        if (!runtime::deviceMalloc(&p, 2 * n * 4).ok()) return "alloc";
      }
      float *a = static_cast<float*>(buf[0]), *b = static_cast<float*>(buf[1]),
            *c = static_cast<float*>(buf[2]), *g = static_cast<float*>(buf[3]),
            *h = static_cast<float*>(buf[4]), *d = static_cast<float*>(buf[5]);
      for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<float>((r + 1) * (i % 7));
      Status st = runtime::streamSynchronize(s);
      if (rankOneLate && r == 1) {
        while (!firstReturned.load()) std::this_thread::sleep_for(1ms);
      }
      Communicator& comm = pool.comm(r);
      const auto f32 = DataType::kFloat32;
      const auto sum = ReduceOp::kSum;
      if (st.ok()) st = comm.allReduce(a, b, n, f32, sum, s);  // b = 3x
      if (st.ok()) st = comm.allReduce(b, c, n, f32, sum, s);  // c = 6x
      if (st.ok()) st = comm.allReduce(c, c, n, f32, sum, s);  // c = 12x, in place
      if (st.ok()) st = comm.allGather(c, g, n, f32, s);       // g = [12x, 12x]
      if (st.ok()) st = comm.reduceScatter(g, h, n, f32, sum, s);  // h = 24x
      if (st.ok()) {
        st = runtime::launchKernel(s, [h, d](runtime::Stream*) {
          for (std::size_t i = 0; i < n; ++i) d[i] = h[i] + 1;
          return Status::Ok();
        });
      }
      if (st.ok()) st = comm.allReduce(d, a, n, f32, sum, s);  // a = 48x + 2
      if (r == 0) firstReturned = true;
      if (st.ok()) st = runtime::streamSynchronize(s);
      std::string failure;
      auto expect = [&](const char* name, const float* p, std::size_t count, float k, float add) {
        for (std::size_t i = 0; i < count && failure.empty(); ++i) {
          const float want = k * static_cast<float>((i % n) % 7) + add;
          if (p[i] != want) {
            failure = fmt::format("round {}: {}[{}] = {}, expected {}", round, name, i, p[i], want);
          }
        }
      };
      if (st.ok()) {
        expect("b", b, n, 3, 0);
        expect("c", c, n, 12, 0);
        expect("g", g, 2 * n, 12, 0);
        expect("h", h, n, 24, 0);
        expect("a", a, n, 48, 2);
      }
      for (void* p : buf) (void)runtime::deviceFree(p);
      return st.ok() ? failure : st.toString();
    }));
  }
}

// Small calls whose caller runs far ahead of a late rank: the first ones post
// from the caller, those beyond the ring (and those reading an output not
// written yet) wait queued for the stream's task or the caller's next call to
// post them; a copy queued among them is ordered with them like any task.
// Every output is checked, with 2 ranks and with 4 (one rank late each).
TEST(CommTest, SmallCallsFarAheadOfALateRankAllCompleteInOrder) {
  for (int ranks : {2, 4}) {
    RankPool& pool = RankPool::shared(ranks);
    ASSERT_OK(pool.initStatus());
    static constexpr std::size_t n = 29;
    static constexpr int kCalls = 40;  // five times the ring
    for (int round = 0; round < 6; ++round) {
      std::atomic<bool> othersQueued{false};
      const int late = round % ranks;
      EXPECT_ALL_OK(pool.run([&](int r) -> std::string {
        runtime::Stream* s = pool.stream(r);
        void* in = nullptr;
        void* out = nullptr;
        void* copy = nullptr;
        const std::size_t bytes = (kCalls + 1) * n * 4;
        if (!runtime::deviceMalloc(&in, bytes).ok() || !runtime::deviceMalloc(&out, bytes).ok() ||
            !runtime::deviceMalloc(&copy, n * 4).ok()) {
          return "alloc";
        }
        auto* x = static_cast<float*>(in);
        auto* y = static_cast<float*>(out);
        for (std::size_t i = 0; i < (kCalls + 1) * n; ++i) {
          x[i] = static_cast<float>((r + 1) * (i % 5));
          y[i] = -1;
        }
        Status st = runtime::streamSynchronize(s);
        if (r == late) {
          while (!othersQueued.load()) std::this_thread::sleep_for(1ms);
        }
        Communicator& comm = pool.comm(r);
        // Call k reads slice k of `in`, or (every third) the output of call k - 1.
        for (int k = 0; k < kCalls && st.ok(); ++k) {
          const float* src = k % 3 == 2 ? y + (k - 1) * n : x + k * n;
          st = comm.allReduce(src, y + k * n, n, DataType::kFloat32, ReduceOp::kSum, s);
          if (st.ok() && k == kCalls / 2) {  // the copy sees call k's output
            st = runtime::memcpyAsync(copy, n * 4, y + k * n, n * 4,
                                      runtime::MemcpyKind::kDeviceToDevice, s);
          }
        }
        if (r != late) othersQueued = true;  // any one of them will do
        if (st.ok()) st = runtime::streamSynchronize(s);
        std::string failure;
        // The ranks' inputs sum to t = ranks (ranks + 1) / 2 times the pattern;
        // a call reading call k - 1's output multiplies that by the rank count.
        const float t = static_cast<float>(ranks * (ranks + 1) / 2);
        for (int k = 0; k < kCalls && st.ok() && failure.empty(); ++k) {
          const bool chained = k % 3 == 2;
          const std::size_t from = static_cast<std::size_t>(chained ? k - 1 : k) * n;
          const float mult = chained ? static_cast<float>(ranks) * t : t;
          for (std::size_t i = 0; i < n && failure.empty(); ++i) {
            const float want = mult * static_cast<float>((from + i) % 5);
            if (y[k * n + i] != want) {
              failure = fmt::format("{} ranks, round {}, rank {}: call {} element {} = {}, "
                                    "expected {}", ranks, round, r, k, i, y[k * n + i], want);
            }
          }
        }
        const float* c = static_cast<const float*>(copy);
        for (std::size_t i = 0; i < n && st.ok() && failure.empty(); ++i) {
          if (c[i] != y[(kCalls / 2) * n + i]) {
            failure = fmt::format("{} ranks, round {}, rank {}: the copy's element {} = {}, the "
                                  "call's output {}", ranks, round, r, i, c[i],
                                  y[(kCalls / 2) * n + i]);
          }
        }
        (void)runtime::deviceFree(in);
        (void)runtime::deviceFree(out);
        (void)runtime::deviceFree(copy);
        return st.ok() ? failure : st.toString();
      }));
    }
  }
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
