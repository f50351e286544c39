// How calls launch between ranks that are threads of one process: with
// CommOptions::threadPerRank (what RankPool uses) as they do between processes,
// posted or inline; without it always on the communicator's stream; and a group
// over several communicators from one thread always on their streams.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "collective/rank_pool.h"
#include "common/config.h"
#include "runtime/hooks.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

using Comms = std::vector<std::unique_ptr<Communicator>>;

std::vector<float> rankValues(int r, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((r + 1) * (i % 101));
  return v;
}

// Every element of a sum over `ranks` ranks of rankValues.
std::string checkSum(const std::vector<float>& got, int ranks) {
  const float scale = static_cast<float>(ranks * (ranks + 1) / 2);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want = scale * static_cast<float>(i % 101);
    if (got[i] != want) {
      return "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", not " +
             std::to_string(want);
    }
  }
  return "";
}

// What the caller's stream holds right after a call: deferred completions (a
// posted call) and tasks not yet run (a call handed to the worker, which the
// stream waits for).
struct Held {
  std::size_t deferred = 0;
  std::uint64_t tasksAdded = 0;
};

std::string callAndLook(Communicator& comm, int r, std::size_t n, runtime::Stream* s, Held* held) {
  std::uint64_t before = 0, after = 0, done = 0;
  Status st = runtime::streamTaskProgress(s, &before, &done);
  const std::vector<float> in = rankValues(r, n);
  std::vector<float> out(n, -1);
  if (st.ok()) st = comm.allReduce(in.data(), out.data(), n, DataType::kFloat32, ReduceOp::kSum, s);
  if (st.ok()) st = runtime::streamDeferredCount(s, &held->deferred);
  if (st.ok()) st = runtime::streamTaskProgress(s, &after, &done);
  held->tasksAdded = after - before;
  if (st.ok()) st = runtime::streamSynchronize(s);
  if (!st.ok()) return st.toString();
  return checkSum(out, comm.size());
}

// Runs fn(rank, its communicator, a stream of its device) on a thread per rank of
// `comms`; returns each rank's failure ("" if none).
std::vector<std::string> onThreads(
    const Comms& comms,
    const std::function<std::string(int, Communicator&, runtime::Stream*)>& fn) {
  std::vector<std::string> results(comms.size());
  std::vector<std::thread> ranks;
  for (int r = 0; r < static_cast<int>(comms.size()); ++r) {
    ranks.emplace_back([&, r] {
      const auto i = static_cast<std::size_t>(r);
      runtime::Stream* s = nullptr;
      Status st = runtime::setDevice(r);
      if (st.ok()) st = runtime::streamCreate(&s);
      if (!st.ok()) {
        results[i] = st.toString();
        return;
      }
      results[i] = fn(r, *comms[i], s);
      (void)runtime::streamDestroy(s);
    });
  }
  for (auto& t : ranks) t.join();
  return results;
}

// Rank 1 comes 100 ms late to each call, so rank 0's launch shows: a posted call
// returns before rank 1 came, leaving its completion on the stream; an inline one
// returns when it is done, leaving nothing there.
TEST(LaunchModeTest, ThreadPerRankPostsSmallCallsAndRunsLargerOnesInline) {
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  const auto results = pool.run([&](int r) -> std::string {
    runtime::Stream* s = pool.stream(r);
    std::string failures;  // every call is made on both ranks, whatever fails
    for (const std::size_t n : {std::size_t{7}, std::size_t{64} << 10}) {
      if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      Held held;
      const std::string err = callAndLook(pool.comm(r), r, n, s, &held);
      // 7 floats: the mesh stages it, posted. 64 Ki: above the staged size,
      // small enough to run on the caller.
      const bool posted = n == 7;
      if (!err.empty()) {
        failures += std::to_string(n) + " floats: " + err + "; ";
      } else if (r == 0 && (held.deferred != (posted ? 1u : 0u) || held.tasksAdded != 0)) {
        failures += std::to_string(n) + " floats: not " + (posted ? "posted" : "inline") + " (" +
                    std::to_string(held.deferred) + " deferred, " +
                    std::to_string(held.tasksAdded) + " tasks); ";
      }
    }
    return failures;
  });
  EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results);
}

TEST(LaunchModeTest, WithoutThreadPerRankEveryCallTakesTheStream) {
  Comms comms;
  ASSERT_OK(Communicator::initAll({0, 1}, &comms));
  const auto results = onThreads(comms, [](int r, Communicator& comm, runtime::Stream* s) {
    Held held;
    std::string err = callAndLook(comm, r, 7, s, &held);
    if (err.empty() && (held.deferred != 0 || held.tasksAdded == 0)) {
      err = "not on the communicator's stream (" + std::to_string(held.deferred) + " deferred, " +
            std::to_string(held.tasksAdded) + " tasks)";
    }
    return err;
  });
  EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results);
}

// One thread launches a group over both ranks' communicators, on each rank's
// device: a call that ran on this thread would wait for the other rank, which
// this thread launches next (until the exec timeout, 3 s here).
TEST(LaunchModeTest, AGroupOverSeveralCommunicatorsFromOneThreadTakesTheirStreams) {
  CommOptions options;
  options.threadPerRank = true;
  options.execTimeoutMs = 3000;
  Comms comms;
  ASSERT_OK(Communicator::initAll({0, 1}, &comms, options));
  constexpr std::size_t kCount = 64 << 10;  // would run inline, as in the test above
  std::vector<runtime::Stream*> streams(2);
  std::vector<std::vector<float>> in, out;
  for (int r = 0; r < 2; ++r) {
    ASSERT_OK(runtime::setDevice(r));
    ASSERT_OK(runtime::streamCreate(&streams[static_cast<std::size_t>(r)]));
    in.push_back(rankValues(r, kCount));
    out.emplace_back(kCount, -1.0f);
  }
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK(Communicator::groupStart());
    for (int r = 0; r < 2; ++r) {
      const auto i = static_cast<std::size_t>(r);
      ASSERT_OK(runtime::setDevice(r));
      ASSERT_OK(comms[i]->allReduce(in[i].data(), out[i].data(), kCount, DataType::kFloat32,
                                    ReduceOp::kSum, streams[i]));
    }
    ASSERT_OK(runtime::setDevice(0));  // the first call's device: it could run here
    ASSERT_OK(Communicator::groupEnd());
    for (int r = 0; r < 2; ++r) {
      const auto i = static_cast<std::size_t>(r);
      ASSERT_OK(runtime::setDevice(r));
      ASSERT_OK(runtime::streamSynchronize(streams[i]));
      EXPECT_EQ(checkSum(out[i], 2), "") << "rank " << r << ", round " << round;
      std::fill(out[i].begin(), out[i].end(), -1.0f);
    }
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_OK(runtime::setDevice(r));
    EXPECT_OK(runtime::streamDestroy(streams[static_cast<std::size_t>(r)]));
  }
}

// COHORT_THREAD_PER_RANK=1 does for initAll without options (HcclCommInitAll)
// what the option does. Runs as its own ctest test, collective.launch_mode.env.
TEST(LaunchModeEnvTest, TheEnvironmentMakesInitAllThreadPerRank) {
  if (!Config::global().threadPerRank) {
    GTEST_SKIP() << "needs COHORT_THREAD_PER_RANK=1 (ctest runs it as collective.launch_mode.env)";
  }
  Comms comms;
  ASSERT_OK(Communicator::initAll({0, 1}, &comms));
  const auto results = onThreads(comms, [](int r, Communicator& comm, runtime::Stream* s) {
    if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Held held;
    std::string err = callAndLook(comm, r, 7, s, &held);
    if (err.empty() && r == 0 && (held.deferred != 1 || held.tasksAdded != 0)) {
      err = "not posted (" + std::to_string(held.deferred) + " deferred, " +
            std::to_string(held.tasksAdded) + " tasks)";
    }
    return err;
  });
  EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results);
}

}  // namespace
}  // namespace cohort::testing
