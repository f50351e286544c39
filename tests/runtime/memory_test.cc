#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cohort/runtime.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

class MemoryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(setDevice(0)); }
  void TearDown() override { ASSERT_OK(resetDevice(0)); }
};

TEST_F(MemoryTest, AllocationsAreAlignedAndDisjoint) {
  std::vector<void*> ptrs;
  for (std::size_t size : {1u, 63u, 64u, 100u, 4095u, 65536u, 1000000u}) {
    void* p = nullptr;
    ASSERT_OK(deviceMalloc(&p, size));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u) << size;
    if (size >= 65536) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u) << size;
    }
    std::memset(p, static_cast<int>(ptrs.size() + 1), size);
    ptrs.push_back(p);
  }
  // Each block still holds its own fill: no two allocations overlap.
  const std::size_t sizes[] = {1, 63, 64, 100, 4095, 65536, 1000000};
  for (std::size_t i = 0; i < ptrs.size(); ++i) {
    const auto* bytes = static_cast<unsigned char*>(ptrs[i]);
    for (std::size_t b = 0; b < sizes[i]; ++b) ASSERT_EQ(bytes[b], i + 1) << i << " " << b;
  }
  for (void* p : ptrs) ASSERT_OK(deviceFree(p));
}

TEST_F(MemoryTest, FreedMemoryIsReusedFromThePool) {
  void* a = nullptr;
  ASSERT_OK(deviceMalloc(&a, 8 << 20));
  ASSERT_OK(deviceFree(a));
  void* b = nullptr;
  ASSERT_OK(deviceMalloc(&b, 8 << 20));
  EXPECT_EQ(a, b);  // same (already faulted-in) pages
  ASSERT_OK(deviceFree(b));
}

TEST_F(MemoryTest, FreeingFragmentsCoalesces) {
  void* p[4];
  for (auto& x : p) ASSERT_OK(deviceMalloc(&x, 16 << 20));  // fills the 64 MiB device
  void* extra = nullptr;
  EXPECT_ERROR(deviceMalloc(&extra, 64), kOutOfMemory, "device 0");
  ASSERT_OK(deviceFree(p[1]));
  ASSERT_OK(deviceFree(p[2]));
  ASSERT_OK(deviceMalloc(&extra, 32 << 20));  // needs the two neighbours merged
  EXPECT_EQ(extra, p[1]);
  ASSERT_OK(deviceFree(extra));
  ASSERT_OK(deviceFree(p[0]));
  ASSERT_OK(deviceFree(p[3]));
}

TEST_F(MemoryTest, OutOfMemoryIsAnErrorNotACrash) {
  void* p = nullptr;
  EXPECT_ERROR(deviceMalloc(&p, std::size_t(1) << 40), kOutOfMemory,
               "COHORT_DEVICE_MEMORY");
  EXPECT_ERROR(deviceMalloc(&p, 0), kInvalidArgument, "size is 0");
  EXPECT_ERROR(deviceMalloc(nullptr, 8), kInvalidArgument, "null");
}

TEST_F(MemoryTest, BadFreesHaveDistinctCodes) {
  void* p = nullptr;
  ASSERT_OK(deviceMalloc(&p, 256));
  EXPECT_ERROR(deviceFree(static_cast<char*>(p) + 64), kInvalidPointer,
               "not the start of a live allocation");
  ASSERT_OK(deviceFree(p));
  EXPECT_ERROR(deviceFree(p), kDoubleFree, "already freed");
  int onStack = 0;
  EXPECT_ERROR(deviceFree(&onStack), kInvalidPointer, "not device memory");
  EXPECT_ERROR(deviceFree(nullptr), kInvalidArgument, "null");
}

TEST_F(MemoryTest, MemcpyInEveryDirection) {
  constexpr std::size_t n = 4097;
  std::vector<unsigned char> host(n), back(n, 0);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 7 + 3);
  void *d0 = nullptr, *d1 = nullptr;
  ASSERT_OK(deviceMalloc(&d0, n));
  ASSERT_OK(deviceMalloc(&d1, n));
  ASSERT_OK(memcpy(d0, n, host.data(), n, MemcpyKind::kHostToDevice));
  ASSERT_OK(memcpy(d1, n, d0, n, MemcpyKind::kDeviceToDevice));
  ASSERT_OK(memcpy(back.data(), n, d1, n, MemcpyKind::kDeviceToHost));
  EXPECT_EQ(host, back);
  std::vector<unsigned char> again(n, 0);
  ASSERT_OK(memcpy(again.data(), n, back.data(), n, MemcpyKind::kHostToHost));
  EXPECT_EQ(host, again);
  std::fill(back.begin(), back.end(), 0);
  ASSERT_OK(memcpy(back.data(), n, d0, n, MemcpyKind::kDefault));
  EXPECT_EQ(host, back);
  ASSERT_OK(memcpy(back.data(), n, d0, 0, MemcpyKind::kDeviceToHost));  // count 0: no-op
  ASSERT_OK(deviceFree(d0));
  ASSERT_OK(deviceFree(d1));
}

TEST_F(MemoryTest, MemcpyErrorsHaveDistinctCodes) {
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&d, 1024));
  std::vector<char> host(4096);
  // Kind contradicts the pointers.
  EXPECT_ERROR(memcpy(host.data(), 1024, d, 1024, MemcpyKind::kHostToDevice), kInvalidMemcpyKind,
               "kind host-to-device contradicts the pointers");
  EXPECT_ERROR(memcpy(d, 1024, host.data(), 1024, MemcpyKind::kDeviceToDevice), kInvalidMemcpyKind,
               "source");
  EXPECT_ERROR(memcpy(d, 1024, d, 16, static_cast<MemcpyKind>(9)), kInvalidMemcpyKind, "unknown");
  // count over destMax, and over the allocation.
  EXPECT_ERROR(memcpy(d, 512, host.data(), 1024, MemcpyKind::kHostToDevice), kSizeOverflow,
               "count 1024 exceeds destMax 512");
  EXPECT_ERROR(memcpy(d, 4096, host.data(), 2048, MemcpyKind::kHostToDevice), kSizeOverflow,
               "overrun its allocation");
  EXPECT_ERROR(memcpy(static_cast<char*>(d) + 1000, 100, host.data(), 100,
                      MemcpyKind::kHostToDevice), kSizeOverflow, "24 bytes left of 1024");
  // Null and freed pointers.
  EXPECT_ERROR(memcpy(nullptr, 16, host.data(), 16, MemcpyKind::kHostToHost), kInvalidArgument,
               "destination pointer is null");
  ASSERT_OK(deviceFree(d));
  EXPECT_ERROR(memcpy(host.data(), 16, d, 16, MemcpyKind::kDeviceToHost), kInvalidPointer,
               "not in a live allocation");
}

TEST_F(MemoryTest, Memset) {
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&d, 300));
  ASSERT_OK(memset(d, 300, 0xAB, 300));
  std::vector<unsigned char> back(300);
  ASSERT_OK(memcpy(back.data(), 300, d, 300, MemcpyKind::kDeviceToHost));
  for (unsigned char b : back) ASSERT_EQ(b, 0xAB);
  EXPECT_ERROR(memset(d, 300, 0, 301), kSizeOverflow, "exceeds destMax");
  EXPECT_ERROR(memset(d, 400, 0, 301), kSizeOverflow, "overrun");
  EXPECT_ERROR(memset(nullptr, 4, 0, 4), kInvalidArgument, "null");
  ASSERT_OK(deviceFree(d));
}

TEST_F(MemoryTest, PinnedHostMemory) {
  void* h = nullptr;
  ASSERT_OK(hostMalloc(&h, 1000));
  PointerAttributes a;
  ASSERT_OK(pointerGetAttributes(h, &a));
  EXPECT_TRUE(a.isPinnedHost);
  EXPECT_FALSE(a.isDevice);
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&d, 1000));
  std::memset(h, 5, 1000);
  ASSERT_OK(memcpy(d, 1000, h, 1000, MemcpyKind::kHostToDevice));
  EXPECT_ERROR(memcpy(d, 1000, h, 1000, MemcpyKind::kDeviceToDevice), kInvalidMemcpyKind,
               "pinned host memory");
  EXPECT_ERROR(deviceFree(h), kInvalidPointer, "pinned host memory, not device memory");
  EXPECT_ERROR(hostFree(d), kInvalidPointer, "not pinned host memory");
  ASSERT_OK(hostFree(h));
  EXPECT_ERROR(hostFree(h), kDoubleFree, "already freed");
  ASSERT_OK(deviceFree(d));
}

TEST_F(MemoryTest, PointerAttributesKnowTheOwner) {
  void* d = nullptr;
  ASSERT_OK(deviceMalloc(&d, 5000));
  PointerAttributes a;
  ASSERT_OK(pointerGetAttributes(static_cast<char*>(d) + 10, &a));
  EXPECT_TRUE(a.isDevice);
  EXPECT_EQ(a.device, 0);
  EXPECT_EQ(a.allocationBase, d);
  EXPECT_EQ(a.allocationSize, 5000u);
  int local = 0;
  ASSERT_OK(pointerGetAttributes(&local, &a));
  EXPECT_FALSE(a.isDevice);
  EXPECT_FALSE(a.isPinnedHost);
  EXPECT_EQ(a.device, -1);
  ASSERT_OK(deviceFree(d));
}

// Whoever remembers a check of a pointer (the communicator's buffer check) relies
// on the generation moving after every kind of change that could alter the check.
TEST_F(MemoryTest, EveryChangeToMemoryMovesTheGeneration) {
  std::uint64_t last = memoryGeneration();
  std::vector<std::string> still;
  auto moved = [&](Status s, const char* what) {
    ASSERT_OK(s);
    const std::uint64_t now = memoryGeneration();
    if (now == last) still.push_back(what);
    last = now;
  };
  void* d = nullptr;
  moved(deviceMalloc(&d, 4096), "deviceMalloc");
  PointerAttributes a;
  ASSERT_OK(pointerGetAttributes(d, &a));  // a look changes nothing
  EXPECT_EQ(memoryGeneration(), last);
  MemHandle handle;
  ASSERT_OK(memExport(d, &handle));
  void* imported = nullptr;
  moved(memImport(handle, &imported), "memImport");
  moved(memClose(imported), "memClose");
  moved(deviceFree(d), "deviceFree");
  void* pinned = nullptr;
  moved(hostMalloc(&pinned, 4096), "hostMalloc");
  moved(hostFree(pinned), "hostFree");
  void* managed = nullptr;
  moved(managedMalloc(&managed, 4096), "managedMalloc");
  moved(deviceFree(managed), "deviceFree of managed memory");
  std::unique_ptr<void, decltype(&std::free)> host(std::aligned_alloc(4096, 4096), &std::free);
  moved(hostRegister(host.get(), 4096, false, 0), "hostRegister");
  moved(hostUnregister(host.get()), "hostUnregister");
  const std::size_t g = vmmGranularity();
  void* va = nullptr;
  PhysicalMemory* mem = nullptr;
  moved(vmmReserve(g, 0, nullptr, &va), "vmmReserve");
  ASSERT_OK(vmmCreate(0, g, 0, &mem));
  last = memoryGeneration();
  moved(vmmMap(va, g, 0, mem), "vmmMap");
  moved(vmmSetAccess(va, g, VmmAccess::kRead), "vmmSetAccess");
  moved(vmmUnmap(va), "vmmUnmap");
  ASSERT_OK(vmmDestroy(mem));
  moved(vmmRelease(va), "vmmRelease");
  ASSERT_OK(deviceMalloc(&d, 4096));
  last = memoryGeneration();
  moved(resetDevice(0), "resetDevice");
  ASSERT_OK(setDevice(0));
  EXPECT_TRUE(still.empty()) << "the generation stayed after: " << ::testing::PrintToString(still);
}

// Reserved addresses with nothing mapped there fault if touched: copies and sets
// refuse them (before a mapping and after its unmap), and they are described as
// device memory outside any live allocation.
TEST_F(MemoryTest, ReservedAddressesWithNothingMappedAreRefusedNotTouched) {
  const std::size_t g = vmmGranularity();
  void* va = nullptr;
  ASSERT_OK(vmmReserve(g, 0, nullptr, &va));
  std::vector<char> host(64, 1);
  char* inside = static_cast<char*>(va) + 128;
  auto refused = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_ERROR(memcpy(inside, 64, host.data(), 64, MemcpyKind::kHostToDevice),
                 kInvalidPointer, "nothing mapped there");
    EXPECT_ERROR(memcpy(host.data(), 64, inside, 64, MemcpyKind::kDeviceToHost),
                 kInvalidPointer, "nothing mapped there");
    EXPECT_ERROR(memset(inside, 64, 0, 64), kInvalidPointer, "nothing mapped there");
    PointerAttributes a;
    ASSERT_OK(pointerGetAttributes(inside, &a));
    EXPECT_TRUE(a.isDevice && a.isMapped);
    EXPECT_EQ(a.allocationBase, nullptr);
  };
  refused("before a mapping");
  PhysicalMemory* mem = nullptr;
  ASSERT_OK(vmmCreate(0, g, 0, &mem));
  ASSERT_OK(vmmMap(va, g, 0, mem));
  ASSERT_OK(memcpy(inside, 64, host.data(), 64, MemcpyKind::kHostToDevice));
  EXPECT_EQ(inside[63], 1);
  ASSERT_OK(vmmUnmap(va));
  refused("after the unmap");
  ASSERT_OK(vmmDestroy(mem));
  ASSERT_OK(vmmRelease(va));
}

TEST(MemoryNoDeviceTest, AllocationNeedsACurrentDevice) {
  void* p = nullptr;
  EXPECT_ERROR(deviceMalloc(&p, 64), kInvalidDevice, "setDevice");
}

}  // namespace
}  // namespace cohort::runtime
