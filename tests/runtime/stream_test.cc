#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cohort/runtime.h"
#include "common/wait.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

class StreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(setDevice(0));
    ASSERT_OK(streamCreate(&stream_));
  }
  void TearDown() override {
    ASSERT_OK(streamDestroy(stream_));
    ASSERT_OK(resetDevice(0));
  }
  Stream* stream_ = nullptr;
};

TEST_F(StreamTest, TasksRunInOrderOnTheStreamsDevice) {
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(launchKernel(stream_, [&order, i](Stream* s) {
      int device = -1;
      EXPECT_OK(getDevice(&device));
      EXPECT_EQ(device, 0);
      order.push_back(i);
      return Status::Ok();
    }));
  }
  ASSERT_OK(streamSynchronize(stream_));
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST_F(StreamTest, ALaunchSaysWhereItsTaskLanded) {
  StreamDescription d;
  ASSERT_OK(streamDescribe(stream_, &d));
  const auto noop = [](Stream*) { return Status::Ok(); };
  TaskPlace first, second, third;
  ASSERT_OK(launchKernel(stream_, noop, &first));
  EXPECT_EQ(first.device, d.device);
  EXPECT_EQ(first.streamId, d.id);
  ASSERT_OK(launchKernel(stream_, noop, &second));
  EXPECT_EQ(second.taskIndex, first.taskIndex + 1);
  // Any other task between two launches shows as a gap, whatever queued it.
  Event* event = nullptr;
  ASSERT_OK(eventCreate(&event));
  ASSERT_OK(eventRecord(event, stream_));
  ASSERT_OK(launchKernel(stream_, noop, &third));
  EXPECT_EQ(third.taskIndex, second.taskIndex + 2);
  std::uint64_t enqueued = 0, completed = 0;
  ASSERT_OK(streamProgress(stream_, &enqueued, &completed));
  EXPECT_EQ(enqueued, third.taskIndex + 1);
  // The default stream (null) is named as streamDescribe names it.
  StreamDescription dd;
  ASSERT_OK(streamDescribe(nullptr, &dd));
  TaskPlace onDefault;
  ASSERT_OK(launchKernel(nullptr, noop, &onDefault));
  EXPECT_EQ(onDefault.streamId, dd.id);
  EXPECT_NE(onDefault.streamId, first.streamId);
  ASSERT_OK(streamSynchronize(stream_));
  ASSERT_OK(streamSynchronize(nullptr));
  ASSERT_OK(eventDestroy(event));
}

TEST_F(StreamTest, AsyncCopiesAndKernelsAreOrdered) {
  constexpr std::size_t n = 1 << 16;
  void *d = nullptr, *h = nullptr;
  ASSERT_OK(deviceMalloc(&d, n * sizeof(int)));
  ASSERT_OK(hostMalloc(&h, n * sizeof(int)));
  auto* host = static_cast<int*>(h);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i);
  ASSERT_OK(memcpyAsync(d, n * sizeof(int), h, n * sizeof(int), MemcpyKind::kHostToDevice, stream_));
  ASSERT_OK(launchKernel(stream_, [d](Stream*) {
    auto* x = static_cast<int*>(d);
    for (std::size_t i = 0; i < n; ++i) x[i] = x[i] * 2 + 1;
    return Status::Ok();
  }));
  ASSERT_OK(memsetAsync(h, n * sizeof(int), 0, n * sizeof(int), stream_));
  ASSERT_OK(memcpyAsync(h, n * sizeof(int), d, n * sizeof(int), MemcpyKind::kDeviceToHost, stream_));
  ASSERT_OK(streamSynchronize(stream_));
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], static_cast<int>(2 * i + 1)) << i;
  ASSERT_OK(deviceFree(d));
  ASSERT_OK(hostFree(h));
}

TEST_F(StreamTest, AsyncArgumentErrorsAreImmediateNotSticky) {
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&d, 64));
  std::vector<char> host(128);
  EXPECT_ERROR(memcpyAsync(d, 64, host.data(), 128, MemcpyKind::kHostToDevice, stream_),
               kSizeOverflow, "destMax");
  EXPECT_ERROR(memsetAsync(d, 128, 0, 128, stream_), kSizeOverflow, "overrun");
  ASSERT_OK(streamSynchronize(stream_));  // the stream itself is fine
  ASSERT_OK(deviceFree(d));
}

TEST_F(StreamTest, AFailedTaskIsStickyAndLaterTasksAreSkipped) {
  std::atomic<bool> laterRan{false};
  ASSERT_OK(launchKernel(stream_, [](Stream*) {
    return Status(ErrorCode::kInternal, "kernel exploded");
  }));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    laterRan = true;
    return Status::Ok();
  }));
  EXPECT_ERROR(streamSynchronize(stream_), kInternal, "kernel exploded");
  EXPECT_ERROR(streamQuery(stream_), kInternal, "kernel exploded");
  EXPECT_ERROR(streamSynchronize(stream_), kInternal, "kernel exploded");  // sticky
  EXPECT_FALSE(laterRan.load());
  ASSERT_OK(streamClearError(stream_));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    laterRan = true;
    return Status::Ok();
  }));
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_TRUE(laterRan.load());
}

TEST_F(StreamTest, AnExceptionInAKernelFailsTheStream) {
  ASSERT_OK(launchKernel(stream_, [](Stream*) -> Status { throw std::runtime_error("boom"); }));
  EXPECT_ERROR(streamSynchronize(stream_), kTaskFailed, "threw: boom");
}

TEST_F(StreamTest, SynchronizeTimesOutAndQueryReportsPending) {
  std::atomic<bool> release{false};
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::Ok();
  }));
  EXPECT_ERROR(streamQuery(stream_), kNotReady, "pending");
  EXPECT_ERROR(streamSynchronize(stream_, 30), kTimeout, "1 task(s) pending");
  EXPECT_ERROR(streamSynchronize(stream_, 0), kTimeout, "timed out");
  release = true;
  ASSERT_OK(streamSynchronize(stream_, 5000));
  ASSERT_OK(streamQuery(stream_));
}

TEST_F(StreamTest, DestroyWaitsForQueuedWork) {
  Stream* s = nullptr;
  ASSERT_OK(streamCreate(&s));
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK(launchKernel(s, [&](Stream*) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ran++;
      return Status::Ok();
    }));
  }
  ASSERT_OK(streamDestroy(s));
  EXPECT_EQ(ran.load(), 5);
  EXPECT_ERROR(streamSynchronize(s), kInvalidHandle, "not a live stream");
  EXPECT_ERROR(launchKernel(s, [](Stream*) { return Status::Ok(); }), kInvalidHandle, "live stream");
  EXPECT_ERROR(streamDestroy(s), kInvalidHandle, "not a live stream");
}

TEST_F(StreamTest, TheDefaultStreamIsNullAndCannotBeDestroyed) {
  std::atomic<bool> ran{false};
  ASSERT_OK(launchKernel(nullptr, [&](Stream*) {
    ran = true;
    return Status::Ok();
  }));
  ASSERT_OK(streamSynchronize(nullptr));
  EXPECT_TRUE(ran.load());
  EXPECT_ERROR(streamDestroy(nullptr), kInvalidHandle, "not a live stream");
  int device = -1;
  ASSERT_OK(streamGetDevice(stream_, &device));
  EXPECT_EQ(device, 0);
}

TEST_F(StreamTest, StreamsOfOneDeviceRunConcurrently) {
  // Each kernel waits for the other to start: only concurrent streams finish.
  Stream* other = nullptr;
  ASSERT_OK(streamCreate(&other));
  std::atomic<int> started{0};
  auto kernel = [&](Stream*) {
    started++;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Status(ErrorCode::kTimeout, "the other stream never started");
      }
      std::this_thread::yield();
    }
    return Status::Ok();
  };
  ASSERT_OK(launchKernel(stream_, kernel));
  ASSERT_OK(launchKernel(other, kernel));
  ASSERT_OK(streamSynchronize(stream_));
  ASSERT_OK(streamSynchronize(other));
  ASSERT_OK(streamDestroy(other));
}

TEST_F(StreamTest, BlockingCallbacksHoldTheStreamNonBlockingOnesDoNot) {
  std::atomic<int> step{0};
  ASSERT_OK(launchCallback(stream_, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    step = 1;
  }, CallbackMode::kBlocking));
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    EXPECT_EQ(step.load(), 1);  // ran after the blocking callback finished
    return Status::Ok();
  }));
  std::atomic<bool> release{false};
  std::atomic<bool> callbackDone{false};
  ASSERT_OK(launchCallback(stream_, [&] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    callbackDone = true;
  }, CallbackMode::kNonBlocking));
  // The stream goes on while the non-blocking callback is still waiting.
  ASSERT_OK(streamSynchronize(stream_, 10000));
  EXPECT_FALSE(callbackDone.load());
  release = true;
  for (int i = 0; i < 10000 && !callbackDone.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(callbackDone.load());
}

// Named so that top -H, perf and gdb tell a stream's worker (device, stream)
// and the callback thread from the program's own threads.
std::string threadName() {
  char name[16] = {};
  EXPECT_EQ(pthread_getname_np(pthread_self(), name, sizeof name), 0);
  return name;
}

TEST_F(StreamTest, WorkerThreadsCarryTheirDeviceAndStream) {
  Stream* other = nullptr;
  ASSERT_OK(streamCreate(&other));
  std::string mine, theirs, fallback, callback;
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    mine = threadName();
    return Status::Ok();
  }));
  ASSERT_OK(launchKernel(other, [&](Stream*) {
    theirs = threadName();
    return Status::Ok();
  }));
  ASSERT_OK(launchKernel(nullptr, [&](Stream*) {
    fallback = threadName();
    return Status::Ok();
  }));
  std::atomic<bool> called{false};
  ASSERT_OK(launchCallback(
      stream_,
      [&] {
        callback = threadName();
        called = true;
      },
      CallbackMode::kNonBlocking));
  // With a timeout a synchronize only waits (without one, it may run the kernels
  // on this thread: SynchronizeRunsTheKernelsAtTheFrontOnTheWaitingThread).
  ASSERT_OK(streamSynchronize(stream_, 60000));
  ASSERT_OK(streamSynchronize(other, 60000));
  ASSERT_OK(streamSynchronize(nullptr, 60000));
  for (int i = 0; i < 10000 && !called.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(called.load());
  for (const std::string* name : {&mine, &theirs, &fallback}) {
    EXPECT_EQ(name->rfind("cohort d0 s", 0), 0u) << *name;
  }
  // One name per stream: the default stream's too.
  EXPECT_NE(mine, theirs);
  EXPECT_NE(mine, fallback);
  EXPECT_NE(theirs, fallback);
  EXPECT_EQ(callback, "cohort callback");
  EXPECT_NE(threadName().rfind("cohort", 0), 0u) << "the test's own thread is not renamed";
  ASSERT_OK(streamDestroy(other));
}

// A synchronize without a timeout runs the host kernels at the queue's front on
// its own thread while the worker has not taken them (the worker, asleep, takes
// a while to wake): in order, one at a time, with the stream's device current,
// and the thread's own device back afterwards. Rounds apart let the worker fall
// asleep; most rounds run on the caller, and a broken help would run none.
TEST_F(StreamTest, SynchronizeRunsTheKernelsAtTheFrontOnTheWaitingThread) {
  int devices = 0;
  ASSERT_OK(getDeviceCount(&devices));
  if (devices < 2) GTEST_SKIP() << "needs two devices";
  const std::thread::id self = std::this_thread::get_id();
  // The waiting thread's own device is another one (set once: setDevice counts
  // references, which resetDevice gives back).
  ASSERT_OK(setDevice(1));
  int onCaller = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<int> order;
    std::vector<int> deviceSeen;
    std::vector<bool> here;
    std::atomic<int> inside{0};
    bool overlapped = false;
    for (int i = 0; i < 4; ++i) {
      ASSERT_OK(launchKernel(stream_, [&, i](Stream*) {
        overlapped = overlapped || inside.fetch_add(1) != 0;
        int device = -1;
        EXPECT_OK(getDevice(&device));
        deviceSeen.push_back(device);
        here.push_back(std::this_thread::get_id() == self);
        order.push_back(i);
        inside.fetch_sub(1);
        return Status::Ok();
      }));
    }
    ASSERT_OK(streamSynchronize(stream_));
    int device = -1;
    ASSERT_OK(getDevice(&device));
    EXPECT_EQ(device, 1) << "round " << round;
    ASSERT_EQ(order, (std::vector<int>{0, 1, 2, 3})) << "round " << round;
    EXPECT_EQ(deviceSeen, (std::vector<int>{0, 0, 0, 0})) << "round " << round;
    EXPECT_FALSE(overlapped) << "round " << round;
    if (here.back()) ++onCaller;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_OK(resetDevice(1));
  EXPECT_GT(onCaller, 0) << "no kernel ran on the synchronizing thread in 20 rounds";
}

// A synchronize with a timeout only waits: a task running on the caller could
// outlast the timeout, which must be kept.
TEST_F(StreamTest, ASynchronizeWithATimeoutOnlyWaits) {
  const std::thread::id self = std::this_thread::get_id();
  int onCaller = 0;
  for (int round = 0; round < 10; ++round) {
    bool here = false;
    ASSERT_OK(launchKernel(stream_, [&](Stream*) {
      here = std::this_thread::get_id() == self;
      return Status::Ok();
    }));
    ASSERT_OK(streamSynchronize(stream_, 60000));
    if (here) ++onCaller;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(onCaller, 0);
}

// Two threads synchronizing a stream while a third queues kernels: each kernel
// runs once, in queueing order, never two at a time.
TEST_F(StreamTest, HelpingThreadsRunEachTaskOnceInOrder) {
  constexpr int kTasks = 3000;
  std::vector<int> order;
  order.reserve(kTasks);
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false}, queued{false};
  auto waiter = [&] {
    while (!queued.load()) EXPECT_OK(streamSynchronize(stream_));
    EXPECT_OK(streamSynchronize(stream_));
  };
  std::thread a(waiter), b(waiter);
  for (int i = 0; i < kTasks; ++i) {
    // EXPECT: the waiters stop only once `queued` is set.
    EXPECT_OK(launchKernel(stream_, [&, i](Stream*) {
      if (inside.fetch_add(1) != 0) overlapped = true;
      order.push_back(i);
      inside.fetch_sub(1);
      return Status::Ok();
    }));
  }
  queued = true;
  a.join();
  b.join();
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_FALSE(overlapped.load());
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(order[i], i);
}

// A kernel counts as this process's compute while it runs (common/wait.h): a
// wait whose yield lost its processor to it goes on yielding instead of
// polling, which would take processor time from the kernel. Both threads share
// one processor, as the ranks bound by cohortrun do.
TEST_F(StreamTest, AWaitSharingItsProcessorWithAKernelKeepsYielding) {
  EXPECT_FALSE(computeRunning());
  // A poll window this thread opened earlier would read as a result here.
  for (int i = 0; i < 100 && yieldProcessorPolls(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(yieldProcessorPolls());
  cpu_set_t one;
  CPU_ZERO(&one);
  const int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  CPU_SET(cpu, &one);
  std::atomic<bool> stop{false}, started{false}, sawItself{false};
  ASSERT_OK(launchKernel(stream_, [&](Stream*) {
    EXPECT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    sawItself = computeRunning();
    started = true;
    while (!stop.load(std::memory_order_relaxed)) {
    }
    return Status::Ok();
  }));
  cpu_set_t saved;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
  while (!started.load()) yieldProcessor(false);
  // A hog outside the process makes the waits poll within a few yields
  // (YieldCheckTest.AThreadSharingItsProcessorWithABusyOneStopsYielding).
  bool polled = false;
  for (int i = 0; i < 50 && !polled; ++i) {
    yieldProcessor(true);
    polled = yieldProcessorPolls();
  }
  stop = true;
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
  ASSERT_OK(streamSynchronize(stream_));
  EXPECT_TRUE(sawItself.load());
  EXPECT_FALSE(polled) << "a yield that ran this process's kernel was taken for a hog";
  EXPECT_FALSE(computeRunning()) << "the kernel ended";
}

TEST_F(StreamTest, BadArguments) {
  EXPECT_ERROR(launchKernel(stream_, nullptr), kInvalidArgument, "empty kernel");
  EXPECT_ERROR(launchCallback(stream_, nullptr, CallbackMode::kBlocking), kInvalidArgument,
               "empty callback");
  EXPECT_ERROR(streamCreate(nullptr), kInvalidArgument, "null");
  int bogus = 0;
  EXPECT_ERROR(streamQuery(reinterpret_cast<Stream*>(&bogus)), kInvalidHandle, "live stream");
}

TEST(StreamNoDeviceTest, DefaultStreamNeedsACurrentDevice) {
  EXPECT_ERROR(streamSynchronize(nullptr), kInvalidDevice, "setDevice");
  Stream* s = nullptr;
  EXPECT_ERROR(streamCreate(&s), kInvalidDevice, "setDevice");
}

}  // namespace
}  // namespace cohort::runtime
