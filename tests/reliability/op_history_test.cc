// The operation history: states, eviction, waits noted from the running thread,
// the SIGUSR1 report (chained to the application's handler), and what a
// communicator logs when an operation times out. COHORT_EXEC_TIMEOUT=2 (ctest).
#include "collective/op_history.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "collective/rank_pool.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;
using collective::OpDesc;
using collective::OpHistory;
using collective::OpState;

// The application's own handler, installed before any communicator exists.
volatile sig_atomic_t gOwnHandlerRuns = 0;
void ownHandler(int) { gOwnHandlerRuns = gOwnHandlerRuns + 1; }
const bool kOwnHandlerInstalled = (::signal(SIGUSR1, ownHandler), true);

OpDesc allreduce(std::uint64_t seq) {
  OpDesc op;
  op.coll = collective::Coll::kAllReduce;
  op.count = 1024;
  op.type = DataType::kFloat32;
  op.seq = seq;
  return op;
}

std::vector<std::uint64_t> ids(const OpHistory& h) {
  std::vector<std::uint64_t> out;
  for (const auto& r : h.snapshot()) out.push_back(r.id);
  return out;
}

TEST(OpHistoryTest, RecordsEachStateAndFormatsIt) {
  OpHistory h("rank 3 of 4, test", 8);
  const auto a = h.queued(allreduce(1)), b = h.queued(allreduce(2)), c = h.queued(allreduce(3));
  h.started(a, allreduce(1), "allreduce=ring tcp");
  h.finished(a, Status::Ok());
  h.started(b, allreduce(2), "allreduce=mesh shm");
  h.waiting(b, "allreduce #2 (mesh barrier 'arrival'): waiting for rank(s) 1");
  const std::string text = h.format();
  EXPECT_NE(text.find("rank 3 of 4, test (pid "), std::string::npos) << text;
  EXPECT_NE(text.find("last 3 operation(s), oldest first"), std::string::npos) << text;
  EXPECT_NE(text.find("[1] allreduce #1 (1024 x float, sum) | done allreduce=ring tcp"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[2] allreduce #2 (1024 x float, sum) | running allreduce=mesh "
                      "shm since"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("waiting for rank(s) 1"), std::string::npos) << text;
  EXPECT_NE(text.find("[3] allreduce #3 (1024 x float, sum) | queued at"),
            std::string::npos)
      << text;
  h.finished(b, Status(ErrorCode::kTimeout, "rank 0: timed out waiting for rank 1"));
  h.finished(c, Status(ErrorCode::kAborted, "aborted"));  // never started
  const auto records = h.snapshot();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].state, OpState::kFailed);
  EXPECT_NE(records[1].error.find("timed out waiting for rank 1"), std::string::npos);
  EXPECT_EQ(records[2].state, OpState::kFailed);
  EXPECT_NE(h.format().find("| failed allreduce=mesh shm after"), std::string::npos) << h.format();
  EXPECT_NE(h.format().find("last wait: allreduce #2 (mesh barrier"), std::string::npos);
}

TEST(OpHistoryTest, KeepsTheLastOperationsAndAlwaysTheRunningOne) {
  OpHistory h("eviction", 4);
  const auto first = h.queued(allreduce(1));
  h.started(first, allreduce(1), "ring");
  for (std::uint64_t s = 2; s <= 11; ++s) h.queued(allreduce(s));
  EXPECT_EQ(ids(h), (std::vector<std::uint64_t>{1, 9, 10, 11}));
  h.finished(first, Status::Ok());
  // Operation 2 was evicted while queued: it comes back when it starts.
  h.started(2, allreduce(2), "ring");
  EXPECT_EQ(ids(h), (std::vector<std::uint64_t>{2, 9, 10, 11}));
  EXPECT_EQ(h.snapshot()[0].state, OpState::kRunning);
  EXPECT_EQ(h.snapshot()[0].op.seq, 2u);
  // Finished records go first.
  h.finished(2, Status::Ok());
  h.queued(allreduce(12));
  EXPECT_EQ(ids(h), (std::vector<std::uint64_t>{9, 10, 11, 12}));
}

// Operations that start at once (reserve, started, finished) go round the
// slots without a scan; the eviction order stays the one above, and every
// record holds its own operation, a variable-size one's counts included.
TEST(OpHistoryTest, ImmediateOperationsKeepTheNewestAndTheirOwnDescriptions) {
  OpHistory h("immediate", 4);
  auto runNow = [&h](OpDesc op) {
    const std::uint64_t id = h.reserve();
    h.started(id, op, "mesh");
    h.finished(id, Status::Ok());
  };
  for (std::uint64_t s = 1; s <= 10; ++s) {
    OpDesc op = allreduce(s);
    if (s == 7) op.counts = {1, 2, 3};
    runNow(op);
  }
  EXPECT_EQ(ids(h), (std::vector<std::uint64_t>{7, 8, 9, 10}));
  auto records = h.snapshot();
  EXPECT_EQ(records[0].op.counts, (std::vector<std::size_t>{1, 2, 3}));
  for (const auto& r : records) {
    EXPECT_EQ(r.op.seq, r.id);
    if (r.id != 7) {
      EXPECT_TRUE(r.op.counts.empty()) << r.id;
    }
  }
  // A queued operation outlives the finished ones around it.
  const auto queued = h.queued(allreduce(11));
  for (std::uint64_t s = 12; s <= 16; ++s) runNow(allreduce(s));
  EXPECT_EQ(ids(h), (std::vector<std::uint64_t>{queued, 14, 15, 16}));
  records = h.snapshot();
  EXPECT_EQ(records[0].state, OpState::kQueued);
  for (const auto& r : records) EXPECT_EQ(r.op.seq, r.id);
}

TEST(OpHistoryTest, NoteWaitReachesOnlyTheOperationRunningOnThisThread) {
  OpHistory h("waits", 4);
  const auto id = h.queued(allreduce(1));
  h.started(id, allreduce(1), "ring");
  collective::noteWait("outside any scope");
  EXPECT_EQ(h.snapshot()[0].waitingFor, "");
  {
    OpHistory::RunScope scope(&h, id);
    std::thread([] { collective::noteWait("another thread"); }).join();
    EXPECT_EQ(h.snapshot()[0].waitingFor, "");
    collective::noteWait("ring round 2: waiting for rank 3");
    EXPECT_EQ(h.snapshot()[0].waitingFor, "ring round 2: waiting for rank 3");
  }
  collective::noteWait("after the scope");
  EXPECT_EQ(h.snapshot()[0].waitingFor, "ring round 2: waiting for rank 3");
}

// SIGUSR1: the reporter thread prints every live history to stderr, and the
// handler that was there before still runs.
TEST(OpHistoryTest, Sigusr1PrintsEveryLiveHistoryAndChains) {
  ASSERT_TRUE(kOwnHandlerInstalled);
  OpHistory a("first history", 4), b("second history", 4);
  a.started(a.queued(allreduce(7)), allreduce(7), "ring");
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  const int savedStderr = ::dup(2);
  ::dup2(fds[1], 2);
  const int before = gOwnHandlerRuns;
  ::raise(SIGUSR1);
  std::string out;
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < end &&
         out.find("second history") == std::string::npos) {
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n > 0)
      out.append(buf, static_cast<std::size_t>(n));
    else
      std::this_thread::sleep_for(5ms);
  }
  ::dup2(savedStderr, 2);
  ::close(savedStderr);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_NE(out.find("first history (pid"), std::string::npos) << out;
  EXPECT_NE(out.find("[1] allreduce #7"), std::string::npos) << out;
  EXPECT_NE(out.find("running ring"), std::string::npos) << out;
  EXPECT_NE(out.find("second history (pid"), std::string::npos) << out;
  EXPECT_EQ(gOwnHandlerRuns, before + 1);
}

// An operation that times out (rank 1 never joins) fails naming the operation,
// its number, the step and rank 1, and logs the history at error level.
TEST(OpHistoryTest, TimedOutOperationNamesTheLateRankAndLogsTheHistory) {
  RankPool pool(2);
  ASSERT_OK(pool.initStatus());
  Status st;
  ::testing::internal::CaptureStderr();
  pool.run([&](int r) -> std::string {
    if (r == 1) return "";
    void* buf = nullptr;
    (void)runtime::deviceMalloc(&buf, 4096);
    st = pool.comm(0).allReduce(buf, buf, 1024, DataType::kFloat32, ReduceOp::kSum, pool.stream(0));
    if (st.ok()) st = runtime::streamSynchronize(pool.stream(0));
    (void)runtime::deviceFree(buf);
    return "";
  });
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_ERROR(st, kTimeout, "rank 0: allreduce #1 (1024 x float,");
  EXPECT_NE(st.message().find("COHORT_EXEC_TIMEOUT is 2 s"), std::string::npos) << st.toString();
  const std::string tail = st.message().substr(st.message().find("waiting for"));
  EXPECT_TRUE(tail.find("rank(s) 1") != std::string::npos ||
              tail.find("rank 1 (") != std::string::npos)
      << st.toString();
  EXPECT_NE(log.find("rank 0 of 2, communicator 'all' (device 0) (pid"), std::string::npos) << log;
  EXPECT_NE(log.find("| failed allreduce="), std::string::npos) << log;
  EXPECT_NE(log.find("last wait: allreduce #1"), std::string::npos) << log;
}

// A communicator's own exec timeout (CommOptions::execTimeoutMs: what a framework's
// per-group timeout becomes) replaces COHORT_EXEC_TIMEOUT (2 s here) for its operations,
// and its error says which limit it was.
TEST(OpHistoryTest, ACommunicatorsOwnExecTimeoutIsTheLimit) {
  UniqueId id;
  ASSERT_OK(Communicator::getUniqueId(&id));
  std::unique_ptr<Communicator> comms[2];
  Status inits[2];
  std::thread joins[2];
  for (int r = 0; r < 2; ++r) {
    joins[r] = std::thread([&, r] {
      inits[r] = runtime::setDevice(r);
      CommOptions options;
      options.execTimeoutMs = 700;
      if (inits[r].ok()) inits[r] = Communicator::initRank(id, 2, r, &comms[r], options);
    });
  }
  for (auto& t : joins) t.join();
  ASSERT_OK(inits[0]);
  ASSERT_OK(inits[1]);
  ASSERT_OK(runtime::setDevice(0));
  runtime::Stream* stream = nullptr;
  ASSERT_OK(runtime::streamCreate(&stream));
  void* buf = nullptr;
  ASSERT_OK(runtime::deviceMalloc(&buf, 4096));
  // Rank 1 never joins.
  Status st = comms[0]->allReduce(buf, buf, 1024, DataType::kFloat32, ReduceOp::kSum, stream);
  if (st.ok()) st = runtime::streamSynchronize(stream);
  EXPECT_ERROR(st, kTimeout, "rank 0: allreduce #1 (1024 x float,");
  EXPECT_NE(st.message().find("the communicator's exec timeout is 700 ms"), std::string::npos)
      << st.toString();
  EXPECT_EQ(st.message().find("COHORT_EXEC_TIMEOUT"), std::string::npos) << st.toString();
  (void)runtime::deviceFree(buf);
  (void)runtime::streamDestroy(stream);
  for (auto& c : comms) (void)Communicator::destroy(std::move(c), /*abortPending=*/true);
}

}  // namespace
}  // namespace cohort::testing
