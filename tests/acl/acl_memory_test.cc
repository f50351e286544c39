// Memory: allocation with every policy, copies with their checks, memset, info.
#include <cstring>
#include <vector>

#include "acl/ops/acl_dvpp.h"
#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

class AclMemoryTest : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
  }
};

TEST_F(AclMemoryTest, MallocAcceptsEveryPolicy) {
  const int policies[] = {ACL_MEM_MALLOC_HUGE_FIRST,          ACL_MEM_MALLOC_HUGE_ONLY,
                          ACL_MEM_MALLOC_NORMAL_ONLY,         ACL_MEM_MALLOC_HUGE_FIRST_P2P,
                          ACL_MEM_MALLOC_HUGE_ONLY_P2P,       ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
                          ACL_MEM_MALLOC_HUGE1G_ONLY,         ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
                          ACL_MEM_TYPE_LOW_BAND_WIDTH,        ACL_MEM_TYPE_HIGH_BAND_WIDTH,
                          ACL_MEM_ACCESS_USER_SPACE_READONLY, 12345};
  for (int policy : policies) {
    void* p = nullptr;
    ASSERT_ACL_OK(aclrtMalloc(&p, 1000, static_cast<aclrtMemMallocPolicy>(policy)));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    runtime::PointerAttributes attributes;
    ASSERT_OK(runtime::pointerGetAttributes(p, &attributes));
    EXPECT_TRUE(attributes.isDevice);
    EXPECT_EQ(attributes.device, 0);
    ASSERT_ACL_OK(aclrtFree(p));
  }
}

TEST_F(AclMemoryTest, MallocErrors) {
  void* p = nullptr;
  EXPECT_ACL_ERROR(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM,
                   "size is 0");
  EXPECT_ACL_ERROR(aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM,
                   "devPtr is null");
  EXPECT_ACL_ERROR(aclrtMalloc(&p, 65 << 20, ACL_MEM_MALLOC_HUGE_FIRST),
                   ACL_ERROR_RT_MEMORY_ALLOCATION, "out of memory");  // 64M devices
  ASSERT_ACL_OK(aclrtResetDevice(0));
  EXPECT_ACL_ERROR(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL,
                   "aclrtMalloc: no current device");
}

// DVPP memory is device memory of the current device: copies reach it, and it is
// released by acldvppFree (not by the host's free calls).
TEST_F(AclMemoryTest, DvppMemoryIsDeviceMemory) {
  void* p = nullptr;
  ASSERT_ACL_OK(acldvppMalloc(&p, 1000));
  runtime::PointerAttributes attributes;
  ASSERT_OK(runtime::pointerGetAttributes(p, &attributes));
  EXPECT_TRUE(attributes.isDevice);
  EXPECT_EQ(attributes.device, 0);
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_ACL_OK(aclrtMemcpy(p, 1000, in.data(), 1000, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), 1000, p, 1000, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(in, out);
  ASSERT_ACL_OK(acldvppFree(p));
  EXPECT_ACL_ERROR(acldvppFree(p), ACL_ERROR_RT_MEMORY_FREE, "acldvppFree");
  EXPECT_ACL_ERROR(acldvppFree(nullptr), ACL_ERROR_INVALID_PARAM, "devPtr is null");
  EXPECT_ACL_ERROR(acldvppMalloc(nullptr, 16), ACL_ERROR_INVALID_PARAM, "devPtr is null");
  EXPECT_ACL_ERROR(acldvppMalloc(&p, 0), ACL_ERROR_INVALID_PARAM, "size is 0");
  ASSERT_ACL_OK(aclrtResetDevice(0));
  EXPECT_ACL_ERROR(acldvppMalloc(&p, 16), ACL_ERROR_RT_CONTEXT_NULL, "no current device");
}

TEST_F(AclMemoryTest, FreeErrors) {
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtFree(p));
  EXPECT_ACL_ERROR(aclrtFree(p), ACL_ERROR_RT_MEMORY_FREE, "was already freed");
  int local = 0;
  EXPECT_ACL_ERROR(aclrtFree(&local), ACL_ERROR_RT_MEMORY_FREE, "not device memory");
  EXPECT_ACL_ERROR(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM, "ptr is null");
  void* pinned = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, 256));
  EXPECT_ACL_ERROR(aclrtFree(pinned), ACL_ERROR_RT_MEMORY_FREE, "pinned host memory");
  ASSERT_ACL_OK(aclrtFreeHost(pinned));
  EXPECT_ACL_ERROR(aclrtFreeHost(pinned), ACL_ERROR_RT_MEMORY_FREE, "was already freed");
  EXPECT_ACL_ERROR(aclrtFreeHost(&local), ACL_ERROR_RT_MEMORY_FREE, "not pinned host memory");
  EXPECT_ACL_ERROR(aclrtMallocHost(&pinned, 0), ACL_ERROR_INVALID_PARAM, "size is 0");
  EXPECT_ACL_ERROR(aclrtMallocHost(nullptr, 8), ACL_ERROR_INVALID_PARAM, "ptr is null");
}

// host -> device a -> device b -> host -> host, each copy named by the kind given, every
// byte compared; a and b are left holding the data.
void expectRoundTrip(std::size_t size, aclrtMemcpyKind in, aclrtMemcpyKind between,
                     aclrtMemcpyKind out, aclrtMemcpyKind hostToHost, void** a, void** b) {
  std::vector<unsigned char> host(size), back(size, 0), other(size, 0);
  for (size_t i = 0; i < size; ++i) host[i] = static_cast<unsigned char>(i * 13 + 1);
  ASSERT_ACL_OK(aclrtMalloc(a, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMalloc(b, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemcpy(*a, size, host.data(), size, in));
  ASSERT_ACL_OK(aclrtMemcpy(*b, size, *a, size, between));
  ASSERT_ACL_OK(aclrtMemcpy(back.data(), size, *b, size, out));
  EXPECT_EQ(back, host);
  ASSERT_ACL_OK(aclrtMemcpy(other.data(), size, back.data(), size, hostToHost));
  EXPECT_EQ(other, host);
}

TEST_F(AclMemoryTest, MemcpyEveryKind) {
  const size_t size = 4096;
  void *a = nullptr, *b = nullptr;
  expectRoundTrip(size, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_DEVICE,
                  ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_HOST, &a, &b);
  ASSERT_FALSE(HasFatalFailure());
  std::vector<unsigned char> host(size), back(size, 0);
  for (size_t i = 0; i < size; ++i) host[i] = static_cast<unsigned char>(i * 13 + 1);
  // The ACL-only kinds, and the default kind, are variants of the same copies.
  ASSERT_ACL_OK(aclrtMemset(a, size, 0, size));
  ASSERT_ACL_OK(aclrtMemcpy(a, size, host.data(), size, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(b, size, a, size, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(a, size, b, size, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(back.data(), size, a, size, ACL_MEMCPY_DEFAULT));
  EXPECT_EQ(back, host);
}

// aclrtMemcpy's kind is a reserved parameter in CANN's documentation: the copy goes
// by the two pointers, whatever kind names.
TEST_F(AclMemoryTest, MemcpyGoesByThePointersWhateverTheKind) {
  void *a = nullptr, *b = nullptr;
  expectRoundTrip(999, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_HOST,
                  ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_DEVICE, &a, &b);
  if (a != nullptr) ASSERT_ACL_OK(aclrtFree(a));
  if (b != nullptr) ASSERT_ACL_OK(aclrtFree(b));
}

TEST_F(AclMemoryTest, MemcpyErrors) {
  const size_t size = 1024;
  std::vector<unsigned char> host(2 * size);
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_ACL_ERROR(aclrtMemcpy(dev, size, host.data(), 2 * size, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_INVALID_PARAM, "count 2048 exceeds destMax 1024");
  EXPECT_ACL_ERROR(aclrtMemcpy(dev, 2 * size, host.data(), 2 * size, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_INVALID_PARAM, "overrun its allocation");
  EXPECT_ACL_ERROR(aclrtMemcpy(dev, size, host.data(), size, static_cast<aclrtMemcpyKind>(8)),
                   ACL_ERROR_INVALID_PARAM, "kind 8 is not an aclrtMemcpyKind");
  EXPECT_ACL_ERROR(aclrtMemcpy(nullptr, size, host.data(), size, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_INVALID_PARAM, "destination pointer is null");
  ASSERT_ACL_OK(aclrtFree(dev));
  EXPECT_ACL_ERROR(aclrtMemcpy(dev, size, host.data(), size, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_RT_PARAM_INVALID, "not in a live allocation");
}

TEST_F(AclMemoryTest, MemcpyAsyncWithPinnedMemoryIsAsynchronous) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  const size_t size = 1 << 16;
  void *dev = nullptr, *pinned = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, size));
  std::memset(pinned, 0x11, size);
  Gate gate;
  gate.hold(stream);
  ASSERT_ACL_OK(aclrtMemcpyAsync(dev, size, pinned, size, ACL_MEMCPY_HOST_TO_DEVICE, stream));
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(stream, 10), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  std::memset(pinned, 0, size);
  ASSERT_ACL_OK(aclrtMemcpy(pinned, size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(static_cast<unsigned char*>(pinned)[size - 1], 0x11);
}

TEST_F(AclMemoryTest, MemcpyAsyncWithPageableMemoryReturnsAfterTheCopy) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  const size_t size = 1 << 16;
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, size, 0x42, size, stream));
  std::vector<unsigned char> out(size, 0);
  ASSERT_ACL_OK(aclrtMemcpyAsync(out.data(), size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST, stream));
  EXPECT_EQ(out[0], 0x42);  // no synchronisation needed
  EXPECT_EQ(out[size - 1], 0x42);
  ASSERT_ACL_OK(aclrtMemcpyAsync(out.data(), size, dev, size, ACL_MEMCPY_DEFAULT, nullptr));
}

TEST_F(AclMemoryTest, MemcpyAsyncErrors) {
  std::vector<unsigned char> a(64), b(64);
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_ACL_ERROR(aclrtMemcpyAsync(a.data(), 64, b.data(), 64, ACL_MEMCPY_HOST_TO_HOST, nullptr),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "host-to-host copies are not asynchronous");
  EXPECT_ACL_ERROR(aclrtMemcpyAsync(a.data(), 64, b.data(), 64, ACL_MEMCPY_DEFAULT, nullptr),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "host-to-host");
  EXPECT_ACL_ERROR(aclrtMemcpyAsync(dev, 32, a.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
                   ACL_ERROR_INVALID_PARAM, "count 64 exceeds destMax 32");
  EXPECT_ACL_ERROR(
      aclrtMemcpyAsync(dev, 64, a.data(), 64, static_cast<aclrtMemcpyKind>(-1), nullptr),
      ACL_ERROR_INVALID_PARAM, "kind -1 is not an aclrtMemcpyKind");
  int bogus = 0;
  EXPECT_ACL_ERROR(aclrtMemcpyAsync(dev, 64, a.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE, &bogus),
                   ACL_ERROR_RT_INVALID_HANDLE, "is not a live stream");
  ASSERT_ACL_OK(aclrtResetDevice(0));
  EXPECT_ACL_ERROR(aclrtMemcpyAsync(a.data(), 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
                   ACL_ERROR_RT_CONTEXT_NULL, "aclrtMemcpyAsync: no current device");
}

TEST_F(AclMemoryTest, MemsetSyncAndAsync) {
  const size_t size = 8192;
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemset(dev, size, 0x5, size));
  std::vector<unsigned char> out(size);
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(out, std::vector<unsigned char>(size, 0x5));
  ASSERT_ACL_OK(aclrtMemsetAsync(dev, size, 0x9, size / 2, nullptr));
  ASSERT_ACL_OK(aclrtSynchronizeStream(nullptr));
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), size, dev, size, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(out[0], 0x9);
  EXPECT_EQ(out[size / 2 - 1], 0x9);
  EXPECT_EQ(out[size / 2], 0x5);
  EXPECT_ACL_ERROR(aclrtMemset(dev, size, 0, size + 1), ACL_ERROR_INVALID_PARAM,
                   "count 8193 exceeds destMax 8192");
  EXPECT_ACL_ERROR(aclrtMemsetAsync(nullptr, size, 0, size, nullptr), ACL_ERROR_INVALID_PARAM,
                   "pointer is null");
}

TEST_F(AclMemoryTest, GetMemInfo) {
  size_t free = 0, total = 0;
  ASSERT_ACL_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total));
  EXPECT_EQ(total, size_t{64} << 20);
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&p, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
  size_t freeAfter = 0;
  for (int attr = ACL_DDR_MEM; attr <= ACL_MEM_P2P_HUGE1G; ++attr) {
    ASSERT_ACL_OK(aclrtGetMemInfo(static_cast<aclrtMemAttr>(attr), &freeAfter, &total));
    EXPECT_EQ(freeAfter, free - (1 << 20)) << "attr " << attr;
  }
  EXPECT_ACL_ERROR(aclrtGetMemInfo(static_cast<aclrtMemAttr>(18), &free, &total),
                   ACL_ERROR_INVALID_PARAM, "attr 18 is not an aclrtMemAttr");
  EXPECT_ACL_ERROR(aclrtGetMemInfo(ACL_HBM_MEM, nullptr, &total), ACL_ERROR_INVALID_PARAM,
                   "free or total is null");
  ASSERT_ACL_OK(aclrtResetDevice(0));
  EXPECT_ACL_ERROR(aclrtGetMemInfo(ACL_HBM_MEM, &free, &total), ACL_ERROR_RT_CONTEXT_NULL,
                   "no current device");
}

}  // namespace
}  // namespace cohort::acltest
