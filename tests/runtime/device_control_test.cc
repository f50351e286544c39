// The device control and task reports of cohort/runtime.h: the forced reset, the
// task-failure observer, the thread's last task and the task wait timeouts.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

TEST(DeviceControlTest, ResetDeviceForceDropsEveryReference) {
  ASSERT_OK(setDevice(2));
  ASSERT_OK(setDevice(2));
  Stream* stream = nullptr;
  ASSERT_OK(streamCreate(&stream));
  void* dev = nullptr;
  ASSERT_OK(deviceMalloc(&dev, 4096));
  ASSERT_OK(resetDeviceForce(2));
  DeviceInfo info;
  ASSERT_OK(getDeviceInfo(2, &info));
  EXPECT_EQ(info.referenceCount, 0);
  EXPECT_EQ(info.memoryFree, info.memoryTotal);
  EXPECT_EQ(streamSynchronize(stream).code(), ErrorCode::kInvalidHandle);
  int current = -1;
  EXPECT_EQ(getDevice(&current).code(), ErrorCode::kInvalidDevice);
  EXPECT_EQ(resetDeviceForce(2).code(), ErrorCode::kInvalidDevice);
  EXPECT_EQ(resetDeviceForce(7).code(), ErrorCode::kInvalidDevice);
}

TEST(DeviceControlTest, ObserverHearsFailedTasksWithTheirPosition) {
  std::mutex mu;
  std::vector<TaskFailure> seen;
  setTaskFailureObserver([&](const TaskFailure& f) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(f);
  });
  ASSERT_OK(setDevice(1));
  Stream* stream = nullptr;
  ASSERT_OK(streamCreate(&stream));
  ASSERT_OK(launchKernel(stream, [](Stream*) { return Status::Ok(); }));
  ASSERT_OK(launchKernel(stream, [](Stream*) { return Status(ErrorCode::kTaskFailed, "boom"); }));
  std::uint64_t last = 99;
  ASSERT_OK(threadLastTask(&last));
  EXPECT_EQ(last, 1u);
  EXPECT_EQ(streamSynchronize(stream).code(), ErrorCode::kTaskFailed);
  setTaskFailureObserver(nullptr);
  StreamDescription description;
  ASSERT_OK(streamDescribe(stream, &description));
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].device, 1);
    EXPECT_EQ(seen[0].streamId, description.id);
    EXPECT_EQ(seen[0].taskIndex, 1u);
    EXPECT_EQ(seen[0].threadId, static_cast<std::uint32_t>(::syscall(SYS_gettid)));
    EXPECT_EQ(seen[0].status.code(), ErrorCode::kTaskFailed);
  }
  ASSERT_OK(streamDestroy(stream));
  ASSERT_OK(resetDevice(1));
}

TEST(DeviceControlTest, TaskWaitTimeoutsOverrideTheConfiguredOne) {
  EXPECT_EQ(taskWaitTimeoutMs(), 1000L * 1800);  // COHORT_EXEC_TIMEOUT's default
  setTaskWaitTimeout(120);
  EXPECT_EQ(taskWaitTimeoutMs(), 120);
  EXPECT_EQ(eventWaitTimeoutMs(), 120);  // follows until set
  setEventWaitTimeout(0);
  EXPECT_EQ(eventWaitTimeoutMs(), 0);
  setEventWaitTimeout(-1);
  ASSERT_OK(setDevice(0));
  Stream* held = nullptr;
  Stream* waiting = nullptr;
  ASSERT_OK(streamCreate(&held));
  ASSERT_OK(streamCreate(&waiting));
  auto open = std::make_shared<std::atomic<bool>>(false);
  ASSERT_OK(launchKernel(held, [open](Stream*) {
    while (!open->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::Ok();
  }));
  Event* event = nullptr;
  ASSERT_OK(eventCreate(&event));
  ASSERT_OK(eventRecord(event, held));
  ASSERT_OK(streamWaitEvent(waiting, event));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(streamSynchronize(waiting).code(), ErrorCode::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  open->store(true);
  ASSERT_OK(streamSynchronize(held));
  setTaskWaitTimeout(-1);
  EXPECT_EQ(taskWaitTimeoutMs(), 1000L * 1800);
  Stream* fallback = nullptr;
  ASSERT_OK(defaultStream(&fallback));
  StreamDescription description;
  ASSERT_OK(streamDescribe(fallback, &description));
  EXPECT_TRUE(description.isDefault);
  ASSERT_OK(eventDestroy(event));
  ASSERT_OK(streamDestroy(waiting));
  ASSERT_OK(streamDestroy(held));
  ASSERT_OK(resetDevice(0));
}

}  // namespace
}  // namespace cohort::runtime
