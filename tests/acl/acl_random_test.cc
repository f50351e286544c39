// aclrtRandomNumAsync: Philox4x32-10 known answers, the counter's advance, and the
// distributions' ranges and moments.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "acl_stream_family_util.h"

namespace cohort::acltest {
namespace {

class AclRandomTest : public AclDevice0StreamTest {
 protected:
  void SetUp() override {
    AclDevice0StreamTest::SetUp();
    ASSERT_ACL_OK(aclrtMalloc(&counter_, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_ACL_OK(aclrtMalloc(&out_, kOutBytes, ACL_MEM_MALLOC_HUGE_FIRST));
    setCounter({0, 0, 0, 0});
  }
  void TearDown() override {
    EXPECT_EQ(aclrtFree(counter_), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(out_), ACL_SUCCESS);
    AclDevice0StreamTest::TearDown();
  }
  void setCounter(std::vector<uint32_t> words) {
    ASSERT_ACL_OK(aclrtMemcpy(counter_, 16, words.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE));
  }
  std::vector<uint32_t> counter() {
    std::vector<uint32_t> words(4);
    EXPECT_EQ(aclrtMemcpy(words.data(), 16, counter_, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return words;
  }
  template <typename T>
  std::vector<T> out(size_t n) {
    std::vector<T> host(n);
    EXPECT_EQ(
        aclrtMemcpy(host.data(), n * sizeof(T), out_, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST),
        ACL_SUCCESS);
    return host;
  }
  template <typename T>
  static void setValue(aclrtRandomParaInfo* p, T v) {
    std::memset(p, 0, sizeof(*p));
    std::memcpy(p->valueOrAddr, &v, sizeof(v));
    p->size = sizeof(v);
  }
  aclrtRandomNumTaskInfo task(aclDataType type, aclrtRandomNumFuncType func, uint64_t seed,
                              uint64_t num) {
    aclrtRandomNumTaskInfo t;
    std::memset(&t, 0, sizeof(t));
    t.dataType = type;
    t.randomNumFuncParaInfo.funcType = func;
    t.randomResultAddr = out_;
    t.randomCounterAddr = counter_;
    setValue(&t.randomSeed, seed);
    setValue(&t.randomNum, num);
    return t;
  }
  void run(const aclrtRandomNumTaskInfo& t) {
    ASSERT_ACL_OK(aclrtRandomNumAsync(&t, stream_, nullptr));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  }
  static constexpr size_t kOutBytes = 1 << 20;
  void* counter_ = nullptr;
  void* out_ = nullptr;
};

TEST_F(AclRandomTest, PhiloxKnownAnswersAndTheCounterAdvance) {
  // Full-range uint64: each number is two Philox words, high first. Counter and key 0.
  auto t = task(ACL_UINT64, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 0, 2);
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, uint64_t{0});
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max,
           std::numeric_limits<uint64_t>::max());
  run(t);
  EXPECT_EQ(out<uint64_t>(2),
            (std::vector<uint64_t>{0x6627e8d5e169c58dull, 0xbc57ac4c9b00dbd8ull}));
  EXPECT_EQ(counter(), (std::vector<uint32_t>{1, 0, 0, 0}));  // one block used
  // Another published vector: counter 243f6a88..., key (seed) 299f31d0a4093822.
  setCounter({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344});
  t = task(ACL_UINT64, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 0x299f31d0a4093822ull, 2);
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, uint64_t{0});
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max,
           std::numeric_limits<uint64_t>::max());
  run(t);
  EXPECT_EQ(out<uint64_t>(2),
            (std::vector<uint64_t>{0xd16cfe0994fdccebull, 0x5001e42024126ea1ull}));
  EXPECT_EQ(counter(), (std::vector<uint32_t>{0x243f6a89, 0x85a308d3, 0x13198a2e, 0x03707344}));
  // The counter carries across words.
  setCounter({0xffffffff, 0xffffffff, 0, 0});
  run(t);
  EXPECT_EQ(counter(), (std::vector<uint32_t>{0, 0, 1, 0}));
}

TEST_F(AclRandomTest, SameSeedAndCounterRepeatANewCounterDoesNot) {
  auto t = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 1234, 257);
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, -1.0f);
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, 1.0f);
  run(t);
  const auto first = out<float>(257);
  EXPECT_EQ(counter()[0], 65u);  // 257 words in blocks of four
  run(t);                        // continues from the advanced counter
  const auto second = out<float>(257);
  EXPECT_NE(first, second);
  setCounter({0, 0, 0, 0});
  run(t);
  EXPECT_EQ(out<float>(257), first);
  t.randomSeed.valueOrAddr[0] ^= 1;  // another key
  setCounter({0, 0, 0, 0});
  run(t);
  EXPECT_NE(out<float>(257), first);
}

TEST_F(AclRandomTest, UniformStaysInItsRangeForEveryType) {
  const size_t n = 4000;
  {
    auto t = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 7, n);
    setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, 2.0f);
    setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, 6.0f);
    run(t);
    double sum = 0;
    for (float v : out<float>(n)) {
      ASSERT_GE(v, 2.0f);
      ASSERT_LT(v, 6.0f);
      sum += v;
    }
    EXPECT_NEAR(sum / n, 4.0, 0.1);
  }
  for (aclDataType type : {ACL_FLOAT16, ACL_BF16}) {
    // [1, 2): the exponent field is the one of 1.0 for every number.
    auto t = task(type, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 8, n);
    const uint16_t one = type == ACL_FLOAT16 ? 0x3c00 : 0x3f80;
    const uint16_t two = type == ACL_FLOAT16 ? 0x4000 : 0x4000;
    setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, one);
    setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, two);
    run(t);
    std::set<uint16_t> distinct;
    for (uint16_t v : out<uint16_t>(n)) {
      ASSERT_EQ(type == ACL_FLOAT16 ? v >> 10 : v >> 7, type == ACL_FLOAT16 ? 15 : 127) << v;
      distinct.insert(v);
    }
    EXPECT_GT(distinct.size(), type == ACL_FLOAT16 ? 900u : 120u);  // most of 1024 / 128 values
  }
  {
    auto t = task(ACL_INT32, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 9, n);
    setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, int32_t{-5});
    setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, int32_t{5});
    run(t);
    std::set<int32_t> seen;
    for (int32_t v : out<int32_t>(n)) {
      ASSERT_GE(v, -5);
      ASSERT_LT(v, 5);
      seen.insert(v);
    }
    EXPECT_EQ(seen.size(), 10u);
  }
  for (aclDataType type : {ACL_UINT32, ACL_INT64, ACL_UINT64}) {
    auto t = task(type, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 10, n);
    if (type == ACL_UINT32) {
      setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, uint32_t{100});
      setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, uint32_t{103});
    } else {
      setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, int64_t{-3000000000LL});
      setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, int64_t{-2999999997LL});
    }
    run(t);
    std::set<int64_t> seen;
    if (type == ACL_UINT32) {
      for (uint32_t v : out<uint32_t>(n)) seen.insert(v);
      EXPECT_EQ(seen, (std::set<int64_t>{100, 101, 102}));
    } else {
      for (int64_t v : out<int64_t>(n)) seen.insert(v);
      EXPECT_EQ(seen, (std::set<int64_t>{-3000000000LL, -2999999999LL, -2999999998LL}));
    }
  }
}

TEST_F(AclRandomTest, NormalAndTruncatedNormalHaveTheirMoments) {
  const size_t n = 20000;
  for (auto func :
       {ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS}) {
    auto t = task(ACL_FLOAT, func, 42, n);
    setValue(&t.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean, 3.0f);
    setValue(&t.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev, 2.0f);
    run(t);
    double sum = 0, squares = 0;
    size_t outside = 0;
    for (float v : out<float>(n)) {
      sum += v;
      squares += (v - 3.0) * (v - 3.0);
      outside += std::fabs(v - 3.0) > 4.0;
    }
    const double mean = sum / n, stddev = std::sqrt(squares / n);
    EXPECT_NEAR(mean, 3.0, 0.06);
    if (func == ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS) {
      EXPECT_NEAR(stddev, 2.0, 0.06);
      EXPECT_GT(outside, n / 40);  // about 4.6% lie beyond two standard deviations
    } else {
      EXPECT_EQ(outside, 0u);
      EXPECT_NEAR(stddev, 2.0 * 0.8796, 0.06);  // a normal cut at two deviations
    }
  }
  // bf16, with the parameters read from device memory when the task runs.
  void* params = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&params, 4, ACL_MEM_MALLOC_HUGE_FIRST));
  const uint16_t meanStddev[2] = {0xc120, 0x3f00};  // -10.0, 0.5
  ASSERT_ACL_OK(aclrtMemcpy(params, 4, meanStddev, 4, ACL_MEMCPY_HOST_TO_DEVICE));
  auto t = task(ACL_BF16, ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, 5, 4000);
  for (int i = 0; i < 2; ++i) {
    aclrtRandomParaInfo& p = i == 0 ? t.randomNumFuncParaInfo.paramInfo.normalDisInfo.mean
                                    : t.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev;
    void* address = static_cast<char*>(params) + 2 * i;
    p.isAddr = 1;
    p.size = 8;
    std::memcpy(p.valueOrAddr, &address, 8);
  }
  run(t);
  double sum = 0;
  for (uint16_t v : out<uint16_t>(4000)) {
    const uint32_t bits = static_cast<uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    sum += f;
  }
  EXPECT_NEAR(sum / 4000, -10.0, 0.05);
  ASSERT_ACL_OK(aclrtFree(params));
}

TEST_F(AclRandomTest, DropoutBitmaskKeepsOneMinusTheRatio) {
  const size_t n = 8003;  // not a multiple of 8: the last byte is partial
  ASSERT_ACL_OK(aclrtMemset(out_, kOutBytes, 0xAB, 2048));
  auto t = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, 3, n);
  setValue(&t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation, 0.25f);
  run(t);
  const auto bytes = out<uint8_t>(1002);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) kept += (bytes[i / 8] >> (i % 8)) & 1;
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.75, 0.02);
  EXPECT_EQ(bytes[1000] >> 3, 0);  // bits past num are 0
  EXPECT_EQ(bytes[1001], 0xAB);    // nothing past ceil(num / 8) bytes is written
  // Ratio 1 drops everything, 0 nothing.
  setValue(&t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation, 1.0f);
  run(t);
  for (uint8_t b : out<uint8_t>(1000)) ASSERT_EQ(b, 0);
  setValue(&t.randomNumFuncParaInfo.paramInfo.dropoutBitmaskInfo.dropoutRation, 0.0f);
  run(t);
  for (uint8_t b : out<uint8_t>(1000)) ASSERT_EQ(b, 0xff);
}

TEST_F(AclRandomTest, TasksAreChecked) {
  auto t = task(ACL_INT32, ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, 0, 4);
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "dataType 3 is not a floating type");
  t = task(ACL_DOUBLE, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 0, 4);
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "dataType 11 cannot be uniform");
  t = task(ACL_FLOAT, static_cast<aclrtRandomNumFuncType>(4), 0, 4);
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "funcType 4 is not an aclrtRandomNumFuncType");
  t = task(ACL_FLOAT, ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, 0, 4);
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, 0.0f);
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, uint16_t{1});  // 2 bytes
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "max.size 2 does not fit its type (4 bytes)");
  setValue(&t.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, 1.0f);
  uint32_t hostCounter[4] = {};
  t.randomCounterAddr = hostCounter;
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "randomCounterAddr");
  t.randomCounterAddr = counter_;
  t.randomResultAddr = nullptr;
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "randomResultAddr is null");
  t.randomResultAddr = out_;
  t.randomSeed.isAddr = 2;
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "randomSeed.isAddr 2 is neither 0 nor 1");
  t.randomSeed.isAddr = 0;
  int reserve = 0;
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(&t, stream_, &reserve), ACL_ERROR_INVALID_PARAM,
                   "reserve must be NULL");
  EXPECT_ACL_ERROR(aclrtRandomNumAsync(nullptr, stream_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "taskInfo is null");
  // Found when the task runs: more numbers than the result holds, max not above min.
  setValue(&t.randomNum, uint64_t{kOutBytes});
  ASSERT_ACL_OK(aclrtRandomNumAsync(&t, stream_, nullptr));
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream_), ACL_ERROR_INVALID_PARAM, "does not hold");
}

}  // namespace
}  // namespace cohort::acltest
