// Host memory registration: registered memory is device memory at the same address
// for every runtime call, and host memory still; registration ends with unregister.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

constexpr size_t kBytes = 3 * 4096;

class AclHostRegisterTest : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
    host_ = static_cast<unsigned char*>(std::aligned_alloc(4096, kBytes));
    ASSERT_NE(host_, nullptr);
    ASSERT_ACL_OK(aclrtMalloc(&dev_, kBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  }
  void TearDown() override {
    AclTest::TearDown();
    std::free(host_);
  }
  unsigned char* host_ = nullptr;
  void* dev_ = nullptr;
};

TEST_F(AclHostRegisterTest, RegisteredMemoryIsDeviceMemoryAtTheSameAddress) {
  for (size_t i = 0; i < kBytes; ++i) host_[i] = static_cast<unsigned char>(i % 251);
  void* devPtr = nullptr;
  ASSERT_ACL_OK(aclrtHostRegister(host_, kBytes, ACL_HOST_REGISTER_MAPPED, &devPtr));
  EXPECT_EQ(devPtr, host_);
  void* again = nullptr;
  ASSERT_ACL_OK(aclrtHostGetDevicePointer(host_ + 100, &again, 0));
  EXPECT_EQ(again, host_ + 100);
  runtime::PointerAttributes a;
  ASSERT_OK(runtime::pointerGetAttributes(host_ + 5, &a));
  EXPECT_TRUE(a.isRegistered);
  EXPECT_EQ(a.allocationBase, host_);
  EXPECT_EQ(a.allocationSize, kBytes);

  // As device memory: the source of a device-to-device copy ...
  ASSERT_ACL_OK(aclrtMemcpy(dev_, kBytes, devPtr, kBytes, ACL_MEMCPY_DEVICE_TO_DEVICE));
  std::vector<unsigned char> out(kBytes);
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), kBytes, dev_, kBytes, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(out[i], i % 251) << i;
  // ... the destination of a host-to-device copy, a memset and a kernel on a stream.
  std::vector<unsigned char> ones(4096, 1);
  ASSERT_ACL_OK(aclrtMemcpy(devPtr, kBytes, ones.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtMemsetAsync(static_cast<char*>(devPtr) + 4096, 4096, 2, 4096, stream));
  auto* tail = static_cast<unsigned char*>(devPtr) + 8192;
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(stream), [tail](runtime::Stream*) {
    for (int i = 0; i < 4096; ++i) tail[i] = 3;
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(host_[i], 1 + i / 4096) << i;
  // As host memory: the source of a host-to-device copy and the target of device-to-host.
  ASSERT_ACL_OK(aclrtMemcpy(dev_, kBytes, host_, kBytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::memset(host_, 0, kBytes);
  ASSERT_ACL_OK(aclrtMemcpyAsync(host_, kBytes, dev_, kBytes, ACL_MEMCPY_DEVICE_TO_HOST, stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(host_[i], 1 + i / 4096) << i;
  // A copy checks the registered range as it checks an allocation.
  EXPECT_ACL_ERROR(
      aclrtMemcpy(devPtr, kBytes + 1, ones.data(), kBytes + 1, ACL_MEMCPY_HOST_TO_DEVICE),
      ACL_ERROR_INVALID_PARAM, "overrun its allocation");

  ASSERT_ACL_OK(aclrtHostUnregister(host_));
  // Plain host memory again.
  aclrtPtrAttributes attributes{};
  ASSERT_ACL_OK(aclrtPointerGetAttributes(devPtr, &attributes));
  EXPECT_EQ(attributes.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
  EXPECT_ACL_ERROR(aclrtHostGetDevicePointer(host_, &again, 0), ACL_ERROR_RT_PARAM_INVALID,
                   "not in a registered host range");
  EXPECT_ACL_ERROR(aclrtHostUnregister(host_), ACL_ERROR_RT_PARAM_INVALID,
                   "not the start of a registered range");
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclHostRegisterTest, PinnedMemoryCanBeRegisteredToo) {
  void* pinned = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, 8192));
  void* devPtr = nullptr;
  ASSERT_ACL_OK(aclrtHostRegisterV2(pinned, 8192, ACL_HOST_REG_MAPPED));
  ASSERT_ACL_OK(aclrtHostGetDevicePointer(pinned, &devPtr, 0));
  EXPECT_EQ(devPtr, pinned);
  std::vector<unsigned char> in(8192, 0x21);
  ASSERT_ACL_OK(aclrtMemcpy(devPtr, 8192, in.data(), 8192, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_EQ(static_cast<unsigned char*>(pinned)[8191], 0x21);
  EXPECT_ACL_ERROR(aclrtHostRegisterV2(pinned, 8192, ACL_HOST_REG_MAPPED), ACL_ERROR_INVALID_PARAM,
                   "overlaps the registration");
  ASSERT_ACL_OK(aclrtHostUnregister(pinned));
  // ACL_HOST_REG_PINNED is for pageable memory only.
  EXPECT_ACL_ERROR(aclrtHostRegisterV2(pinned, 8192, ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED),
                   ACL_ERROR_INVALID_PARAM, "page-locked already");
  ASSERT_ACL_OK(aclrtFreeHost(pinned));
}

TEST_F(AclHostRegisterTest, PinnedOnlyRegistrationIsHostMemoryOnly) {
  ASSERT_ACL_OK(aclrtHostRegisterV2(host_, kBytes, ACL_HOST_REG_PINNED));
  void* devPtr = nullptr;
  EXPECT_ACL_ERROR(aclrtHostGetDevicePointer(host_, &devPtr, 0), ACL_ERROR_INVALID_PARAM,
                   "without ACL_HOST_REG_MAPPED");
  std::vector<unsigned char> in(64, 9);
  aclrtPtrAttributes attributes{};
  ASSERT_ACL_OK(aclrtPointerGetAttributes(host_, &attributes));
  EXPECT_EQ(attributes.location.type, ACL_MEM_LOCATION_TYPE_HOST);
  std::memset(host_, 5, 64);
  ASSERT_ACL_OK(aclrtMemcpy(dev_, 64, host_, 64, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(in.data(), 64, dev_, 64, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(in, std::vector<unsigned char>(64, 5));
  ASSERT_ACL_OK(aclrtHostUnregister(host_));
}

TEST_F(AclHostRegisterTest, Errors) {
  void* devPtr = nullptr;
  EXPECT_ACL_ERROR(aclrtHostRegister(host_ + 8, 4096, ACL_HOST_REGISTER_MAPPED, &devPtr),
                   ACL_ERROR_INVALID_PARAM, "not aligned to the 4096-byte page size");
  EXPECT_ACL_ERROR(aclrtHostRegister(dev_, 4096, ACL_HOST_REGISTER_MAPPED, &devPtr),
                   ACL_ERROR_INVALID_PARAM, "is device memory, not host memory");
  EXPECT_ACL_ERROR(aclrtHostRegister(host_, 4096, ACL_HOST_REGISTER_IOMEMORY, &devPtr),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "reserved and not supported");
  EXPECT_ACL_ERROR(aclrtHostRegister(host_, 4096, static_cast<aclrtHostRegisterType>(1), &devPtr),
                   ACL_ERROR_INVALID_PARAM, "type 1 is not");
  EXPECT_ACL_ERROR(aclrtHostRegister(host_, 4096, ACL_HOST_REGISTER_MAPPED, nullptr),
                   ACL_ERROR_INVALID_PARAM, "devPtr is null");
  EXPECT_ACL_ERROR(aclrtHostRegister(host_, 0, ACL_HOST_REGISTER_MAPPED, &devPtr),
                   ACL_ERROR_INVALID_PARAM, "size is 0");
  EXPECT_ACL_ERROR(aclrtHostRegisterV2(host_, 4096, 0x1), ACL_ERROR_INVALID_PARAM,
                   "flag 0x1 is not");
  EXPECT_ACL_ERROR(aclrtHostRegisterV2(host_, 4096, ACL_HOST_REG_READONLY),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported");
  ASSERT_ACL_OK(aclrtHostRegister(host_ + 4096, 4096, ACL_HOST_REGISTER_MAPPED, &devPtr));
  EXPECT_ACL_ERROR(aclrtHostRegister(host_, kBytes, ACL_HOST_REGISTER_MAPPED, &devPtr),
                   ACL_ERROR_INVALID_PARAM, "overlaps the registration");
  EXPECT_ACL_ERROR(aclrtHostUnregister(host_ + 4100), ACL_ERROR_RT_PARAM_INVALID,
                   "not the start of a registered range");
  EXPECT_ACL_ERROR(aclrtHostGetDevicePointer(host_ + 4096, &devPtr, 1), ACL_ERROR_INVALID_PARAM,
                   "flag 0");
  EXPECT_ACL_ERROR(aclrtHostUnregister(nullptr), ACL_ERROR_INVALID_PARAM, "ptr is null");
  ASSERT_ACL_OK(aclrtHostUnregister(host_ + 4096));
  ASSERT_ACL_OK(aclrtResetDevice(0));
  EXPECT_ACL_ERROR(aclrtHostRegister(host_, 4096, ACL_HOST_REGISTER_MAPPED, &devPtr),
                   ACL_ERROR_RT_CONTEXT_NULL, "no current device");
}

TEST_F(AclHostRegisterTest, EveryAcceleratorReachesRegisteredMemory) {
  for (int hac = ACL_RT_HAC_TYPE_STARS; hac <= ACL_RT_HAC_TYPE_CCU; ++hac) {
    aclrtHostMemMapCapability cap = ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED;
    ASSERT_ACL_OK(aclrtHostMemMapCapabilities(1, static_cast<aclrtHacType>(hac), &cap));
    EXPECT_EQ(cap, ACL_RT_HOST_MEM_MAP_SUPPORTED) << hac;
  }
  aclrtHostMemMapCapability cap;
  EXPECT_ACL_ERROR(aclrtHostMemMapCapabilities(4, ACL_RT_HAC_TYPE_AIC, &cap),
                   ACL_ERROR_RT_INVALID_DEVICEID, "device 4 does not exist");
  EXPECT_ACL_ERROR(aclrtHostMemMapCapabilities(0, static_cast<aclrtHacType>(10), &cap),
                   ACL_ERROR_INVALID_PARAM, "hacType 10");
  EXPECT_ACL_ERROR(aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIC, nullptr),
                   ACL_ERROR_INVALID_PARAM, "capabilities is null");
}

}  // namespace
}  // namespace cohort::acltest
