// Built-in tasks: reductions of every type and op, profiling markers, task updates.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "acl_stream_family_util.h"
#include "common/trace.h"

namespace cohort::acltest {
namespace {

// fp16 of a small integer |v| < 2048, built by hand from the format.
uint16_t halfOf(int v) {
  if (v == 0) return 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned m = static_cast<unsigned>(v < 0 ? -v : v);
  int e = 0;
  while ((m >> (e + 1)) != 0) ++e;
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | ((m << (10 - e)) & 0x3ff));
}

// bf16 of a float that has at most 8 significant bits: its top half.
uint16_t bf16Of(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

class AclReduceTest : public AclDevice0StreamTest {
 protected:
  void TearDown() override {
    for (void* p : buffers_) EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    AclDevice0StreamTest::TearDown();
  }
  template <typename T>
  void* upload(const std::vector<T>& host) {
    void* d = nullptr;
    EXPECT_EQ(aclrtMalloc(&d, host.size() * sizeof(T) + 64, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(d, host.size() * sizeof(T), host.data(), host.size() * sizeof(T),
                          ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_SUCCESS);
    buffers_.push_back(d);
    return d;
  }
  template <typename T>
  std::vector<T> download(const void* d, size_t n) {
    std::vector<T> host(n);
    EXPECT_EQ(aclrtMemcpy(host.data(), n * sizeof(T), d, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_SUCCESS);
    return host;
  }

 public:
  // dst = dst (kind) src on the device, checked element by element against `expect`.
  template <typename T, typename Expect>
  void check(aclDataType type, aclrtReduceKind kind, const std::vector<T>& dst,
             const std::vector<T>& src, Expect expect) {
    void* d = upload(dst);
    void* s = upload(src);
    ASSERT_ACL_OK(aclrtReduceAsync(d, s, dst.size() * sizeof(T), kind, type, stream_, nullptr));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    const std::vector<T> got = download<T>(d, dst.size());
    for (size_t i = 0; i < dst.size(); ++i) {
      ASSERT_EQ(got[i], expect(dst[i], src[i], i))
          << "type " << type << " kind " << kind << " element " << i << " of " << dst.size();
    }
  }

 protected:
  std::vector<void*> buffers_;
};

const aclrtReduceKind kKinds[] = {ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                                  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
                                  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN};
const size_t kSizes[] = {1, 7, 1031};

template <typename T>
T combine(aclrtReduceKind kind, T a, T b) {
  if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX) return a < b ? b : a;
  if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN) return b < a ? b : a;
  return a + b;
}

template <typename T>
void integerCases(AclReduceTest* t, aclDataType type) {
  for (aclrtReduceKind kind : kKinds) {
    for (size_t n : kSizes) {
      std::vector<T> dst(n), src(n);
      for (size_t i = 0; i < n; ++i) {
        // Both signs, and sums that wrap at the ends of the range.
        dst[i] = static_cast<T>(static_cast<uint64_t>(i * 2654435761u) >> 3);
        src[i] = static_cast<T>(static_cast<uint64_t>(i * 40503u + 17) << 1);
      }
      t->check(type, kind, dst, src, [kind](T a, T b, size_t) {
        if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM) {
          using U = typename std::make_unsigned<T>::type;
          return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        }
        return combine(kind, a, b);
      });
    }
  }
}

TEST_F(AclReduceTest, IntegersOfEveryTypeAndOp) {
  integerCases<int8_t>(this, ACL_INT8);
  integerCases<int16_t>(this, ACL_INT16);
  integerCases<int32_t>(this, ACL_INT32);
  integerCases<uint32_t>(this, ACL_UINT32);
}

TEST_F(AclReduceTest, FloatsOfEveryOp) {
  for (aclrtReduceKind kind : kKinds) {
    for (size_t n : kSizes) {
      std::vector<float> dst(n), src(n);
      for (size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<float>(std::sin(static_cast<double>(i)) * 1e3);
        src[i] = static_cast<float>(std::cos(static_cast<double>(i) * 0.7) * 1e3);
      }
      check(ACL_FLOAT, kind, dst, src,
            [kind](float a, float b, size_t) { return combine(kind, a, b); });
    }
  }
  // The collectives' kernels: max is (dst < src ? src : dst), so a NaN in dst stays and
  // one in src is not taken; infinities add as IEEE says.
  const float nan = std::nanf("");
  const float inf = INFINITY;
  void* d = upload(std::vector<float>{nan, 1.0f, inf, inf});
  void* s = upload(std::vector<float>{1.0f, nan, -inf, 1.0f});
  ASSERT_ACL_OK(
      aclrtReduceAsync(d, s, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX, ACL_FLOAT, stream_, nullptr));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  std::vector<float> got = download<float>(d, 4);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 1.0f);
  EXPECT_EQ(got[2], inf);
  ASSERT_ACL_OK(
      aclrtReduceAsync(d, s, 16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, stream_, nullptr));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  got = download<float>(d, 4);
  EXPECT_TRUE(std::isnan(got[2]));  // inf + -inf
  EXPECT_EQ(got[3], inf);
}

TEST_F(AclReduceTest, HalfPrecisionTypesOfEveryOp) {
  for (aclrtReduceKind kind : kKinds) {
    for (size_t n : kSizes) {
      // Small integers: exact in fp16 (and their sums), and in bf16 below 256.
      std::vector<int> a(n), b(n);
      for (size_t i = 0; i < n; ++i) {
        a[i] = static_cast<int>((i * 37) % 201) - 100;
        b[i] = static_cast<int>((i * 91 + 5) % 201) - 100;
      }
      std::vector<uint16_t> hd(n), hs(n), bd(n), bs(n);
      for (size_t i = 0; i < n; ++i) {
        hd[i] = halfOf(a[i]), hs[i] = halfOf(b[i]);
        bd[i] = bf16Of(static_cast<float>(a[i])), bs[i] = bf16Of(static_cast<float>(b[i]));
      }
      check(ACL_FLOAT16, kind, hd, hs,
            [&](uint16_t, uint16_t, size_t i) { return halfOf(combine(kind, a[i], b[i])); });
      check(ACL_BF16, kind, bd, bs, [&](uint16_t, uint16_t, size_t i) {
        return bf16Of(static_cast<float>(combine(kind, a[i], b[i])));
      });
    }
  }
  // Bit patterns: fp16 overflow to inf, rounding to nearest even, subnormals kept (bf16
  // must not flush them), NaN stays NaN.
  const std::vector<uint16_t> hd = {0x7bff, 0x3c00, 0x0001, 0x7e00};
  const std::vector<uint16_t> hs = {0x7bff, 0x1000, 0x0001, 0x3c00};
  const std::vector<uint16_t> hExpect = {0x7c00, 0x3c00, 0x0002, 0x7e00};  // 1 + 2^-11 ties to 1
  check(ACL_FLOAT16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, hd, hs,
        [&](uint16_t, uint16_t, size_t i) { return hExpect[i]; });
  // (1 + 2^-7) + 2^-8 is halfway between two bf16 values: to the even one above.
  const std::vector<uint16_t> bd = {0x0001, 0x3f81, 0x8001};
  const std::vector<uint16_t> bs = {0x0001, 0x3b80, 0x0000};
  const std::vector<uint16_t> bExpect = {0x0002, 0x3f82, 0x8001};
  check(ACL_BF16, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, bd, bs,
        [&](uint16_t, uint16_t, size_t i) { return bExpect[i]; });
}

TEST_F(AclReduceTest, InPlaceDoublesTheBuffer) {
  std::vector<int32_t> v(33);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i) * 3 - 50;
  void* d = upload(v);
  ASSERT_ACL_OK(aclrtReduceAsync(d, d, v.size() * 4, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT32,
                                 stream_, nullptr));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  const auto got = download<int32_t>(d, v.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(got[i], 2 * v[i]) << i;
}

TEST_F(AclReduceTest, ArgumentsAreChecked) {
  void* d = upload(std::vector<float>(16, 1.0f));
  void* s = upload(std::vector<float>(16, 2.0f));
  EXPECT_ACL_ERROR(
      aclrtReduceAsync(d, s, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL, ACL_FLOAT, stream_, nullptr),
      ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "has no documented result");
  EXPECT_ACL_ERROR(
      aclrtReduceAsync(d, s, 64, static_cast<aclrtReduceKind>(14), ACL_FLOAT, stream_, nullptr),
      ACL_ERROR_INVALID_PARAM, "kind 14 is not an aclrtReduceKind");
  EXPECT_ACL_ERROR(
      aclrtReduceAsync(d, s, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_INT64, stream_, nullptr),
      ACL_ERROR_INVALID_PARAM, "type 9 is not reducible here");
  EXPECT_ACL_ERROR(
      aclrtReduceAsync(d, s, 62, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, stream_, nullptr),
      ACL_ERROR_INVALID_PARAM, "count 62 bytes is not a whole number of 4-byte");
  int reserve = 0;
  EXPECT_ACL_ERROR(
      aclrtReduceAsync(d, s, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, stream_, &reserve),
      ACL_ERROR_INVALID_PARAM, "reserve must be NULL");
  std::vector<float> host(16);
  EXPECT_ACL_ERROR(aclrtReduceAsync(host.data(), s, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT,
                                    stream_, nullptr),
                   ACL_ERROR_INVALID_PARAM, "dst");
  EXPECT_ACL_ERROR(aclrtReduceAsync(d, host.data(), 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT,
                                    stream_, nullptr),
                   ACL_ERROR_INVALID_PARAM, "is not device memory");
  EXPECT_ACL_ERROR(aclrtReduceAsync(d, s, 1 << 20, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT,
                                    stream_, nullptr),
                   ACL_ERROR_INVALID_PARAM, "overrun its allocation");
  EXPECT_ACL_ERROR(aclrtReduceAsync(nullptr, s, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT,
                                    stream_, nullptr),
                   ACL_ERROR_INVALID_PARAM, "dst is null");
  // Memory of another device than the stream's.
  ASSERT_ACL_OK(aclrtSetDevice(1));
  void* other = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&other, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_ACL_ERROR(
      aclrtReduceAsync(d, other, 64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT, stream_, nullptr),
      ACL_ERROR_INVALID_PARAM, "is memory of device 1, the stream's is device 0");
  ASSERT_ACL_OK(aclrtFree(other));
}

using AclProfTraceTest = AclDevice0Test;

TEST_F(AclProfTraceTest, MarkerLandsOnTheStreamsTrackOfARunningSession) {
  char dirTemplate[] = "/tmp/acl-prof-trace-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  ASSERT_TRUE(trace::startSession(dir));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  const char data[] = "marker-7";  // 9 bytes with the NUL: padded to 18
  ASSERT_ACL_OK(aclrtProfTrace(const_cast<char*>(data), sizeof(data), stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  std::string error;
  ASSERT_TRUE(trace::stopSession(&error)) << error;
  std::ifstream in(dir + "/cohort-trace-" + std::to_string(getpid()) + ".json");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("aclrtProfTrace"), std::string::npos);
  EXPECT_NE(text.str().find("6d61726b65722d37000000000000000000"), std::string::npos) << text.str();
  std::remove((dir + "/cohort-trace-" + std::to_string(getpid()) + ".json").c_str());
  rmdir(dir.c_str());
  char big[19] = {};
  EXPECT_ACL_ERROR(aclrtProfTrace(big, 19, stream), ACL_ERROR_INVALID_PARAM,
                   "length 19 is out of range [1, 18]");
  EXPECT_ACL_ERROR(aclrtProfTrace(big, 0, stream), ACL_ERROR_INVALID_PARAM,
                   "length 0 is out of range");
  EXPECT_ACL_ERROR(aclrtProfTrace(nullptr, 4, stream), ACL_ERROR_INVALID_PARAM, "userdata is null");
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclProfTraceTest, TaskUpdatesAreNotSupported) {
  aclrtTaskUpdateInfo info{};
  info.id = ACL_RT_UPDATE_RANDOM_TASK;
  EXPECT_ACL_ERROR(aclrtTaskUpdateAsync(nullptr, 0, &info, nullptr),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtTaskUpdateAsync: not supported");
}

}  // namespace
}  // namespace cohort::acltest
