// Streams beyond the basics: configuration handles, ids, flags and priorities,
// attributes, query, abort, stop, forced destruction, state callbacks.
#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "acl_stream_family_util.h"

namespace cohort::acltest {
namespace {

using AclStreamExtTest = AclDevice0Test;

TEST_F(AclStreamExtTest, ConfigHandleSetsFlagsAndPriorityOfStreamV2) {
  aclrtStreamConfigHandle* handle = aclrtCreateStreamConfigHandle();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(handle->flag, 0u);
  EXPECT_EQ(handle->priority, 0u);
  const uint32_t flags = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC;
  const uint32_t priority = 5;
  ASSERT_ACL_OK(aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_FLAG, &flags, sizeof(flags)));
  ASSERT_ACL_OK(
      aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_PRIORITY, &priority, sizeof(priority)));
  const size_t workSize = 4096;
  void* work = &handle;
  ASSERT_ACL_OK(
      aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_WORK_SIZE, &workSize, sizeof(workSize)));
  ASSERT_ACL_OK(aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_WORK_ADDR_PTR, &work, sizeof(work)));
  EXPECT_EQ(handle->flag, flags);
  EXPECT_EQ(handle->priority, priority);
  EXPECT_EQ(handle->workSize, workSize);
  EXPECT_EQ(handle->workptr, work);

  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStreamV2(&stream, handle));
  uint32_t gotFlags = 99, gotPriority = 99;
  ASSERT_ACL_OK(aclrtStreamGetFlags(stream, &gotFlags));
  ASSERT_ACL_OK(aclrtStreamGetPriority(stream, &gotPriority));
  EXPECT_EQ(gotFlags, flags);
  EXPECT_EQ(gotPriority, priority);
  // It is a working stream.
  OrderLog log;
  log.mark(stream, 1);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(log.marks(), std::vector<int>{1});
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtDestroyStreamConfigHandle(handle));
  EXPECT_ACL_ERROR(aclrtDestroyStreamConfigHandle(handle), ACL_ERROR_INVALID_PARAM,
                   "is not a live configuration handle");
}

TEST_F(AclStreamExtTest, ConfigOptionsAreChecked) {
  aclrtStreamConfigHandle* handle = aclrtCreateStreamConfigHandle();
  ASSERT_NE(handle, nullptr);
  const uint32_t eight = 8, badFlags = 0x400;
  const uint16_t small = 1;
  EXPECT_ACL_ERROR(aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_PRIORITY, &eight, 4),
                   ACL_ERROR_INVALID_PARAM, "priority 8 is out of range [0, 7]");
  EXPECT_ACL_ERROR(aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_FLAG, &badFlags, 4),
                   ACL_ERROR_INVALID_PARAM, "unknown bits 0x400");
  EXPECT_ACL_ERROR(aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_FLAG, &small, sizeof(small)),
                   ACL_ERROR_INVALID_PARAM, "valueSize 2 is neither 4 nor 8");
  EXPECT_ACL_ERROR(aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_WORK_ADDR_PTR, &eight, 4),
                   ACL_ERROR_INVALID_PARAM, "takes a pointer");
  EXPECT_ACL_ERROR(
      aclrtSetStreamConfigOpt(handle, static_cast<aclrtStreamConfigAttr>(9), &eight, 4),
      ACL_ERROR_INVALID_PARAM, "attr 9 is not an aclrtStreamConfigAttr");
  EXPECT_ACL_ERROR(aclrtSetStreamConfigOpt(nullptr, ACL_RT_STREAM_FLAG, &eight, 4),
                   ACL_ERROR_INVALID_PARAM, "handle is null");
  EXPECT_ACL_ERROR(aclrtSetStreamConfigOpt(handle, ACL_RT_STREAM_FLAG, nullptr, 4),
                   ACL_ERROR_INVALID_PARAM, "attrValue is null");
  aclrtStreamConfigHandle forged{};
  aclrtStream stream = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateStreamV2(&stream, &forged), ACL_ERROR_INVALID_PARAM,
                   "is not a live configuration handle");
  EXPECT_ACL_ERROR(aclrtCreateStreamV2(&stream, nullptr), ACL_ERROR_INVALID_PARAM,
                   "handle is null");
  EXPECT_ACL_ERROR(aclrtCreateStreamV2(nullptr, handle), ACL_ERROR_INVALID_PARAM, "stream is null");
  handle->priority = 9;  // written directly: checked at creation
  EXPECT_ACL_ERROR(aclrtCreateStreamV2(&stream, handle), ACL_ERROR_INVALID_PARAM,
                   "priority 9 is out of range");
  EXPECT_EQ(stream, nullptr);
  ASSERT_ACL_OK(aclrtDestroyStreamConfigHandle(handle));
}

TEST_F(AclStreamExtTest, IdsFlagsAndPrioritiesOfEveryKindOfStream) {
  aclrtStream plain = nullptr, configured = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&plain));
  ASSERT_ACL_OK(aclrtCreateStreamWithConfig(&configured, 3, ACL_STREAM_HUGE));
  int32_t idPlain = -1, idConfigured = -1, idDefault = -1;
  ASSERT_ACL_OK(aclrtStreamGetId(plain, &idPlain));
  ASSERT_ACL_OK(aclrtStreamGetId(configured, &idConfigured));
  ASSERT_ACL_OK(aclrtStreamGetId(nullptr, &idDefault));
  EXPECT_NE(idPlain, idConfigured);
  EXPECT_NE(idPlain, idDefault);
  EXPECT_NE(idConfigured, idDefault);
  uint32_t flags = 99, priority = 99;
  ASSERT_ACL_OK(aclrtStreamGetFlags(plain, &flags));
  ASSERT_ACL_OK(aclrtStreamGetPriority(plain, &priority));
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(priority, 0u);
  ASSERT_ACL_OK(aclrtStreamGetFlags(configured, &flags));
  ASSERT_ACL_OK(aclrtStreamGetPriority(configured, &priority));
  EXPECT_EQ(flags, ACL_STREAM_HUGE);
  EXPECT_EQ(priority, 3u);
  ASSERT_ACL_OK(aclrtStreamGetFlags(nullptr, &flags));
  EXPECT_EQ(flags, 0u);
  // A new stream at the same address knows nothing of a destroyed one's settings.
  ASSERT_ACL_OK(aclrtDestroyStream(configured));
  aclrtStream again = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&again));
  ASSERT_ACL_OK(aclrtStreamGetFlags(again, &flags));
  EXPECT_EQ(flags, 0u);
  EXPECT_ACL_ERROR(aclrtStreamGetId(plain, nullptr), ACL_ERROR_INVALID_PARAM, "streamId is null");
  int dummy = 0;
  EXPECT_ACL_ERROR(aclrtStreamGetFlags(&dummy, &flags), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
  ASSERT_ACL_OK(aclrtDestroyStream(plain));
  ASSERT_ACL_OK(aclrtDestroyStream(again));
}

TEST_F(AclStreamExtTest, AvailableStreamsCountDown) {
  uint32_t before = 0, after = 0;
  ASSERT_ACL_OK(aclrtGetStreamAvailableNum(&before));
  EXPECT_EQ(before, 1984u - 1u);  // the default stream exists
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtGetStreamAvailableNum(&after));
  EXPECT_EQ(after, before - 1);
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  EXPECT_ACL_ERROR(aclrtGetStreamAvailableNum(nullptr), ACL_ERROR_INVALID_PARAM,
                   "streamCount is null");
}

TEST_F(AclStreamExtTest, FailureModeAttributeDecidesWhetherLaterTasksRun) {
  for (uint64_t mode : {uint64_t{ACL_CONTINUE_ON_FAILURE}, uint64_t{ACL_STOP_ON_FAILURE}}) {
    aclrtStream stream = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&stream));
    aclrtStreamAttrValue value{};
    value.failureMode = mode;
    ASSERT_ACL_OK(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, &value));
    aclrtStreamAttrValue read{};
    read.failureMode = 77;
    ASSERT_ACL_OK(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_FAILURE_MODE, &read));
    EXPECT_EQ(read.failureMode, mode);
    OrderLog log;
    failStream(stream, ErrorCode::kTaskFailed);
    log.mark(stream, 1);
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_AICPU_EXCEPTION);
    // Only CONTINUE runs the task behind the failed one.
    EXPECT_EQ(log.marks().size(), mode == ACL_CONTINUE_ON_FAILURE ? 1u : 0u) << "mode " << mode;
    ASSERT_ACL_OK(aclrtDestroyStream(stream));
  }
  aclrtStreamAttrValue bad{};
  bad.failureMode = 2;
  EXPECT_ACL_ERROR(aclrtSetStreamAttribute(nullptr, ACL_STREAM_ATTR_FAILURE_MODE, &bad),
                   ACL_ERROR_INVALID_PARAM, "failureMode 2 is neither");
}

TEST_F(AclStreamExtTest, RecordedAttributesReadBack) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  aclrtStreamAttrValue v{};
  ASSERT_ACL_OK(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
  EXPECT_EQ(v.overflowSwitch, 0u);  // off by default
  v.overflowSwitch = 1;
  ASSERT_ACL_OK(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
  uint32_t flag = 0;
  ASSERT_ACL_OK(aclrtGetStreamOverflowSwitch(stream, &flag));
  EXPECT_EQ(flag, 1u);
  ASSERT_ACL_OK(aclrtSetStreamOverflowSwitch(stream, 0));
  ASSERT_ACL_OK(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v));
  EXPECT_EQ(v.overflowSwitch, 0u);

  v = aclrtStreamAttrValue{};
  v.userCustomTag = 0xdeadbeef;
  ASSERT_ACL_OK(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
  v = aclrtStreamAttrValue{};
  v.cacheOpInfoSwitch = 1;
  ASSERT_ACL_OK(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_CACHE_OP_INFO, &v));
  v = aclrtStreamAttrValue{};
  v.streamPriority = 6;
  ASSERT_ACL_OK(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_PRIORITY, &v));
  ASSERT_ACL_OK(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &v));
  EXPECT_EQ(v.userCustomTag, 0xdeadbeefu);
  ASSERT_ACL_OK(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_CACHE_OP_INFO, &v));
  EXPECT_EQ(v.cacheOpInfoSwitch, 1u);
  ASSERT_ACL_OK(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_PRIORITY, &v));
  EXPECT_EQ(v.streamPriority, 6u);
  uint32_t priority = 0;
  ASSERT_ACL_OK(aclrtStreamGetPriority(stream, &priority));
  EXPECT_EQ(priority, 6u);

  v.streamPriority = 8;
  EXPECT_ACL_ERROR(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_PRIORITY, &v),
                   ACL_ERROR_INVALID_PARAM, "priority 8 is out of range");
  v.overflowSwitch = 2;
  EXPECT_ACL_ERROR(aclrtSetStreamAttribute(stream, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &v),
                   ACL_ERROR_INVALID_PARAM, "overflowSwitch 2 is neither");
  EXPECT_ACL_ERROR(aclrtSetStreamOverflowSwitch(stream, 3), ACL_ERROR_INVALID_PARAM,
                   "flag 3 is neither");
  EXPECT_ACL_ERROR(aclrtSetStreamAttribute(stream, static_cast<aclrtStreamAttr>(9), &v),
                   ACL_ERROR_INVALID_PARAM, "stmAttrType 9 is not an aclrtStreamAttr");
  EXPECT_ACL_ERROR(aclrtGetStreamAttribute(stream, ACL_STREAM_ATTR_PRIORITY, nullptr),
                   ACL_ERROR_INVALID_PARAM, "value is null");
  EXPECT_ACL_ERROR(aclrtGetStreamOverflowSwitch(stream, nullptr), ACL_ERROR_INVALID_PARAM,
                   "flag is null");
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclStreamExtTest, QueryFollowsTheQueue) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  ASSERT_ACL_OK(aclrtStreamQuery(stream, &status));
  EXPECT_EQ(status, ACL_STREAM_STATUS_COMPLETE);
  Gate gate;
  gate.hold(stream);
  ASSERT_ACL_OK(aclrtStreamQuery(stream, &status));
  EXPECT_EQ(status, ACL_STREAM_STATUS_NOT_READY);
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  ASSERT_ACL_OK(aclrtStreamQuery(stream, &status));
  EXPECT_EQ(status, ACL_STREAM_STATUS_COMPLETE);
  // ACL_CONTINUE_ON_FAILURE (the default): a failure is seen until a synchronize
  // reports it, once.
  failStream(stream, ErrorCode::kTaskFailed);
  aclError queried = ACL_SUCCESS;
  for (int i = 0; i < 2000 && (queried = aclrtStreamQuery(stream, &status)) == ACL_SUCCESS; ++i) {
    sleepMs(1);
  }
  EXPECT_EQ(queried, ACL_ERROR_RT_AICPU_EXCEPTION);
  EXPECT_EQ(aclrtStreamQuery(stream, &status), ACL_ERROR_RT_AICPU_EXCEPTION);  // not cleared
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_AICPU_EXCEPTION);
  ASSERT_ACL_OK(aclrtStreamQuery(stream, &status));
  EXPECT_EQ(status, ACL_STREAM_STATUS_COMPLETE);
  // ACL_STOP_ON_FAILURE: the failure stays.
  ASSERT_ACL_OK(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
  failStream(stream, ErrorCode::kTaskFailed);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_AICPU_EXCEPTION);
  EXPECT_EQ(aclrtStreamQuery(stream, &status), ACL_ERROR_RT_AICPU_EXCEPTION);
  EXPECT_ACL_ERROR(aclrtStreamQuery(stream, nullptr), ACL_ERROR_INVALID_PARAM, "status is null");
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclStreamExtTest, ContinueOnFailureIsTheDefaultAndReportsOnce) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  OrderLog log;
  failStream(stream, ErrorCode::kKernelFault);
  log.mark(stream, 1);  // runs: ACL_CONTINUE_ON_FAILURE
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION,
                   "injected task failure");
  EXPECT_EQ(log.marks(), std::vector<int>{1});
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));  // reported once
  ASSERT_ACL_OK(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
  failStream(stream, ErrorCode::kKernelFault);
  log.mark(stream, 2);  // skipped
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);  // sticky
  EXPECT_EQ(log.marks(), std::vector<int>{1});
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclStreamExtTest, AbortKillsTheKernelItFindsAsADeviceWould) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  std::atomic<int> blocks{0};
  auto slowKernel = [&blocks](std::uint32_t) {
    sleepMs(100);
    ++blocks;
    return Status::Ok();
  };
  // First in the queue (started, on a device) or running: killed, and reported once.
  for (int started = 0; started < 2; ++started) {
    ASSERT_OK(runtime::launchBlocks(static_cast<runtime::Stream*>(stream), 1, 1, slowKernel));
    if (started == 1) sleepMs(30);
    ASSERT_ACL_OK(aclrtStreamAbort(stream));
    EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION,
                     "was aborted was stopped");
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  }
  EXPECT_GE(blocks.load(), 1);  // the abort waited for the running kernel's block
  // A host task running at the abort is no kernel: nothing to report.
  OrderLog log;
  log.mark(stream, 1);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  ASSERT_ACL_OK(aclrtStreamAbort(stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclStreamExtTest, AbortDropsQueuedTasksAndKeepsTheStream) {
  aclrtStream stream = nullptr, other = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtCreateStream(&other));
  ASSERT_ACL_OK(aclrtSetStreamFailureMode(other, ACL_STOP_ON_FAILURE));
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&event));
  OrderLog log;
  Gate gate;
  gate.hold(stream);
  log.mark(stream, 1);                             // dropped
  ASSERT_ACL_OK(aclrtRecordEvent(event, stream));  // runs, carrying the abort
  log.mark(stream, 2);                             // dropped
  ASSERT_ACL_OK(aclrtStreamWaitEvent(other, event));
  log.mark(other, 3);  // behind a wait on an aborted record: skipped with its error
  std::atomic<aclError> syncResult{-1};
  std::thread synchronizer([&] { syncResult = aclrtSynchronizeStream(stream); });
  sleepMs(50);  // the synchronizer is waiting
  std::thread opener([&] {
    sleepMs(50);
    gate.open();  // the running task ends on its own: kernels are not interrupted
  });
  ASSERT_ACL_OK(aclrtStreamAbort(stream));
  opener.join();
  synchronizer.join();
  EXPECT_EQ(syncResult.load(), ACL_ERROR_RT_DEVICE_TASK_ABORT);
  EXPECT_EQ(aclrtSynchronizeStream(other), ACL_ERROR_RT_DEVICE_TASK_ABORT);
  EXPECT_TRUE(log.marks().empty());
  // The stream has no error and runs new work.
  log.mark(stream, 4);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(log.marks(), std::vector<int>{4});
  ASSERT_ACL_OK(aclrtDestroyEvent(event));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtDestroyStream(other));
}

// Queues on `stream` a wait for *word, a new device word of 0 the caller frees, to be 1:
// nothing writes it, so the stream holds what follows until it is aborted or destroyed.
void holdWithValueWait(aclrtStream stream, void** word) {
  ASSERT_ACL_OK(aclrtMalloc(word, 8, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemset(*word, 8, 0, 8));
  ASSERT_ACL_OK(aclrtValueWait(*word, 1, ACL_STREAM_WAIT_VALUE_EQ, stream));
}

TEST_F(AclStreamExtTest, AbortEndsARunningWait) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  void* word = nullptr;
  ASSERT_NO_FATAL_FAILURE(holdWithValueWait(stream, &word));
  OrderLog log;
  log.mark(stream, 1);
  sleepMs(20);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_ACL_OK(aclrtStreamAbort(stream));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_TRUE(log.marks().empty());
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  ASSERT_ACL_OK(aclrtFree(word));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclStreamExtTest, DestroyForceLetsQueuedWorkRunWithoutWaitingForIt) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtLaunchHostFunc(stream, [](void*) { sleepMs(300); }, nullptr));
  OrderLog log;
  for (int i = 0; i < 3; ++i) log.mark(stream, i);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_ACL_OK(aclrtDestroyStreamForce(stream));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_TRUE(log.marks().empty());
  // The work queued before the destroy runs on; a new stream reaps the old one.
  for (int i = 0; i < 500 && log.marks().size() < 3; ++i) sleepMs(10);
  EXPECT_EQ(log.marks(), (std::vector<int>{0, 1, 2}));
  aclrtStream next = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&next));
  ASSERT_ACL_OK(aclrtDestroyStream(next));
}

TEST_F(AclStreamExtTest, DestroyForceEndsAWaitAndDropsWhatIsBehindIt) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  void* word = nullptr;
  ASSERT_NO_FATAL_FAILURE(holdWithValueWait(stream, &word));
  OrderLog log;
  for (int i = 0; i < 5; ++i) log.mark(stream, i);
  ASSERT_ACL_OK(aclrtDestroyStreamForce(stream));
  sleepMs(50);
  EXPECT_TRUE(log.marks().empty());
  int32_t id = 0;
  EXPECT_ACL_ERROR(aclrtStreamGetId(stream, &id), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
  EXPECT_ACL_ERROR(aclrtDestroyStreamForce(nullptr), ACL_ERROR_INVALID_PARAM, "stream is null");
  EXPECT_ACL_ERROR(aclrtDestroyStreamForce(stream), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
  ASSERT_ACL_OK(aclrtFree(word));
}

TEST_F(AclStreamExtTest, StopHoldsTheQueueUntilAbort) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  void* word = nullptr;
  ASSERT_NO_FATAL_FAILURE(holdWithValueWait(stream, &word));
  OrderLog log;
  log.mark(stream, 1);
  sleepMs(20);
  ASSERT_ACL_OK(aclrtStreamStop(stream));
  // At once, and with CANN's number for a stopped stream.
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_RT_INTERNAL_ERROR, "was stopped");
  sleepMs(50);
  EXPECT_TRUE(log.marks().empty());  // held, not run
  ASSERT_ACL_OK(aclrtStreamAbort(stream));
  log.mark(stream, 2);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_EQ(log.marks(), std::vector<int>{2});
  EXPECT_ACL_ERROR(aclrtStreamStop(nullptr), ACL_ERROR_INVALID_PARAM,
                   "the default stream (NULL) cannot be stopped");
  // A stopped stream can be destroyed: what it holds is dropped.
  ASSERT_ACL_OK(aclrtValueWait(word, 1, ACL_STREAM_WAIT_VALUE_EQ, stream));
  log.mark(stream, 3);
  ASSERT_ACL_OK(aclrtStreamStop(stream));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  EXPECT_EQ(log.marks(), std::vector<int>{2});
  ASSERT_ACL_OK(aclrtFree(word));
}

struct StateLog {
  std::mutex mu;
  std::vector<std::pair<aclrtStream, aclrtStreamState>> entries;
  static void callback(aclrtStream stream, aclrtStreamState state, void* args) {
    auto* self = static_cast<StateLog*>(args);
    std::lock_guard<std::mutex> lock(self->mu);
    self->entries.emplace_back(stream, state);
  }
  size_t count(aclrtStream stream, aclrtStreamState state) {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& e : entries) n += e.first == stream && e.second == state;
    return n;
  }
  size_t count(aclrtStreamState state) {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& e : entries) n += e.second == state;
    return n;
  }
};

TEST_F(AclStreamExtTest, StateCallbacksSeeCreationAndDestruction) {
  StateLog log;
  ASSERT_ACL_OK(aclrtRegStreamStateCallback("test", StateLog::callback, &log));
  EXPECT_ACL_ERROR(aclrtRegStreamStateCallback("test", StateLog::callback, &log),
                   ACL_ERROR_INVALID_PARAM, "already registered under \"test\"");
  aclrtStream stream = nullptr, forced = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtCreateStream(&forced));
  EXPECT_EQ(log.count(stream, ACL_RT_STREAM_STATE_CREATE_POST), 1u);
  EXPECT_EQ(log.count(stream, ACL_RT_STREAM_STATE_DESTROY_PRE), 0u);
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtDestroyStreamForce(forced));
  EXPECT_EQ(log.count(stream, ACL_RT_STREAM_STATE_DESTROY_PRE), 1u);
  EXPECT_EQ(log.count(forced, ACL_RT_STREAM_STATE_DESTROY_PRE), 1u);
  // Default streams: device 1 comes up with one and is torn down with it.
  const size_t created = log.count(ACL_RT_STREAM_STATE_CREATE_POST);
  ASSERT_ACL_OK(aclrtSetDevice(1));
  EXPECT_EQ(log.count(ACL_RT_STREAM_STATE_CREATE_POST), created + 1);
  const size_t destroyed = log.count(ACL_RT_STREAM_STATE_DESTROY_PRE);
  ASSERT_ACL_OK(aclrtResetDevice(1));
  EXPECT_EQ(log.count(ACL_RT_STREAM_STATE_DESTROY_PRE), destroyed + 1);
  ASSERT_ACL_OK(aclrtSetDevice(0));  // current again (device 0 is up: no new default stream)
  // Removed: nothing more arrives.
  ASSERT_ACL_OK(aclrtRegStreamStateCallback("test", nullptr, nullptr));
  const size_t total = log.count(ACL_RT_STREAM_STATE_CREATE_POST);
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  EXPECT_EQ(log.count(ACL_RT_STREAM_STATE_CREATE_POST), total);
  EXPECT_ACL_ERROR(aclrtRegStreamStateCallback("test", nullptr, nullptr), ACL_ERROR_INVALID_PARAM,
                   "no callback is registered under \"test\"");
  EXPECT_ACL_ERROR(aclrtRegStreamStateCallback(nullptr, StateLog::callback, &log),
                   ACL_ERROR_INVALID_PARAM, "regName is null or empty");
  EXPECT_ACL_ERROR(aclrtRegStreamStateCallback("", StateLog::callback, &log),
                   ACL_ERROR_INVALID_PARAM, "regName is null or empty");
}

TEST_F(AclStreamExtTest, ModelOnlyStreamFunctionsNeedAModel) {
  aclrtStream a = nullptr, b = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&a));
  ASSERT_ACL_OK(aclrtCreateStream(&b));
  // Starting and switching streams is for streams bound to a model being built
  // (AclBuildTest.StartedStreamsRunAndTheOthersDoNot).
  EXPECT_ACL_ERROR(aclrtActiveStream(a, b), ACL_ERROR_INVALID_PARAM,
                   "is not bound to a model being built");
  int32_t left = 1, right = 1;
  EXPECT_ACL_ERROR(
      aclrtSwitchStream(&left, ACL_RT_EQUAL, &right, ACL_RT_SWITCH_INT32, a, nullptr, b),
      ACL_ERROR_INVALID_PARAM, "is not bound to a model being built");
  EXPECT_ACL_ERROR(aclrtPersistentTaskClean(a), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtPersistentTaskClean: not supported");
  ASSERT_ACL_OK(aclrtDestroyStream(a));
  ASSERT_ACL_OK(aclrtDestroyStream(b));
}

}  // namespace
}  // namespace cohort::acltest
