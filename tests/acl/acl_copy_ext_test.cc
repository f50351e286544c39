// Copies beyond aclrtMemcpy: 2D copies with pitches, batches, copies whose addresses
// are read when they run (offsets, descriptors), 32-bit memsets, and the deprecated
// WithCondition form.
#include <cstdint>
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

class AclCopyExtTest : public AclDevice0StreamTest {
 protected:
  void* deviceBuffer(size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    buffers_.push_back(p);
    return p;
  }
  std::vector<unsigned char> read(const void* dev, size_t bytes) {
    std::vector<unsigned char> out(bytes);
    EXPECT_EQ(aclrtMemcpy(out.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return out;
  }
  std::vector<void*> buffers_;  // freed by aclFinalize's device reset
};

// A matrix of rows x width bytes laid out `pitch` bytes per row; byte (r, c) = f(r, c).
std::vector<unsigned char> matrix(size_t rows, size_t pitch, size_t width) {
  std::vector<unsigned char> m(rows * pitch, 0xee);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < width; ++c) m[r * pitch + c] = static_cast<unsigned char>(r * 31 + c);
  }
  return m;
}

TEST_F(AclCopyExtTest, Memcpy2dHonoursBothPitches) {
  const size_t rows = 5, width = 10, spitch = 16, dpitch = 24;
  const std::vector<unsigned char> src = matrix(rows, spitch, width);
  void* dev = deviceBuffer(rows * dpitch);
  ASSERT_ACL_OK(aclrtMemset(dev, rows * dpitch, 0x11, rows * dpitch));
  // The last row ends at (rows - 1) * pitch + width: no more is read or written.
  ASSERT_ACL_OK(
      aclrtMemcpy2d(dev, dpitch, src.data(), spitch, width, rows, ACL_MEMCPY_HOST_TO_DEVICE));
  const std::vector<unsigned char> onDev = read(dev, rows * dpitch);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < dpitch; ++c) {
      const unsigned char want = c < width ? static_cast<unsigned char>(r * 31 + c) : 0x11;
      ASSERT_EQ(onDev[r * dpitch + c], want) << r << "," << c;
    }
  }
  // Back to the host with a third pitch.
  const size_t hpitch = 12;
  std::vector<unsigned char> back(rows * hpitch, 0x77);
  ASSERT_ACL_OK(
      aclrtMemcpy2d(back.data(), hpitch, dev, dpitch, width, rows, ACL_MEMCPY_DEVICE_TO_HOST));
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < hpitch; ++c) {
      const unsigned char want = c < width ? static_cast<unsigned char>(r * 31 + c) : 0x77;
      ASSERT_EQ(back[r * hpitch + c], want) << r << "," << c;
    }
  }
}

TEST_F(AclCopyExtTest, Memcpy2dAsyncOnTheStreamAndDeviceToDevice) {
  const size_t rows = 64, width = 100, spitch = 128, dpitch = 100;
  void* pinned = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, rows * spitch));
  const std::vector<unsigned char> src = matrix(rows, spitch, width);
  std::memcpy(pinned, src.data(), src.size());
  void* a = deviceBuffer(rows * dpitch);
  void* b = deviceBuffer(rows * 256);
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtMemcpy2dAsync(a, dpitch, pinned, spitch, width, rows,
                                   ACL_MEMCPY_HOST_TO_DEVICE, stream_));
  ASSERT_ACL_OK(
      aclrtMemcpy2dAsync(b, 256, a, dpitch, width, rows, ACL_MEMCPY_DEVICE_TO_DEVICE, stream_));
  gate.open();  // pinned memory: the calls returned before the copies ran
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  const std::vector<unsigned char> onB = read(b, rows * 256);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < width; ++c) {
      ASSERT_EQ(onB[r * 256 + c], static_cast<unsigned char>(r * 31 + c)) << r << "," << c;
    }
  }
  // Pageable host memory: the call returns after the copy.
  std::vector<unsigned char> host(rows * width, 0);
  ASSERT_ACL_OK(aclrtMemcpy2dAsync(host.data(), width, b, 256, width, rows,
                                   ACL_MEMCPY_DEVICE_TO_HOST, stream_));
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < width; ++c) {
      ASSERT_EQ(host[r * width + c], static_cast<unsigned char>(r * 31 + c));
    }
  }
  ASSERT_ACL_OK(aclrtFreeHost(pinned));
}

TEST_F(AclCopyExtTest, Memcpy2dErrors) {
  void* dev = deviceBuffer(256);
  std::vector<unsigned char> host(256);
  EXPECT_ACL_ERROR(aclrtMemcpy2d(dev, 16, host.data(), 16, 8, 4, ACL_MEMCPY_DEVICE_TO_DEVICE),
                   ACL_ERROR_INVALID_PARAM, "kind 3 is not supported");
  EXPECT_ACL_ERROR(
      aclrtMemcpy2dAsync(dev, 16, host.data(), 16, 8, 4, ACL_MEMCPY_HOST_TO_HOST, stream_),
      ACL_ERROR_INVALID_PARAM, "kind 0 is not supported");
  EXPECT_ACL_ERROR(aclrtMemcpy2d(dev, 16, host.data(), 8, 12, 4, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_INVALID_PARAM, "width 12 exceeds dpitch 16 or spitch 8");
  EXPECT_ACL_ERROR(aclrtMemcpy2dAsync(dev, 5000001, host.data(), 5000001, 5000001, 1,
                                      ACL_MEMCPY_HOST_TO_DEVICE, stream_),
                   ACL_ERROR_INVALID_PARAM, "above the limits");
  EXPECT_ACL_ERROR(aclrtMemcpy2d(dev, 64, host.data(), 16, 16, 5, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_INVALID_PARAM, "overrun its allocation");  // 4 * 64 + 16 > 256
  EXPECT_ACL_ERROR(aclrtMemcpy2d(host.data(), 16, dev, 16, 8, 4, ACL_MEMCPY_HOST_TO_DEVICE),
                   ACL_ERROR_RT_PARAM_INVALID, "wants device memory for dst");
  EXPECT_ACL_ERROR(aclrtMemcpy2d(nullptr, 16, dev, 16, 8, 4, ACL_MEMCPY_DEVICE_TO_HOST),
                   ACL_ERROR_INVALID_PARAM, "dst is null");
  ASSERT_ACL_OK(aclrtMemcpy2d(dev, 16, host.data(), 16, 0, 4, ACL_MEMCPY_HOST_TO_DEVICE));
}

aclrtMemcpyBatchAttr attr(aclrtMemLocationType dstType, uint32_t dstId,
                          aclrtMemLocationType srcType, uint32_t srcId) {
  aclrtMemcpyBatchAttr a;
  std::memset(&a, 0, sizeof(a));
  a.dstLoc.type = dstType;
  a.dstLoc.id = dstId;
  a.srcLoc.type = srcType;
  a.srcLoc.id = srcId;
  return a;
}

TEST_F(AclCopyExtTest, BatchCopiesEverySegment) {
  // Four host segments of different sizes to device 0 (first attribute) and device 1
  // (second attribute, from copy 2 on), then all of them back.
  const size_t sizes[4] = {100, 3000, 1, 4096};
  std::vector<std::vector<unsigned char>> hosts;
  void* devs[4];
  for (int i = 0; i < 4; ++i) {
    hosts.emplace_back(sizes[i]);
    for (size_t j = 0; j < sizes[i]; ++j) hosts[i][j] = static_cast<unsigned char>(i * 50 + j);
    if (i == 2) ASSERT_ACL_OK(aclrtSetDevice(1));
    devs[i] = deviceBuffer(sizes[i] + 16);
  }
  ASSERT_ACL_OK(aclrtSetDevice(0));
  void* dsts[4];
  void* srcs[4];
  size_t destMaxs[4], sz[4];
  for (int i = 0; i < 4; ++i) {
    dsts[i] = devs[i];
    srcs[i] = hosts[i].data();
    destMaxs[i] = sizes[i] + 16;
    sz[i] = sizes[i];
  }
  aclrtMemcpyBatchAttr attrs[2] = {
      attr(ACL_MEM_LOCATION_TYPE_DEVICE, 0, ACL_MEM_LOCATION_TYPE_HOST, 0),
      attr(ACL_MEM_LOCATION_TYPE_DEVICE, 1, ACL_MEM_LOCATION_TYPE_HOST, 0)};
  size_t idx[2] = {0, 2};
  size_t failIndex = 0;
  ASSERT_ACL_OK(aclrtMemcpyBatch(dsts, destMaxs, srcs, sz, 4, attrs, idx, 2, &failIndex));
  EXPECT_EQ(failIndex, SIZE_MAX);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(read(devs[i], sizes[i]), hosts[i]) << i;

  // Back, asynchronously into pinned memory.
  void* pinned = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, 4 * 4096));
  for (int i = 0; i < 4; ++i) {
    dsts[i] = static_cast<char*>(pinned) + i * 4096;
    srcs[i] = devs[i];
    destMaxs[i] = 4096;
  }
  aclrtMemcpyBatchAttr back[2] = {
      attr(ACL_MEM_LOCATION_TYPE_HOST, 0, ACL_MEM_LOCATION_TYPE_DEVICE, 0),
      attr(ACL_MEM_LOCATION_TYPE_HOST, 0, ACL_MEM_LOCATION_TYPE_DEVICE, 1)};
  std::memset(pinned, 0, 4 * 4096);
  ASSERT_ACL_OK(
      aclrtMemcpyBatchAsync(dsts, destMaxs, srcs, sz, 4, back, idx, 2, &failIndex, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(failIndex, SIZE_MAX);
  for (int i = 0; i < 4; ++i) {
    const auto* got = static_cast<unsigned char*>(dsts[i]);
    EXPECT_EQ(std::vector<unsigned char>(got, got + sizes[i]), hosts[i]) << i;
  }
  // The V2 forms, with one attribute for all.
  std::memset(pinned, 0, 4 * 4096);
  ASSERT_ACL_OK(aclrtMemcpyBatchV2(dsts, destMaxs, srcs, sz, 2, back, idx, 1));
  ASSERT_ACL_OK(aclrtMemcpyBatchAsyncV2(dsts + 2, destMaxs + 2, srcs + 2, sz + 2, 2, back + 1, idx,
                                        1, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  for (int i = 0; i < 4; ++i) {
    const auto* got = static_cast<unsigned char*>(dsts[i]);
    EXPECT_EQ(std::vector<unsigned char>(got, got + sizes[i]), hosts[i]) << i;
  }
  ASSERT_ACL_OK(aclrtFreeHost(pinned));
}

TEST_F(AclCopyExtTest, BatchChecksEverythingFirstAndNamesTheFailingCopy) {
  void* a = deviceBuffer(64);
  void* b = deviceBuffer(64);
  ASSERT_ACL_OK(aclrtMemset(a, 64, 0, 64));
  ASSERT_ACL_OK(aclrtMemset(b, 64, 0, 64));
  std::vector<unsigned char> h1(64, 1), h2(64, 2);
  void* dsts[2] = {a, b};
  void* srcs[2] = {h1.data(), h2.data()};
  size_t maxs[2] = {64, 64}, sizes[2] = {64, 64}, idx[2] = {0, 1};
  size_t failIndex = 0;
  // Copy 1's attributes say its destination is on device 2: nothing is copied.
  aclrtMemcpyBatchAttr attrs[2] = {
      attr(ACL_MEM_LOCATION_TYPE_DEVICE, 0, ACL_MEM_LOCATION_TYPE_HOST, 0),
      attr(ACL_MEM_LOCATION_TYPE_DEVICE, 2, ACL_MEM_LOCATION_TYPE_HOST, 0)};
  EXPECT_ACL_ERROR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attrs, idx, 2, &failIndex),
                   ACL_ERROR_INVALID_PARAM, "copy 1: the attributes put the destination");
  EXPECT_EQ(failIndex, 1u);
  EXPECT_EQ(read(a, 64), std::vector<unsigned char>(64, 0));
  // A device-to-device copy in a batch.
  srcs[1] = a;
  attrs[1] = attr(ACL_MEM_LOCATION_TYPE_DEVICE, 0, ACL_MEM_LOCATION_TYPE_DEVICE, 0);
  EXPECT_ACL_ERROR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attrs, idx, 2, &failIndex),
                   ACL_ERROR_INVALID_PARAM, "copy 1 is device to device");
  EXPECT_EQ(failIndex, 1u);
  // Two directions in one batch.
  dsts[1] = h2.data();
  attrs[1] = attr(ACL_MEM_LOCATION_TYPE_HOST, 0, ACL_MEM_LOCATION_TYPE_DEVICE, 0);
  EXPECT_ACL_ERROR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attrs, idx, 2, &failIndex),
                   ACL_ERROR_INVALID_PARAM, "goes the other way");
  EXPECT_EQ(failIndex, 1u);
  // Errors that are not about one copy's attributes leave failIndex at SIZE_MAX.
  dsts[1] = b;
  srcs[1] = h2.data();
  attrs[1] = attr(ACL_MEM_LOCATION_TYPE_DEVICE, 0, ACL_MEM_LOCATION_TYPE_HOST, 0);
  sizes[1] = 65;
  EXPECT_ACL_ERROR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attrs, idx, 2, &failIndex),
                   ACL_ERROR_INVALID_PARAM, "size 65 exceeds destMax 64");
  EXPECT_EQ(failIndex, SIZE_MAX);
  sizes[1] = 64;
  size_t badIdx[2] = {1, 2};
  EXPECT_ACL_ERROR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attrs, badIdx, 2, &failIndex),
                   ACL_ERROR_INVALID_PARAM, "attrsIndexes[0] = 1");
  EXPECT_ACL_ERROR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attrs, idx, 3, &failIndex),
                   ACL_ERROR_INVALID_PARAM, "numAttrs (3) <= numBatches (2)");
  EXPECT_ACL_ERROR(aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, attrs, idx, 2, nullptr),
                   ACL_ERROR_INVALID_PARAM, "failIndex is null");
  EXPECT_EQ(read(b, 64), std::vector<unsigned char>(64, 0));
  ASSERT_ACL_OK(aclrtMemcpyBatchV2(dsts, maxs, srcs, sizes, 2, attrs, idx, 2));
  EXPECT_EQ(read(a, 64), h1);
  EXPECT_EQ(read(b, 64), h2);
}

TEST_F(AclCopyExtTest, MemsetD32SetsExactlyNElements) {
  void* dev = deviceBuffer(64);
  ASSERT_ACL_OK(aclrtMemset(dev, 64, 0, 64));
  ASSERT_ACL_OK(aclrtMemsetD32(static_cast<char*>(dev) + 4, 60, 0xdeadbeefu, 5));
  std::vector<unsigned char> out = read(dev, 64);
  uint32_t words[16];
  std::memcpy(words, out.data(), 64);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(words[i], (i >= 1 && i <= 5) ? 0xdeadbeefu : 0u) << i;

  // Async: device memory by a task of the stream, host memory at once.
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtMemsetD32Async(dev, 64, 7u, 16, stream_));
  void* pinned = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, 64));
  std::memset(pinned, 0, 64);
  ASSERT_ACL_OK(aclrtMemsetD32Async(pinned, 64, 9u, 3, stream_));
  const auto* p = static_cast<uint32_t*>(pinned);
  EXPECT_EQ(p[0], 9u);  // set before the stream ran
  EXPECT_EQ(p[2], 9u);
  EXPECT_EQ(p[3], 0u);
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  out = read(dev, 64);
  std::memcpy(words, out.data(), 64);
  for (uint32_t w : words) EXPECT_EQ(w, 7u);

  int local[4] = {};
  EXPECT_ACL_ERROR(aclrtMemsetD32(local, sizeof(local), 1, 4), ACL_ERROR_INVALID_PARAM,
                   "plain host memory");
  EXPECT_ACL_ERROR(aclrtMemsetD32(dev, 15, 1, 4), ACL_ERROR_INVALID_PARAM,
                   "memSize 15 is less than 4 * N (N = 4)");
  EXPECT_ACL_ERROR(aclrtMemsetD32(static_cast<char*>(dev) + 8, 64, 1, 16), ACL_ERROR_INVALID_PARAM,
                   "overrun its allocation");
  EXPECT_ACL_ERROR(aclrtMemsetD32(nullptr, 64, 1, 1), ACL_ERROR_INVALID_PARAM, "ptr is null");
  ASSERT_ACL_OK(aclrtFreeHost(pinned));
}

TEST_F(AclCopyExtTest, WithOffsetReadsTheAddressesWhenTheTaskRuns) {
  char* src = static_cast<char*>(deviceBuffer(256));
  char* dst = static_cast<char*>(deviceBuffer(256));
  void** slots = static_cast<void**>(deviceBuffer(2 * sizeof(void*)));
  std::vector<unsigned char> pattern(256);
  for (int i = 0; i < 256; ++i) pattern[i] = static_cast<unsigned char>(255 - i);
  ASSERT_ACL_OK(aclrtMemcpy(src, 256, pattern.data(), 256, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemset(dst, 256, 0, 256));
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtMemcpyAsyncWithOffset(&slots[0], 100, 10, const_cast<const void**>(&slots[1]),
                                           50, 20, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
  // The addresses arrive after the copy was queued, as a kernel would write them.
  slots[0] = dst;
  slots[1] = src;
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  const std::vector<unsigned char> out = read(dst, 256);
  for (int i = 0; i < 256; ++i) {
    const unsigned char want = (i >= 10 && i < 60) ? pattern[i - 10 + 20] : 0;
    ASSERT_EQ(out[i], want) << i;
  }
  EXPECT_ACL_ERROR(
      aclrtMemcpyAsyncWithOffset(&slots[0], 100, 0, const_cast<const void**>(&slots[1]), 50, 0,
                                 ACL_MEMCPY_DEVICE_TO_DEVICE, stream_),
      ACL_ERROR_INVALID_PARAM, "only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE");
  EXPECT_ACL_ERROR(aclrtMemcpyAsyncWithOffset(&slots[0], 10, 0, const_cast<const void**>(&slots[1]),
                                              50, 0, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_),
                   ACL_ERROR_INVALID_PARAM, "count 50 exceeds destMax 10");
  // An address that is null when the copy runs fails the stream.
  slots[0] = nullptr;
  ASSERT_ACL_OK(aclrtMemcpyAsyncWithOffset(&slots[0], 100, 0, const_cast<const void**>(&slots[1]),
                                           50, 0, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
  EXPECT_NE(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
}

TEST_F(AclCopyExtTest, CopyDescriptors) {
  size_t descSize = 0;
  ASSERT_ACL_OK(aclrtGetMemcpyDescSize(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &descSize));
  EXPECT_GE(descSize, 32u);
  void* desc = deviceBuffer(descSize);
  char* src = static_cast<char*>(deviceBuffer(128));
  char* dst = static_cast<char*>(deviceBuffer(128));
  std::vector<unsigned char> pattern(128);
  for (int i = 0; i < 128; ++i) pattern[i] = static_cast<unsigned char>(i ^ 0x5a);
  ASSERT_ACL_OK(aclrtMemcpy(src, 128, pattern.data(), 128, ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemset(dst, 128, 0, 128));
  ASSERT_ACL_OK(
      aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, src + 8, dst + 16, 64, nullptr));
  ASSERT_ACL_OK(aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  const std::vector<unsigned char> out = read(dst, 128);
  for (int i = 0; i < 128; ++i) {
    ASSERT_EQ(out[i], (i >= 16 && i < 80) ? pattern[i - 16 + 8] : 0) << i;
  }
  EXPECT_ACL_ERROR(aclrtGetMemcpyDescSize(ACL_MEMCPY_DEVICE_TO_DEVICE, &descSize),
                   ACL_ERROR_INVALID_PARAM, "only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE");
  int cfg = 0;
  EXPECT_ACL_ERROR(aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, src, dst, 8, &cfg),
                   ACL_ERROR_INVALID_PARAM, "config must be NULL");
  EXPECT_ACL_ERROR(
      aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, src, dst, 129, nullptr),
      ACL_ERROR_INVALID_PARAM, "overrun its allocation");
  std::vector<unsigned char> host(64);
  EXPECT_ACL_ERROR(
      aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, host.data(), dst, 8, nullptr),
      ACL_ERROR_INVALID_PARAM, "srcAddr");
  void* other = nullptr;
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtMalloc(&other, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_ACL_ERROR(
      aclrtSetMemcpyDesc(desc, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, src, other, 8, nullptr),
      ACL_ERROR_INVALID_PARAM, "an inner copy stays in one device");
  void* blank = deviceBuffer(descSize);
  ASSERT_ACL_OK(aclrtMemset(blank, descSize, 0, descSize));
  EXPECT_ACL_ERROR(aclrtMemcpyAsyncWithDesc(blank, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, stream_),
                   ACL_ERROR_INVALID_PARAM, "holds no descriptor");
}

TEST_F(AclCopyExtTest, WithConditionIsMemcpyAsync) {
  void* dev = deviceBuffer(64);
  void* pinned = nullptr;
  ASSERT_ACL_OK(aclrtMallocHost(&pinned, 64));
  std::memset(pinned, 0x42, 64);
  ASSERT_ACL_OK(
      aclrtMemcpyAsyncWithCondition(dev, 64, pinned, 64, ACL_MEMCPY_HOST_TO_DEVICE, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(read(dev, 64), std::vector<unsigned char>(64, 0x42));
  std::vector<unsigned char> a(8), b(8);
  EXPECT_ACL_ERROR(
      aclrtMemcpyAsyncWithCondition(a.data(), 8, b.data(), 8, ACL_MEMCPY_HOST_TO_HOST, stream_),
      ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "host-to-host");
  EXPECT_ACL_ERROR(
      aclrtMemcpyAsyncWithCondition(dev, 8, b.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE, stream_),
      ACL_ERROR_INVALID_PARAM, "exceeds destMax");
  ASSERT_ACL_OK(aclrtFreeHost(pinned));
}

}  // namespace
}  // namespace cohort::acltest
