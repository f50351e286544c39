#include <gtest/gtest.h>

#include <thread>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

TEST(DeviceTest, CountComesFromTheEnvironment) {
  ASSERT_OK(init());
  int count = 0;
  ASSERT_OK(getDeviceCount(&count));
  EXPECT_EQ(count, 4);
  EXPECT_ERROR(getDeviceCount(nullptr), kInvalidArgument, "null");
}

TEST(DeviceTest, CurrentDeviceIsPerThread) {
  ASSERT_OK(setDevice(1));
  int d = -1;
  ASSERT_OK(getDevice(&d));
  EXPECT_EQ(d, 1);
  std::thread([] {
    int other = -1;
    EXPECT_ERROR(getDevice(&other), kInvalidDevice, "call setDevice first");
    ASSERT_OK(setDevice(2));
    ASSERT_OK(getDevice(&other));
    EXPECT_EQ(other, 2);
    ASSERT_OK(resetDevice(2));
  }).join();
  ASSERT_OK(getDevice(&d));
  EXPECT_EQ(d, 1);
  ASSERT_OK(resetDevice(1));
}

TEST(DeviceTest, InvalidIdsAreRejected) {
  EXPECT_ERROR(setDevice(4), kInvalidDevice, "device 4 does not exist: 4 device(s) visible");
  EXPECT_ERROR(setDevice(-1), kInvalidDevice, "device -1");
  EXPECT_ERROR(resetDevice(3), kInvalidDevice, "not set");
  DeviceInfo info;
  EXPECT_ERROR(getDeviceInfo(9, &info), kInvalidDevice, "device 9");
  EXPECT_EQ(lastError().code(), ErrorCode::kInvalidDevice);
}

TEST(DeviceTest, SetAndResetAreReferenceCounted) {
  ASSERT_OK(setDevice(3));
  ASSERT_OK(setDevice(3));
  void* p = nullptr;
  ASSERT_OK(deviceMalloc(&p, 1 << 20));
  DeviceInfo info;
  ASSERT_OK(getDeviceInfo(3, &info));
  EXPECT_EQ(info.referenceCount, 2);
  EXPECT_EQ(info.physicalId, 3);
  EXPECT_EQ(info.memoryTotal, 64u << 20);
  EXPECT_EQ(info.memoryFree, (64u << 20) - (1u << 20));
  EXPECT_EQ(info.streamCount, 1);  // the default stream
  ASSERT_OK(resetDevice(3));
  ASSERT_OK(getDeviceInfo(3, &info));
  EXPECT_EQ(info.referenceCount, 1);
  EXPECT_EQ(info.memoryFree, (64u << 20) - (1u << 20));  // still held
  ASSERT_OK(resetDevice(3));
  ASSERT_OK(getDeviceInfo(3, &info));
  EXPECT_EQ(info.referenceCount, 0);
  EXPECT_EQ(info.memoryFree, 64u << 20);  // the last reset released everything
  EXPECT_EQ(info.streamCount, 0);
  EXPECT_ERROR(deviceFree(p), kInvalidPointer, "not the start of a live allocation");
}

TEST(DeviceTest, MemInfoAndSynchronizeNeedACurrentDevice) {
  std::thread([] {
    std::size_t f = 0, t = 0;
    EXPECT_ERROR(getMemInfo(&f, &t), kInvalidDevice, "setDevice");
    EXPECT_ERROR(synchronizeDevice(), kInvalidDevice, "setDevice");
    ASSERT_OK(setDevice(0));
    ASSERT_OK(getMemInfo(&f, &t));
    EXPECT_EQ(t, 64u << 20);
    EXPECT_EQ(f, t);
    ASSERT_OK(synchronizeDevice());
    ASSERT_OK(resetDevice(0));
  }).join();
}

TEST(DeviceTest, SynchronizeDeviceWaitsForEveryStream) {
  ASSERT_OK(setDevice(0));
  Stream* s = nullptr;
  ASSERT_OK(streamCreate(&s));
  std::atomic<int> ran{0};
  for (Stream* target : {s, static_cast<Stream*>(nullptr)}) {
    ASSERT_OK(launchKernel(target, [&](Stream*) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ran++;
      return Status::Ok();
    }));
  }
  ASSERT_OK(synchronizeDevice());
  EXPECT_EQ(ran.load(), 2);
  ASSERT_OK(streamDestroy(s));
  ASSERT_OK(resetDevice(0));
}

TEST(DeviceTest, LoadedVersionMatchesHeaders) {
  VersionInfo v = loadedVersion();
  EXPECT_STREQ(v.library, COHORT_VERSION_STRING);
  EXPECT_EQ(v.apiVersion, COHORT_API_VERSION);
  EXPECT_EQ(v.protocolVersion, COHORT_PROTOCOL_VERSION);
}

}  // namespace
}  // namespace cohort::runtime
