// Runs with COHORT_DEVICE_COUNT=6 COHORT_VISIBLE_DEVICES=5,2 COHORT_DEVICE_MEMORY=8M.
#include <gtest/gtest.h>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

TEST(VisibleDevicesTest, VisibleDevicesAreRenumbered) {
  int count = 0;
  ASSERT_OK(getDeviceCount(&count));
  ASSERT_EQ(count, 2);
  DeviceInfo info;
  ASSERT_OK(getDeviceInfo(0, &info));
  EXPECT_EQ(info.physicalId, 5);
  ASSERT_OK(getDeviceInfo(1, &info));
  EXPECT_EQ(info.physicalId, 2);
  EXPECT_EQ(info.memoryTotal, 8u << 20);
  EXPECT_ERROR(setDevice(2), kInvalidDevice, "2 device(s) visible");
}

TEST(VisibleDevicesTest, CapacityIsEnforced) {
  ASSERT_OK(setDevice(1));
  void* p = nullptr;
  EXPECT_ERROR(deviceMalloc(&p, (8u << 20) + 1), kOutOfMemory, "device 1: cannot allocate");
  ASSERT_OK(deviceMalloc(&p, 8u << 20));  // exactly the capacity fits
  void* q = nullptr;
  EXPECT_ERROR(deviceMalloc(&q, 64), kOutOfMemory, "0 of 8388608 bytes free");
  ASSERT_OK(deviceFree(p));
  ASSERT_OK(resetDevice(1));
}

}  // namespace
}  // namespace cohort::runtime
