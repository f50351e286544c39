// Abort and destroy with ranks as threads, on the transport the environment
// chooses (this file is built once for shm, once for tcp: ABORT_SUITE names the
// suite). Abort unblocks a waiting operation within a second on both the mesh
// and the schedule (connection) paths; destroy waits for pending operations, or
// with abortPending aborts them; peers then fail instead of hanging; and the
// process creates new communicators that compute correctly (recovery).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "collective/rank_pool.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;
using Comms = std::vector<std::unique_ptr<Communicator>>;

// Runs fn(rank) on one thread per rank, each with its device set; joins them.
void onRanks(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&fn, r] {
      (void)runtime::setDevice(r);
      fn(r);
    });
  }
  for (auto& t : threads) t.join();
}

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Every rank allreduces (r + 1) in `count` int32 elements and checks the sum, on
// a new stream (the default streams keep the errors of the aborted communicator:
// stream errors are sticky).
void expectCorrectAllReduce(Comms& comms, std::size_t count) {
  const int n = static_cast<int>(comms.size());
  std::vector<std::string> errors(comms.size());
  onRanks(n, [&](int r) {
    void* buf = nullptr;
    runtime::Stream* stream = nullptr;
    ASSERT_OK(runtime::deviceMalloc(&buf, count * 4));
    ASSERT_OK(runtime::streamCreate(&stream));
    auto* v = static_cast<std::int32_t*>(buf);
    for (std::size_t i = 0; i < count; ++i) v[i] = r + 1;
    Status s = comms[r]->allReduce(buf, buf, count, DataType::kInt32, ReduceOp::kSum, stream);
    if (s.ok()) s = runtime::streamSynchronize(stream);
    (void)runtime::streamDestroy(stream);
    const int want = n * (n + 1) / 2;
    if (!s.ok()) errors[r] = s.toString();
    for (std::size_t i = 0; s.ok() && errors[r].empty() && i < count; ++i) {
      if (v[i] != want) errors[r] = "element " + std::to_string(i) + " is " + std::to_string(v[i]);
    }
    (void)runtime::deviceFree(buf);
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(ABORT_SUITE, AbortUnblocksACollectiveWithinASecond) {
  RankPool pool(2);
  ASSERT_OK(pool.initStatus());
  Status st;
  double took = 0;
  pool.run([&](int r) -> std::string {
    if (r == 1) {  // never joins; aborts rank 0 instead
      std::this_thread::sleep_for(200ms);
      pool.comm(0).abort();
      return "";
    }
    void* buf = nullptr;
    (void)runtime::deviceMalloc(&buf, 4 << 20);
    const auto start = std::chrono::steady_clock::now();
    st = pool.comm(0).allReduce(buf, buf, 1 << 20, DataType::kFloat32, ReduceOp::kSum,
                                pool.stream(0));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(0));
    took = secondsSince(start);
    (void)runtime::deviceFree(buf);
    return "";
  });
  EXPECT_ERROR(st, kAborted, "abort");
  EXPECT_LT(took, 1.2);
  EXPECT_EQ(pool.comm(0).asyncError().code(), ErrorCode::kAborted);
}

TEST(ABORT_SUITE, AbortUnblocksAReceiveWithinASecond) {
  RankPool pool(2);
  ASSERT_OK(pool.initStatus());
  Status st;
  double took = 0;
  pool.run([&](int r) -> std::string {
    if (r == 1) {  // never sends
      std::this_thread::sleep_for(200ms);
      pool.comm(0).abort();
      return "";
    }
    void* buf = nullptr;
    (void)runtime::deviceMalloc(&buf, 4096);
    const auto start = std::chrono::steady_clock::now();
    st = pool.comm(0).recv(buf, 1024, DataType::kFloat32, 1, pool.stream(0));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(0));
    took = secondsSince(start);
    (void)runtime::deviceFree(buf);
    return "";
  });
  EXPECT_ERROR(st, kAborted, "aborted on this rank while waiting for rank 1");
  EXPECT_LT(took, 1.2);
}

// Destroy with abortPending: the operation in flight and the ones queued behind
// it fail at once; the peer's next operation fails instead of hanging; a new
// pair of communicators in the same process computes correctly.
TEST(ABORT_SUITE, DestroyWithAbortThenRecover) {
  Comms comms;
  ASSERT_OK(Communicator::initAll({0, 1}, &comms));
  void* kept = nullptr;  // rank 0's buffer outlives its communicator
  Status pending;
  double destroyTook = 0;
  onRanks(1, [&](int) {
    ASSERT_OK(runtime::deviceMalloc(&kept, 4 << 20));
    for (int i = 0; i < 3; ++i) {  // rank 1 never joins: the first waits, two queue
      ASSERT_OK(
          comms[0]->allReduce(kept, kept, 1 << 20, DataType::kFloat32, ReduceOp::kSum, nullptr));
    }
    std::this_thread::sleep_for(100ms);
    const auto start = std::chrono::steady_clock::now();
    (void)Communicator::destroy(std::move(comms[0]), /*abortPending=*/true);
    destroyTook = secondsSince(start);
    pending = runtime::streamSynchronize(nullptr);
  });
  EXPECT_LT(destroyTook, 1.2);
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_ERROR(pending, kAborted, "abort");
  // The peer sees rank 0 gone (mesh: it left; tcp: its sockets closed).
  Status peer;
  double peerTook = 0;
  onRanks(2, [&](int r) {
    if (r != 1) return;
    void* buf = nullptr;
    ASSERT_OK(runtime::deviceMalloc(&buf, 4 << 20));
    const auto start = std::chrono::steady_clock::now();
    peer = comms[1]->allReduce(buf, buf, 1 << 20, DataType::kFloat32, ReduceOp::kSum, nullptr);
    if (peer.ok()) peer = runtime::streamSynchronize(nullptr);
    peerTook = secondsSince(start);
    (void)Communicator::destroy(std::move(comms[1]), /*abortPending=*/false);
    (void)runtime::deviceFree(buf);
  });
  EXPECT_ERROR(peer, kRemoteError, "rank 0");
  // Abort's contract: the peers' error says that the peer aborted (mesh: its departure
  // note; tcp: its error frame), not only that it went.
  EXPECT_NE(peer.message().find("abort"), std::string::npos) << peer.toString();
  EXPECT_LT(peerTook, 2.0);
  onRanks(1, [&](int) { (void)runtime::deviceFree(kept); });
  // Recovery: the same devices, a new pair.
  Comms fresh;
  ASSERT_OK(Communicator::initAll({0, 1}, &fresh));
  expectCorrectAllReduce(fresh, 100000);
  expectCorrectAllReduce(fresh, 7);
  for (auto& c : fresh) EXPECT_OK(c->asyncError());
}

// Destroy without abort waits: both ranks queue an allreduce and destroy at
// once; the result is complete when destroy returns.
TEST(ABORT_SUITE, DestroyWaitsForPendingOperations) {
  Comms comms;
  ASSERT_OK(Communicator::initAll({0, 1}, &comms));
  constexpr std::size_t kCount = 1 << 20;
  std::vector<std::string> errors(2);
  onRanks(2, [&](int r) {
    void* buf = nullptr;
    ASSERT_OK(runtime::deviceMalloc(&buf, kCount * 4));
    auto* v = static_cast<std::int32_t*>(buf);
    for (std::size_t i = 0; i < kCount; ++i) v[i] = r + 1;
    runtime::Stream* s = nullptr;
    ASSERT_OK(runtime::streamCreate(&s));
    ASSERT_OK(comms[r]->allReduce(buf, buf, kCount, DataType::kInt32, ReduceOp::kSum, s));
    (void)Communicator::destroy(std::move(comms[r]), /*abortPending=*/false);
    // The communicator's stream finished the operation; ours only waits for it.
    ASSERT_OK(runtime::streamSynchronize(s));
    for (std::size_t i = 0; errors[r].empty() && i < kCount; ++i) {
      if (v[i] != 3) errors[r] = "element " + std::to_string(i) + " is " + std::to_string(v[i]);
    }
    (void)runtime::streamDestroy(s);
    (void)runtime::deviceFree(buf);
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

}  // namespace
}  // namespace cohort::testing
