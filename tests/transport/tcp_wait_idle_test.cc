// waitIdle over fake connections: it returns when idle, sleeps on the wait hints
// (a WaitWord or a descriptor) instead of spinning, and fails with the pending
// peers and the caller's description on a deadline or a connection error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <regex>
#include <string>
#include <thread>

#include "test_util.h"
#include "transport/connection.h"

namespace cohort::transport {
namespace {

using namespace std::chrono_literals;

// Sends complete when the test calls finish(). Progress is counted.
class FakeConnection : public Connection {
 public:
  explicit FakeConnection(int peer) : peer_(peer) {}
  int peer() const override { return peer_; }
  const char* kind() const override { return "fake"; }
  std::string describe() const override { return "fake-" + std::to_string(peer_); }
  Status postSend(const void*, std::size_t) override {
    ++posted_;
    return Status::Ok();
  }
  Status postRecv(void*, std::size_t, const Reduction*, const void*) override {
    return Status::Ok();
  }
  Status progress() override {
    ++progressCalls;
    return error;
  }
  std::uint64_t sendsPosted() const override { return posted_; }
  std::uint64_t sendsCompleted() const override { return completed_.load(); }
  std::uint64_t recvsPosted() const override { return 0; }
  std::uint64_t recvsCompleted() const override { return 0; }
  WaitHint waitHint() override {
    WaitHint h;
    h.fd = fd;
    h.word = word;
    if (word != nullptr) h.snapshot = word->snapshot();
    return h;
  }
  void finish() { completed_.store(posted_); }

  std::atomic<long> progressCalls{0};
  Status error;
  int fd = -1;
  WaitWord* word = nullptr;

 private:
  const int peer_;
  std::uint64_t posted_ = 0;
  std::atomic<std::uint64_t> completed_{0};
};

Status waitOn(std::vector<Connection*> conns, long ms, const std::string& what = "test") {
  return waitIdle(conns.data(), conns.size(), Deadline::afterMs(ms), what);
}

// A thread that runs `finish` about 200 ms into a wait on `c`, and counts into *sleepCalls the
// progress calls of the 150 ms before. From 50 ms after the wait's first progress call on, the
// spin and yield stages (COHORT_WAIT_YIELD_US, 5 ms by default) are over, so these are the
// sleep stage's alone: sleeping on the hints makes at most one call per 2 ms slice (~75), a
// wait that spins or yields instead 10^5-10^6. The whole wait's count would include the yield
// stage's sched_yield() calls, as many as the machine is fast.
std::thread finishLater(FakeConnection* c, long* sleepCalls, std::function<void()> finish) {
  return std::thread([c, finish = std::move(finish), sleepCalls] {
    const auto giveUp = Clock::now() + 10s;
    while (c->progressCalls.load() == 0 && Clock::now() < giveUp) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);
    const long before = c->progressCalls.load();
    std::this_thread::sleep_for(150ms);
    *sleepCalls = c->progressCalls.load() - before;
    finish();
  });
}

TEST(WaitIdle, IdleConnectionsReturnAtOnce) {
  FakeConnection a(1), b(2);
  EXPECT_OK(waitOn({&a, &b}, 0));
  EXPECT_EQ(a.progressCalls.load(), 0);  // nothing was pending, nothing progressed
}

TEST(WaitIdle, SleepsOnTheWaitWordUntilNotified) {
  FakeConnection c(1);
  WaitWord word;
  c.word = &word;
  ASSERT_OK(c.postSend(nullptr, 0));
  long sleepCalls = -1;
  std::thread finisher = finishLater(&c, &sleepCalls, [&] {
    c.finish();
    word.notifyAll();
  });
  const auto t0 = Clock::now();
  EXPECT_OK(waitOn({&c}, 5000));
  finisher.join();
  EXPECT_LT(Clock::now() - t0, 2s);
  EXPECT_GE(sleepCalls, 0);
  EXPECT_LT(sleepCalls, 1000);
}

TEST(WaitIdle, PollsTheDescriptorUntilReadable) {
  FakeConnection c(1);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  c.fd = fds[0];
  ASSERT_OK(c.postSend(nullptr, 0));
  long sleepCalls = -1;
  std::thread finisher = finishLater(&c, &sleepCalls, [&] {
    c.finish();
    const char x = 1;
    EXPECT_EQ(::write(fds[1], &x, 1), 1);
  });
  EXPECT_OK(waitOn({&c}, 5000));
  finisher.join();
  EXPECT_GE(sleepCalls, 0);
  EXPECT_LT(sleepCalls, 1000);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(WaitIdle, TimeoutNamesPendingPeersAndTheStep) {
  FakeConnection done(1), stuck(3);
  ASSERT_OK(stuck.postSend(nullptr, 0));
  const Status s = waitOn({&done, &stuck}, 100, "allreduce step 2");
  EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.toString();
  // The time is the one measured (0.1 s unless the machine was slow to wake the wait).
  std::smatch m;
  const std::string message = s.message();
  static const std::regex kText(
      R"(allreduce step 2: timed out after (\d+\.\d) s waiting for rank 3)");
  ASSERT_TRUE(std::regex_search(message, m, kText)) << s.toString();
  EXPECT_GE(std::stod(m[1]), 0.1) << s.toString();
  EXPECT_LT(std::stod(m[1]), 2.0) << s.toString();
  EXPECT_ERROR(s, kTimeout, "fake fake-3: 1 of 1 sends, 0 of 0 receives pending");
  EXPECT_EQ(s.message().find("rank 1"), std::string::npos) << s.toString();
}

TEST(WaitIdle, ConnectionErrorsCarryTheStep) {
  FakeConnection c(2);
  c.error = Status(ErrorCode::kRemoteError, "connection to rank 2 closed");
  ASSERT_OK(c.postSend(nullptr, 0));
  EXPECT_ERROR(waitOn({&c}, 1000, "broadcast chunk 7"), kRemoteError,
               "broadcast chunk 7: connection to rank 2 closed");
}

TEST(WaitIdle, AbortFlagEndsTheWait) {
  FakeConnection c(4);
  WaitWord word;
  c.word = &word;
  ASSERT_OK(c.postSend(nullptr, 0));
  std::atomic<bool> abort{false};
  WaitControl control;
  control.abort = &abort;
  std::thread aborter([&] {
    std::this_thread::sleep_for(100ms);
    abort.store(true);
  });
  const auto t0 = Clock::now();
  Connection* conns[] = {&c};
  const Status s = waitIdle(conns, 1, Deadline::afterMs(10000), "allgather step 1", control);
  aborter.join();
  EXPECT_LT(Clock::now() - t0, 2s);
  EXPECT_ERROR(s, kAborted, "allgather step 1: aborted on this rank while waiting for rank 4");
}

// A peer that died while the wait awaits another (checkPeers): the wait ends with
// the check's error, naming the step, though its own connection never fails.
TEST(WaitIdle, APeerCheckThatFailsEndsTheWait) {
  FakeConnection c(4);
  WaitWord word;
  c.word = &word;
  ASSERT_OK(c.postSend(nullptr, 0));
  int checks = 0;
  WaitControl control;
  control.checkPeers = [&] {
    return ++checks < 3 ? Status::Ok() : Status(ErrorCode::kRemoteError, "rank 6 died");
  };
  Connection* conns[] = {&c};
  EXPECT_ERROR(waitIdle(conns, 1, Deadline::afterMs(10000), "allgather step 2", control),
               kRemoteError, "allgather step 2: rank 6 died");
  EXPECT_EQ(checks, 3);
}

TEST(WaitIdle, SlowWaitsAreReported) {
  FakeConnection c(5);
  ASSERT_OK(c.postSend(nullptr, 0));
  std::vector<std::string> reports;
  WaitControl control;
  control.onSlow = [&](const std::string& what, const std::string& pending) {
    reports.push_back(what + " | " + pending);
  };
  Connection* conns[] = {&c};
  EXPECT_ERROR(waitIdle(conns, 1, Deadline::afterMs(1500), "reduce step 9", control), kTimeout,
               "reduce step 9");
  ASSERT_GE(reports.size(), 2u);  // at 200 ms, then every second
  EXPECT_LE(reports.size(), 3u);
  EXPECT_NE(reports[0].find("reduce step 9 | rank 5 (fake fake-5: 1 of 1 sends"), std::string::npos)
      << reports[0];
}

// A label given as a callable is made only when a failure or a slow wait needs
// it: never on a wait that ends well, once per use on one that fails.
TEST(WaitIdle, ALazyLabelIsMadeOnlyWhenNeeded) {
  int made = 0;
  const auto label = [&] {
    ++made;
    return std::string("broadcast #7 (tree round 1)");
  };
  FakeConnection done(3);
  Connection* idle[] = {&done};
  EXPECT_OK(waitIdle(idle, 1, Deadline::afterMs(1000), label));
  EXPECT_EQ(made, 0);
  FakeConnection late(6);
  ASSERT_OK(late.postSend(nullptr, 0));
  Connection* pending[] = {&late};
  EXPECT_ERROR(waitIdle(pending, 1, Deadline::afterMs(50), label), kTimeout,
               "broadcast #7 (tree round 1): timed out after");
  EXPECT_EQ(made, 1);
}

// stopEarly is asked when an operation completes: the wait then returns Ok with
// the other operation still pending; without a completion it is never asked.
TEST(WaitIdle, StopEarlyEndsTheWaitAfterACompletion) {
  FakeConnection first(1), second(2);
  ASSERT_OK(first.postSend(nullptr, 0));
  ASSERT_OK(second.postSend(nullptr, 0));
  std::atomic<int> asked{0};
  WaitControl control;
  control.stopEarly = [&] {
    ++asked;
    return first.idle();
  };
  std::thread finisher([&] {
    std::this_thread::sleep_for(100ms);
    first.finish();
  });
  Connection* conns[] = {&first, &second};
  const auto t0 = Clock::now();
  const Status s = waitIdle(conns, 2, Deadline::afterMs(10000), "argument check", control);
  finisher.join();
  ASSERT_OK(s);
  EXPECT_LT(Clock::now() - t0, 5s);
  EXPECT_FALSE(second.idle());
  EXPECT_GE(asked.load(), 1);
  // Nothing completes: the wait runs into its deadline without asking.
  asked = 0;
  Connection* pending[] = {&second};
  EXPECT_ERROR(waitIdle(pending, 1, Deadline::afterMs(300), "argument check", control), kTimeout,
               "argument check");
  EXPECT_EQ(asked.load(), 0);
}

}  // namespace
}  // namespace cohort::transport
