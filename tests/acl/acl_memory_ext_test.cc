// Memory beyond the basics: allocation variants and their configurations, frees that
// synchronize, pointer and usage queries, UCE (none), flush/invalidate, and the
// families that are not supported (shared buffers, symbols).
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

class AclMemoryExtTest : public AclTest {
 protected:
  void SetUp() override {
    AclTest::SetUp();
    ASSERT_ACL_OK(aclrtSetDevice(0));
  }
};

// Writes and reads back every byte through the runtime's copies, so that a pointer
// that is not device memory of `device` fails.
void expectDeviceMemory(void* p, std::size_t size, int device) {
  runtime::PointerAttributes a;
  ASSERT_OK(runtime::pointerGetAttributes(p, &a));
  EXPECT_TRUE(a.isDevice);
  EXPECT_EQ(a.device, device);
  EXPECT_EQ(a.allocationSize, size);
  std::vector<unsigned char> in(size), out(size, 0);
  for (std::size_t i = 0; i < size; ++i) in[i] = static_cast<unsigned char>(i * 7 + 1);
  ASSERT_ACL_OK(aclrtMemcpy(p, size, in.data(), size, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), size, p, size, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(in, out);
}

TEST_F(AclMemoryExtTest, AllocationVariantsGiveDeviceMemory) {
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMallocAlign32(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST));
  expectDeviceMemory(p, 100, 0);
  ASSERT_ACL_OK(aclrtFree(p));
  ASSERT_ACL_OK(aclrtMallocCached(&p, 4096, ACL_MEM_MALLOC_HUGE1G_ONLY));
  expectDeviceMemory(p, 4096, 0);
  ASSERT_ACL_OK(aclrtFree(p));
  ASSERT_ACL_OK(aclrtMallocForTaskScheduler(&p, 333, ACL_MEM_MALLOC_NORMAL_ONLY, nullptr));
  expectDeviceMemory(p, 333, 0);
  ASSERT_ACL_OK(aclrtFreeWithDevSync(p));

  aclrtMallocAttribute attrs[3];
  std::memset(attrs, 0, sizeof(attrs));
  attrs[0].attr = ACL_RT_MEM_ATTR_MODULE_ID;
  attrs[0].value.moduleId = 33;
  attrs[1].attr = ACL_RT_MEM_ATTR_DEVICE_ID;
  attrs[1].value.deviceId = 1;
  attrs[2].attr = ACL_RT_MEM_ATTR_RSV;
  aclrtMallocConfig cfg{attrs, 3};
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtMallocWithCfg(
      &p, 5000,
      static_cast<aclrtMemMallocPolicy>(ACL_MEM_TYPE_HIGH_BAND_WIDTH | ACL_MEM_MALLOC_HUGE_FIRST),
      &cfg));
  expectDeviceMemory(p, 5000, 1);
  ASSERT_ACL_OK(aclrtFree(p));
}

TEST_F(AclMemoryExtTest, AllocationVariantErrors) {
  void* p = nullptr;
  EXPECT_ACL_ERROR(aclrtMallocAlign32(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST),
                   ACL_ERROR_INVALID_PARAM, "aclrtMallocAlign32: devPtr is null");
  EXPECT_ACL_ERROR(aclrtMallocAlign32(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM,
                   "size is 0");
  EXPECT_ACL_ERROR(aclrtMallocCached(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST_P2P),
                   ACL_ERROR_INVALID_PARAM, "policy 3 is not");
  aclrtMallocAttribute attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.attr = ACL_RT_MEM_ATTR_DEVICE_ID;
  attr.value.deviceId = 2;  // not the current device
  aclrtMallocConfig cfg{&attr, 1};
  EXPECT_ACL_ERROR(aclrtMallocWithCfg(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST, &cfg),
                   ACL_ERROR_INVALID_PARAM, "asks for device 2, but the current device is 0");
  attr.attr = ACL_RT_MEM_ATTR_VA_FLAG;
  attr.value.vaFlag = 1;
  EXPECT_ACL_ERROR(aclrtMallocWithCfg(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST, &cfg),
                   ACL_ERROR_INVALID_PARAM, "VA_FLAG 1");
  attr.attr = static_cast<aclrtMallocAttrType>(9);
  EXPECT_ACL_ERROR(aclrtMallocForTaskScheduler(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST, &cfg),
                   ACL_ERROR_INVALID_PARAM, "type 9");
  aclrtMallocConfig empty{nullptr, 2};
  EXPECT_ACL_ERROR(aclrtMallocHostWithCfg(&p, 16, &empty), ACL_ERROR_INVALID_PARAM,
                   "2 attributes but no array");
  EXPECT_ACL_ERROR(aclrtMallocWithCfg(&p, 65 << 20, ACL_MEM_MALLOC_HUGE_FIRST, nullptr),
                   ACL_ERROR_RT_MEMORY_ALLOCATION, "cannot allocate");
  ASSERT_ACL_OK(aclrtResetDevice(0));
  EXPECT_ACL_ERROR(aclrtMallocAlign32(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL,
                   "no current device");
}

TEST_F(AclMemoryExtTest, HostWithCfgIsPinnedHostMemory) {
  aclrtMallocAttribute attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.attr = ACL_RT_MEM_ATTR_VA_FLAG;
  attr.value.vaFlag = 1;
  aclrtMallocConfig cfg{&attr, 1};
  void* host = nullptr;
  ASSERT_ACL_OK(aclrtMallocHostWithCfg(&host, 256, &cfg));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(host) % 64, 0u);
  runtime::PointerAttributes a;
  ASSERT_OK(runtime::pointerGetAttributes(host, &a));
  EXPECT_TRUE(a.isPinnedHost);
  EXPECT_EQ(a.allocationSize, 256u);
  ASSERT_ACL_OK(aclrtFreeHostWithDevSync(host));
  EXPECT_ACL_ERROR(aclrtFreeHostWithDevSync(host), ACL_ERROR_RT_MEMORY_FREE, "already freed");
  attr.value.vaFlag = 2;
  EXPECT_ACL_ERROR(aclrtMallocHostWithCfg(&host, 256, &cfg), ACL_ERROR_INVALID_PARAM, "VA_FLAG 2");
}

TEST_F(AclMemoryExtTest, FreeWithDevSyncWaitsForTheMemorysDevice) {
  // The memory is device 0's; the thread's current device is 1. The free must wait for
  // the copy queued on device 0 before the memory goes back to the pool.
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
  void* pinned = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, 1 << 20));
  std::memset(pinned, 0x5a, 1 << 20);
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  Gate gate;
  gate.hold(stream);
  ASSERT_ACL_OK(aclrtMemcpyAsync(dev, 1 << 20, pinned, 1 << 20, ACL_MEMCPY_HOST_TO_DEVICE, stream));
  std::atomic<bool> freed{false};
  std::thread freer([&] {
    ASSERT_ACL_OK(aclrtSetDevice(1));
    ASSERT_ACL_OK(aclrtFreeWithDevSync(dev));
    freed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(freed.load());  // still waiting for device 0's stream
  gate.open();
  freer.join();
  EXPECT_TRUE(freed.load());
  runtime::PointerAttributes a;
  ASSERT_OK(runtime::pointerGetAttributes(dev, &a));
  EXPECT_EQ(a.allocationBase, nullptr);  // freed
  EXPECT_ACL_ERROR(aclrtFreeWithDevSync(dev), ACL_ERROR_RT_MEMORY_FREE, "already freed");
  EXPECT_ACL_ERROR(aclrtFreeWithDevSync(nullptr), ACL_ERROR_INVALID_PARAM, "devPtr is null");
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclrtFreeHost(pinned));
}

TEST_F(AclMemoryExtTest, CheckMemType) {
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  void* host = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&host, 64));
  int local = 0;
  uint32_t result = 7;
  void* devs[] = {dev, static_cast<char*>(dev) + 10};
  ASSERT_ACL_OK(aclrtCheckMemType(devs, 2, ACL_RT_MEM_TYPE_DEV, &result, 0));
  EXPECT_EQ(result, 1u);
  ASSERT_ACL_OK(aclrtCheckMemType(devs, 2, ACL_RT_MEM_TYPE_RSVD, &result, 0));
  EXPECT_EQ(result, 0u);
  void* mixed[] = {dev, host};
  ASSERT_ACL_OK(
      aclrtCheckMemType(mixed, 2, ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP, &result, 0));
  EXPECT_EQ(result, 0u);  // pinned host memory is no device memory type
  void* plain[] = {&local};
  ASSERT_ACL_OK(aclrtCheckMemType(plain, 1, ACL_RT_MEM_TYPE_DEV, &result, 0));
  EXPECT_EQ(result, 0u);
  EXPECT_ACL_ERROR(aclrtCheckMemType(devs, 2, 0x1, &result, 0), ACL_ERROR_INVALID_PARAM,
                   "memType 0x1");
  EXPECT_ACL_ERROR(aclrtCheckMemType(devs, 2, ACL_RT_MEM_TYPE_DEV, &result, 1),
                   ACL_ERROR_INVALID_PARAM, "reserve 1");
  EXPECT_ACL_ERROR(aclrtCheckMemType(nullptr, 2, ACL_RT_MEM_TYPE_DEV, &result, 0),
                   ACL_ERROR_INVALID_PARAM, "addrList and checkResult");
  EXPECT_ACL_ERROR(aclrtCheckMemType(devs, 0, ACL_RT_MEM_TYPE_DEV, &result, 0),
                   ACL_ERROR_INVALID_PARAM, "size > 0");
  ASSERT_ACL_OK(aclrtFree(dev));
  ASSERT_ACL_OK(aclrtCheckMemType(devs, 1, ACL_RT_MEM_TYPE_DEV, &result, 0));
  EXPECT_EQ(result, 0u);  // freed
  ASSERT_ACL_OK(aclrtFreeHost(host));
}

TEST_F(AclMemoryExtTest, PointerGetAttributes) {
  const uint32_t page = static_cast<uint32_t>(sysconf(_SC_PAGESIZE));
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtSetDevice(2));
  ASSERT_ACL_OK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  void* host = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&host, 64));
  void* managed = nullptr;
  ASSERT_ACL_OK(aclrtMemAllocManaged(&managed, 100, ACL_RT_MEM_ATTACH_GLOBAL));
  int local = 0;
  aclrtPtrAttributes a;
  std::memset(&a, 0xff, sizeof(a));
  ASSERT_ACL_OK(aclrtPointerGetAttributes(static_cast<char*>(dev) + 3, &a));
  EXPECT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_DEVICE);
  EXPECT_EQ(a.location.id, 2u);
  EXPECT_EQ(a.pageSize, page);
  for (uint32_t r : a.rsv) EXPECT_EQ(r, 0u);
  ASSERT_ACL_OK(aclrtPointerGetAttributes(host, &a));
  EXPECT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_HOST);
  ASSERT_ACL_OK(aclrtPointerGetAttributes(managed, &a));
  EXPECT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_MANAGED);
  ASSERT_ACL_OK(aclrtPointerGetAttributes(&local, &a));
  EXPECT_EQ(a.location.type, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
  EXPECT_EQ(a.pageSize, page);
  EXPECT_ACL_ERROR(aclrtPointerGetAttributes(nullptr, &a), ACL_ERROR_INVALID_PARAM,
                   "ptr or attributes is null");
  EXPECT_ACL_ERROR(aclrtPointerGetAttributes(dev, nullptr), ACL_ERROR_INVALID_PARAM,
                   "ptr or attributes is null");
  ASSERT_ACL_OK(aclrtFree(managed));
  ASSERT_ACL_OK(aclrtFree(dev));
  ASSERT_ACL_OK(aclrtFreeHost(host));
}

TEST_F(AclMemoryExtTest, MemUsageInfoCountsEveryAllocationAndThePeak) {
  ASSERT_ACL_OK(aclrtSetDevice(3));
  aclrtMemUsageInfo info[2];
  size_t n = 99;
  ASSERT_ACL_OK(aclrtGetMemUsageInfo(3, info, 2, &n));
  ASSERT_EQ(n, 1u);
  const uint64_t before = info[0].curMemSize;
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&a, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMalloc(&b, 2 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtFree(b));
  ASSERT_ACL_OK(aclrtGetMemUsageInfo(3, info, 2, &n));
  ASSERT_EQ(n, 1u);
  EXPECT_STREQ(info[0].name, "all users");
  EXPECT_EQ(info[0].curMemSize, before + (1 << 20));
  EXPECT_GE(info[0].memPeakSize, before + (3 << 20));
  ASSERT_ACL_OK(aclrtGetMemUsageInfo(3, nullptr, 0, &n));
  EXPECT_EQ(n, 0u);
  EXPECT_ACL_ERROR(aclrtGetMemUsageInfo(3, info, 2, nullptr), ACL_ERROR_INVALID_PARAM,
                   "outputNum is null");
  EXPECT_ACL_ERROR(aclrtGetMemUsageInfo(9, info, 2, &n), ACL_ERROR_RT_INVALID_DEVICEID,
                   "device 9 does not exist");
  ASSERT_ACL_OK(aclrtFree(a));
}

TEST_F(AclMemoryExtTest, NoUncorrectableErrorsOnEmulatedMemory) {
  aclrtMemUceInfo infos[4];
  size_t n = 5;
  ASSERT_ACL_OK(aclrtGetMemUceInfo(0, infos, 4, &n));
  EXPECT_EQ(n, 0u);
  ASSERT_ACL_OK(aclrtMemUceRepair(0, nullptr, 0));
  std::memset(infos, 0, sizeof(infos));
  infos[0].addr = &n;
  infos[0].len = 8;
  EXPECT_ACL_ERROR(aclrtMemUceRepair(0, infos, 1), ACL_ERROR_INVALID_PARAM, "never reported");
  EXPECT_ACL_ERROR(aclrtGetMemUceInfo(0, infos, 4, nullptr), ACL_ERROR_INVALID_PARAM,
                   "retSize is null");
  EXPECT_ACL_ERROR(aclrtGetMemUceInfo(7, infos, 4, &n), ACL_ERROR_RT_INVALID_DEVICEID,
                   "device 7 does not exist");
  EXPECT_ACL_ERROR(aclrtMemUceRepair(0, nullptr, 1), ACL_ERROR_INVALID_PARAM,
                   "memUceInfoArray is null");
}

TEST_F(AclMemoryExtTest, FlushAndInvalidateCheckTheRange) {
  void* dev = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, 128, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemset(dev, 128, 0x33, 128));
  ASSERT_ACL_OK(aclrtMemFlush(dev, 128));
  ASSERT_ACL_OK(aclrtMemInvalidate(static_cast<char*>(dev) + 64, 64));
  unsigned char out[128];
  ASSERT_ACL_OK(aclrtMemcpy(out, 128, dev, 128, ACL_MEMCPY_DEVICE_TO_HOST));
  for (unsigned char c : out) EXPECT_EQ(c, 0x33);  // the data is untouched
  EXPECT_ACL_ERROR(aclrtMemFlush(dev, 129), ACL_ERROR_INVALID_PARAM, "overrun its allocation");
  EXPECT_ACL_ERROR(aclrtMemInvalidate(dev, 0), ACL_ERROR_INVALID_PARAM, "size is 0");
  EXPECT_ACL_ERROR(aclrtMemFlush(nullptr, 8), ACL_ERROR_INVALID_PARAM, "devPtr is null");
  ASSERT_ACL_OK(aclrtFree(dev));
}

TEST_F(AclMemoryExtTest, SharedBuffersAndSymbolsAreNotSupported) {
  aclrtMbuf buf = nullptr;
  size_t size = 0;
  void* data = nullptr;
  uint32_t num = 0;
  char bytes[8] = {};
  EXPECT_ACL_ERROR(aclrtAllocBuf(&buf, 64), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtAllocBuf");
  EXPECT_ACL_ERROR(aclrtFreeBuf(buf), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtFreeBuf");
  EXPECT_ACL_ERROR(aclrtGetBufData(buf, &data, &size), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtGetBufData");
  EXPECT_ACL_ERROR(aclrtGetBufDataLen(buf, &size), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtGetBufDataLen");
  EXPECT_ACL_ERROR(aclrtSetBufDataLen(buf, 1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtSetBufDataLen");
  EXPECT_ACL_ERROR(aclrtGetBufUserData(buf, bytes, 8, 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtGetBufUserData");
  EXPECT_ACL_ERROR(aclrtSetBufUserData(buf, bytes, 8, 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtSetBufUserData");
  EXPECT_ACL_ERROR(aclrtAppendBufChain(buf, buf), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtAppendBufChain");
  EXPECT_ACL_ERROR(aclrtGetBufChainNum(buf, &num), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtGetBufChainNum");
  EXPECT_ACL_ERROR(aclrtGetBufFromChain(buf, 0, &buf), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                   "aclrtGetBufFromChain");
  EXPECT_ACL_ERROR(aclrtCopyBufRef(buf, &buf), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtCopyBufRef");
  int symbol = 0;
  EXPECT_ACL_ERROR(aclrtMemcpyToSymbol(&symbol, bytes, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyToSymbol");
  EXPECT_ACL_ERROR(aclrtMemcpyFromSymbol(bytes, 8, &symbol, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyFromSymbol");
  EXPECT_ACL_ERROR(
      aclrtMemcpyToSymbolAsync(&symbol, bytes, 4, 0, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
      ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyToSymbolAsync");
  EXPECT_ACL_ERROR(
      aclrtMemcpyFromSymbolAsync(bytes, 8, &symbol, 4, 0, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
      ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtMemcpyFromSymbolAsync");
  EXPECT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
}

}  // namespace
}  // namespace cohort::acltest
