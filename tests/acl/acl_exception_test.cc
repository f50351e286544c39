// Exception callbacks of failed tasks, the fields of their info, and the device
// faults aclrtGetErrorVerbose reports.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "acl_test_util.h"

// aclrtSetExceptionInfoCallback and aclsysGetCANNVersion are deprecated, and tested.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace cohort::acltest {
namespace {

struct Seen {
  uint32_t task, stream, thread, device, code;
};

std::mutex gMu;
std::vector<Seen> gFirst;   // what callbackA saw
std::vector<Seen> gSecond;  // what callbackB saw

Seen read(aclrtExceptionInfo* info) {
  return Seen{aclrtGetTaskIdFromExceptionInfo(info), aclrtGetStreamIdFromExceptionInfo(info),
              aclrtGetThreadIdFromExceptionInfo(info), aclrtGetDeviceIdFromExceptionInfo(info),
              aclrtGetErrorCodeFromExceptionInfo(info)};
}

void callbackA(aclrtExceptionInfo* info) {
  std::lock_guard<std::mutex> lock(gMu);
  gFirst.push_back(read(info));
}

void callbackB(aclrtExceptionInfo* info) {
  std::lock_guard<std::mutex> lock(gMu);
  gSecond.push_back(read(info));
}

class AclExceptionTest : public AclTest {
 protected:
  void TearDown() override {
    aclrtSetExceptionInfoCallback(nullptr);
    aclrtExceptionInfoCallbackUnregister(callbackA);
    aclrtExceptionInfoCallbackUnregister(callbackB);
    std::lock_guard<std::mutex> lock(gMu);
    gFirst.clear();
    gSecond.clear();
    AclTest::TearDown();
  }
};

TEST_F(AclExceptionTest, CallbacksGetTheFailedTask) {
  ASSERT_ACL_OK(aclrtSetExceptionInfoCallback(callbackA));
  ASSERT_ACL_OK(aclrtExceptionInfoCallbackRegister(callbackB));
  ASSERT_ACL_OK(aclrtExceptionInfoCallbackRegister(callbackB));  // once only
  ASSERT_ACL_OK(aclrtSetDevice(2));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, 64, 1, 64, stream));  // a task that succeeds
  failStream(stream, ErrorCode::kTaskFailed);
  uint32_t last = 0;
  ASSERT_ACL_OK(aclrtGetThreadLastTaskId(&last));
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_AICPU_EXCEPTION);
  int32_t streamId = -1;
  ASSERT_ACL_OK(aclrtStreamGetId(stream, &streamId));

  std::lock_guard<std::mutex> lock(gMu);
  ASSERT_EQ(gFirst.size(), 1u);
  ASSERT_EQ(gSecond.size(), 1u);
  const Seen& seen = gFirst[0];
  EXPECT_EQ(seen.task, last);
  EXPECT_EQ(seen.stream, static_cast<uint32_t>(streamId));
  EXPECT_EQ(seen.thread, static_cast<uint32_t>(::syscall(SYS_gettid)));
  EXPECT_EQ(seen.device, 2u);
  EXPECT_EQ(seen.code, static_cast<uint32_t>(ACL_ERROR_RT_AICPU_EXCEPTION));
  EXPECT_EQ(gSecond[0].task, seen.task);
  EXPECT_EQ(gSecond[0].stream, seen.stream);
}

TEST_F(AclExceptionTest, TaskIdsArePositionsInTheStream) {
  ASSERT_ACL_OK(aclrtExceptionInfoCallbackRegister(callbackA));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  uint32_t last = 0;
  std::thread fresh([] {  // a thread that queued nothing
    uint32_t none = 0;
    EXPECT_ACL_ERROR(aclrtGetThreadLastTaskId(&none), ACL_ERROR_INVALID_PARAM, "queued no task");
  });
  fresh.join();
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, 64, 0, 64, stream));
  ASSERT_ACL_OK(aclrtGetThreadLastTaskId(&last));
  EXPECT_EQ(last, 0u);
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, 64, 0, 64, stream));
  ASSERT_ACL_OK(aclrtGetThreadLastTaskId(&last));
  EXPECT_EQ(last, 1u);
  // The default stream does not count. (Its own buffer: the two streams run at once.)
  void* other = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&other, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemsetAsync(other, 64, 0, 64, nullptr));
  ASSERT_ACL_OK(aclrtGetThreadLastTaskId(&last));
  EXPECT_EQ(last, 1u);
  // A bad pointer fails the task: a memory fault.
  failStream(stream, ErrorCode::kInvalidPointer);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_RT_PARAM_INVALID);
  std::lock_guard<std::mutex> lock(gMu);
  ASSERT_EQ(gFirst.size(), 1u);
  EXPECT_EQ(gFirst[0].task, 2u);
  EXPECT_EQ(gFirst[0].device, 0u);
  EXPECT_EQ(gFirst[0].code, static_cast<uint32_t>(ACL_ERROR_RT_PARAM_INVALID));
  EXPECT_ACL_ERROR(aclrtGetThreadLastTaskId(nullptr), ACL_ERROR_INVALID_PARAM, "taskId is null");
}

TEST_F(AclExceptionTest, UnregisteredAndClearedCallbacksStaySilent) {
  ASSERT_ACL_OK(aclrtSetExceptionInfoCallback(callbackA));
  ASSERT_ACL_OK(aclrtExceptionInfoCallbackRegister(callbackB));
  ASSERT_ACL_OK(aclrtSetExceptionInfoCallback(nullptr));
  ASSERT_ACL_OK(aclrtExceptionInfoCallbackUnregister(callbackB));
  ASSERT_ACL_OK(aclrtExceptionInfoCallbackUnregister(callbackA));  // never registered: fine
  EXPECT_ACL_ERROR(aclrtExceptionInfoCallbackRegister(nullptr), ACL_ERROR_INVALID_PARAM,
                   "callback is null");
  EXPECT_ACL_ERROR(aclrtExceptionInfoCallbackUnregister(nullptr), ACL_ERROR_INVALID_PARAM,
                   "callback is null");
  ASSERT_ACL_OK(aclrtSetDevice(1));
  failStream(nullptr, ErrorCode::kTaskFailed);
  EXPECT_NE(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  std::lock_guard<std::mutex> lock(gMu);
  EXPECT_TRUE(gFirst.empty());
  EXPECT_TRUE(gSecond.empty());
}

TEST(AclExceptionInfo, NullInfoReadsAllOnes) {
  EXPECT_EQ(aclrtGetTaskIdFromExceptionInfo(nullptr), 0xFFFFFFFFu);
  EXPECT_EQ(aclrtGetStreamIdFromExceptionInfo(nullptr), 0xFFFFFFFFu);
  EXPECT_EQ(aclrtGetThreadIdFromExceptionInfo(nullptr), 0xFFFFFFFFu);
  EXPECT_EQ(aclrtGetDeviceIdFromExceptionInfo(nullptr), 0xFFFFFFFFu);
  EXPECT_EQ(aclrtGetErrorCodeFromExceptionInfo(nullptr), 0xFFFFFFFFu);
}

using AclFaultTest = AclTest;

TEST_F(AclFaultTest, ErrorVerboseReportsTheDevicesLatestFault) {
  aclrtErrorInfo info;
  std::memset(&info, 0xff, sizeof info);
  ASSERT_ACL_OK(aclrtGetErrorVerbose(3, &info));
  EXPECT_EQ(info.errorType, ACL_RT_NO_ERROR);
  EXPECT_EQ(info.tryRepair, 0);
  EXPECT_EQ(info.hasDetail, 0);

  ASSERT_ACL_OK(aclrtSetDevice(3));
  failStream(nullptr, ErrorCode::kConnectionError);
  EXPECT_NE(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtGetErrorVerbose(3, &info));
  EXPECT_EQ(info.errorType, ACL_RT_ERROR_LINK);
  ASSERT_ACL_OK(aclrtGetErrorVerbose(2, &info));  // other devices are unaffected
  EXPECT_EQ(info.errorType, ACL_RT_NO_ERROR);

  aclrtErrorInfo reported;
  ASSERT_ACL_OK(aclrtGetErrorVerbose(3, &reported));
  ASSERT_ACL_OK(aclrtRepairError(3, &reported));
  ASSERT_ACL_OK(aclrtGetErrorVerbose(3, &info));
  EXPECT_EQ(info.errorType, ACL_RT_NO_ERROR);

  // A fault is forgotten when its device is released.
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  failStream(stream, ErrorCode::kTaskFailed);
  EXPECT_NE(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtGetErrorVerbose(3, &info));
  EXPECT_EQ(info.errorType, ACL_RT_ERROR_OTHERS);
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtResetDevice(3));
  ASSERT_ACL_OK(aclrtGetErrorVerbose(3, &info));
  EXPECT_EQ(info.errorType, ACL_RT_NO_ERROR);

  EXPECT_ACL_ERROR(aclrtGetErrorVerbose(3, nullptr), ACL_ERROR_INVALID_PARAM, "errorInfo is null");
  EXPECT_ACL_ERROR(aclrtGetErrorVerbose(4, &info), ACL_ERROR_RT_INVALID_DEVICEID, "does not exist");
  EXPECT_ACL_ERROR(aclrtRepairError(0, nullptr), ACL_ERROR_INVALID_PARAM, "errorInfo is null");
}

}  // namespace
}  // namespace cohort::acltest
