// Host functions: on the runtime's thread when nobody subscribed the stream, in the
// subscribed thread (aclrtProcessHostFunc) when someone did; later tasks wait.
#include <pthread.h>

#include <atomic>
#include <thread>
#include <vector>

#include "acl_stream_family_util.h"

namespace cohort::acltest {
namespace {

using AclHostFuncTest = AclDevice0Test;

struct Call {
  std::atomic<int> runs{0};
  std::atomic<pthread_t> thread{};
  static void fn(void* args) {
    auto* c = static_cast<Call*>(args);
    c->thread = pthread_self();
    sleepMs(20);  // later tasks of the stream must wait for this
    c->runs.fetch_add(1);
  }
};

TEST_F(AclHostFuncTest, WithoutASubscriberItRunsOnTheRuntimesThreadInStreamOrder) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  Call call;
  OrderLog log;
  log.mark(stream, 1);
  ASSERT_ACL_OK(aclrtLaunchHostFunc(stream, Call::fn, &call));
  std::atomic<int> runsSeenByNext{-1};
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream), [&](runtime::Stream*) {
    runsSeenByNext = call.runs.load();
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(call.runs.load(), 1);
  EXPECT_EQ(runsSeenByNext.load(), 1);  // blocking: the next task waited for it
  EXPECT_FALSE(pthread_equal(call.thread.load(), pthread_self()));
  ASSERT_ACL_OK(aclrtLaunchHostFunc(nullptr, Call::fn, &call));  // the default stream
  ASSERT_ACL_OK(aclrtSynchronizeStream(nullptr));
  EXPECT_EQ(call.runs.load(), 2);
  EXPECT_ACL_ERROR(aclrtLaunchHostFunc(stream, nullptr, nullptr), ACL_ERROR_INVALID_PARAM,
                   "fn is null");
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclHostFuncTest, ASubscribedThreadRunsThemInProcessHostFunc) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  std::atomic<bool> stop{false};
  std::atomic<pthread_t> worker{};
  std::atomic<int> processed{0};
  std::thread processor([&] {
    worker = pthread_self();
    while (!stop) {
      const aclError e = aclrtProcessHostFunc(10);
      if (e == ACL_SUCCESS) processed.fetch_add(1);
    }
  });
  while (worker.load() == pthread_t{}) sleepMs(1);
  const auto tid = static_cast<uint64_t>(worker.load());
  ASSERT_ACL_OK(aclrtSubscribeHostFunc(tid, stream));
  EXPECT_ACL_ERROR(aclrtSubscribeHostFunc(tid, stream), ACL_ERROR_REPEAT_SUBSCRIBE,
                   "already subscribed");
  Call call;
  ASSERT_ACL_OK(aclrtLaunchHostFunc(stream, Call::fn, &call));
  ASSERT_ACL_OK(aclrtLaunchHostFunc(stream, Call::fn, &call));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(call.runs.load(), 2);
  EXPECT_TRUE(pthread_equal(call.thread.load(), worker.load()));
  EXPECT_GE(processed.load(), 1);
  ASSERT_ACL_OK(aclrtUnSubscribeHostFunc(tid, stream));
  EXPECT_ACL_ERROR(aclrtUnSubscribeHostFunc(tid, stream), ACL_ERROR_STREAM_NOT_SUBSCRIBE,
                   "is not subscribed");
  stop = true;
  processor.join();
  // Unsubscribed: the runtime's thread runs them again.
  ASSERT_ACL_OK(aclrtLaunchHostFunc(stream, Call::fn, &call));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(call.runs.load(), 3);
  EXPECT_FALSE(pthread_equal(call.thread.load(), worker.load()));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclHostFuncTest, ArgumentsAreChecked) {
  EXPECT_ACL_ERROR(aclrtSubscribeHostFunc(1, nullptr), ACL_ERROR_INVALID_PARAM,
                   "exeStream is null");
  EXPECT_ACL_ERROR(aclrtUnSubscribeHostFunc(1, nullptr), ACL_ERROR_INVALID_PARAM,
                   "exeStream is null");
  EXPECT_ACL_ERROR(aclrtProcessHostFunc(-2), ACL_ERROR_INVALID_PARAM, "timeout -2 ms is invalid");
  EXPECT_ACL_ERROR(aclrtProcessHostFunc(10), ACL_ERROR_THREAD_NOT_SUBSCRIBE,
                   "is not subscribed to any stream");
}

}  // namespace
}  // namespace cohort::acltest
