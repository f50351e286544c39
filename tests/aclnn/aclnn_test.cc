// aclnn's subset (libnnopbase.so, libopapi.so): aclnnAdd and aclnnMul over broadcast and
// strided views of every type they compute, each element checked against values
// computed here; executors used once or repeatedly; the operators inside a captured
// model; and each misuse with its aclnn status and message.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mul.h"
#include "kernels/convert.h"

namespace {

class AclnnTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS); }
  static void TearDownTestSuite() { (void)aclFinalize(); }
  void SetUp() override {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
  }
  void TearDown() override {
    for (aclTensor* t : tensors_) EXPECT_EQ(aclDestroyTensor(t), ACLNN_SUCCESS);
    for (void* p : memory_) EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
  }
  // A contiguous tensor of `dims` in new device memory of `bytes` per element.
  aclTensor* tensor(std::vector<int64_t> dims, aclDataType type, std::size_t bytes,
                    void** data) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (std::size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    std::size_t n = 1;
    for (int64_t d : dims) n *= static_cast<std::size_t>(d);
    EXPECT_EQ(aclrtMalloc(data, std::max<std::size_t>(n * bytes, 1), ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_SUCCESS);
    memory_.push_back(*data);
    aclTensor* t = aclCreateTensor(dims.data(), dims.size(), type, strides.data(), 0,
                                   ACL_FORMAT_ND, dims.data(), dims.size(), *data);
    tensors_.push_back(t);
    return t;
  }
  std::string recentMessage() {
    const char* m = aclGetRecentErrMsg();
    return m == nullptr ? "" : m;
  }

  aclrtStream stream_ = nullptr;
  std::vector<aclTensor*> tensors_;
  std::vector<void*> memory_;
};

// self [3,1,5] + 0.5 * other [4,1] -> out [3,4,5] in fp32, fp16, bf16 and double; the
// values are small multiples of 1/4, exact in every type.
TEST_F(AclnnTest, AddBroadcastsInEveryFloatType) {
  struct Case { aclDataType type; std::size_t bytes; };
  for (const Case c : {Case{ACL_FLOAT, 4}, Case{ACL_FLOAT16, 2}, Case{ACL_BF16, 2},
                       Case{ACL_DOUBLE, 8}}) {
    void *a = nullptr, *b = nullptr, *o = nullptr;
    aclTensor* self = tensor({3, 1, 5}, c.type, c.bytes, &a);
    aclTensor* other = tensor({4, 1}, c.type, c.bytes, &b);
    aclTensor* out = tensor({3, 4, 5}, c.type, c.bytes, &o);
    auto put = [&](void* base, std::size_t i, double v) {
      char* p = static_cast<char*>(base) + i * c.bytes;
      if (c.type == ACL_FLOAT) { float f = static_cast<float>(v); std::memcpy(p, &f, 4); }
      if (c.type == ACL_DOUBLE) std::memcpy(p, &v, 8);
      if (c.type == ACL_FLOAT16) {
        const uint16_t h = cohort::kernels::floatToHalf(static_cast<float>(v));
        std::memcpy(p, &h, 2);
      }
      if (c.type == ACL_BF16) {
        const uint16_t h = cohort::kernels::floatToBf16(static_cast<float>(v));
        std::memcpy(p, &h, 2);
      }
    };
    auto get = [&](std::size_t i) -> double {
      const char* p = static_cast<const char*>(o) + i * c.bytes;
      uint16_t h = 0;
      float f = 0;
      double d = 0;
      switch (c.type) {
        case ACL_FLOAT: std::memcpy(&f, p, 4); return f;
        case ACL_DOUBLE: std::memcpy(&d, p, 8); return d;
        case ACL_FLOAT16: std::memcpy(&h, p, 2); return cohort::kernels::halfToFloat(h);
        default: std::memcpy(&h, p, 2); return cohort::kernels::bf16ToFloat(h);
      }
    };
    for (std::size_t i = 0; i < 15; ++i) put(a, i, 0.25 * static_cast<double>(i));
    for (std::size_t j = 0; j < 4; ++j) put(b, j, static_cast<double>(j + 1));
    float half = 0.5f;
    aclScalar* alpha = aclCreateScalar(&half, ACL_FLOAT);
    uint64_t ws = 99;
    aclOpExecutor* ex = nullptr;
    ASSERT_EQ(aclnnAddGetWorkspaceSize(self, other, alpha, out, &ws, &ex), ACLNN_SUCCESS)
        << recentMessage();
    EXPECT_EQ(ws, 0u);
    ASSERT_EQ(aclnnAdd(nullptr, 0, ex, stream_), ACLNN_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    for (std::size_t x = 0; x < 3; ++x) {
      for (std::size_t y = 0; y < 4; ++y) {
        for (std::size_t z = 0; z < 5; ++z) {
          const double want = 0.25 * static_cast<double>(x * 5 + z) + 0.5 * static_cast<double>(y + 1);
          ASSERT_EQ(get((x * 4 + y) * 5 + z), want) << "type " << c.type << " at " << x << y << z;
        }
      }
    }
    EXPECT_EQ(aclDestroyScalar(alpha), ACLNN_SUCCESS);
  }
}

// Integers: exact int32 and int64 arithmetic with an integer alpha, and a multiply.
TEST_F(AclnnTest, IntegersAddAndMultiplyExactly) {
  void *a = nullptr, *b = nullptr, *o = nullptr, *m = nullptr;
  aclTensor* self = tensor({7}, ACL_INT64, 8, &a);
  aclTensor* other = tensor({7}, ACL_INT32, 4, &b);
  aclTensor* out = tensor({7}, ACL_INT64, 8, &o);
  aclTensor* prod = tensor({7}, ACL_INT32, 4, &m);
  auto* x = static_cast<int64_t*>(a);
  auto* y = static_cast<int32_t*>(b);
  for (int i = 0; i < 7; ++i) {
    x[i] = (int64_t{1} << 40) + i;  // beyond a double's exact reach once added to
    y[i] = -3 * i;
  }
  int32_t three = 3;
  aclScalar* alpha = aclCreateScalar(&three, ACL_INT32);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnAddGetWorkspaceSize(self, other, alpha, out, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnAdd(nullptr, 0, ex, stream_), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnMulGetWorkspaceSize(other, other, prod, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnMul(nullptr, 0, ex, stream_), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(static_cast<int64_t*>(o)[i], (int64_t{1} << 40) + i - 9 * i) << i;
    EXPECT_EQ(static_cast<int32_t*>(m)[i], 9 * i * i) << i;
  }
  EXPECT_EQ(aclDestroyScalar(alpha), ACLNN_SUCCESS);
}

// A transposed view (strides [1, 3]) of a 3x2 buffer times a row, and an offset.
TEST_F(AclnnTest, StridedViewsAreReadThroughTheirStrides) {
  void *a = nullptr, *r = nullptr, *o = nullptr;
  std::vector<float> values = {1, 2, 3, 4, 5, 6};  // as [2,3]: rows (1,2,3) (4,5,6)
  ASSERT_EQ(aclrtMalloc(&a, 7 * 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  memory_.push_back(a);
  std::memcpy(static_cast<float*>(a) + 1, values.data(), 24);  // offset 1
  const int64_t dims[2] = {3, 2}, strides[2] = {1, 3}, storage[1] = {7};
  aclTensor* t = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 1, ACL_FORMAT_ND, storage, 1, a);
  ASSERT_NE(t, nullptr);
  tensors_.push_back(t);
  aclTensor* row = tensor({2}, ACL_FLOAT, 4, &r);
  static_cast<float*>(r)[0] = 10;
  static_cast<float*>(r)[1] = 100;
  aclTensor* out = tensor({3, 2}, ACL_FLOAT, 4, &o);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnMulGetWorkspaceSize(t, row, out, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnMul(nullptr, 0, ex, stream_), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  const std::vector<float> want = {10, 400, 20, 500, 30, 600};  // transpose, then * row
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<float*>(o)[i], want[i]) << i;
}

// An executor serves one call unless repeatable; an operator queued while the stream
// captures runs at every launch of the model, with the data of that time.
TEST_F(AclnnTest, RepeatableExecutorsAndCapturedOperators) {
  void *a = nullptr, *o = nullptr;
  aclTensor* self = tensor({5}, ACL_FLOAT, 4, &a);
  aclTensor* out = tensor({5}, ACL_FLOAT, 4, &o);
  auto* x = static_cast<float*>(a);
  for (int i = 0; i < 5; ++i) x[i] = static_cast<float>(i);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(aclnnMulGetWorkspaceSize(self, self, out, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnMul(nullptr, 0, ex, stream_), ACLNN_SUCCESS);
  ASSERT_EQ(aclnnMul(nullptr, 0, ex, stream_), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(static_cast<float*>(o)[3], 9.0f);
  ASSERT_EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);

  ASSERT_EQ(aclnnMulGetWorkspaceSize(self, self, out, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL), ACL_SUCCESS);
  ASSERT_EQ(aclnnMul(nullptr, 0, ex, stream_), ACLNN_SUCCESS);
  aclmdlRI model = nullptr;
  ASSERT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_SUCCESS);
  for (int run = 1; run <= 3; ++run) {
    for (int i = 0; i < 5; ++i) x[i] = static_cast<float>(run * 10 + i);
    ASSERT_EQ(aclmdlRIExecuteAsync(model, stream_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(static_cast<float*>(o)[i], x[i] * x[i]) << "run " << run << " element " << i;
    }
  }
  EXPECT_EQ(aclmdlRIDestroy(model), ACL_SUCCESS);
}

TEST_F(AclnnTest, EachMisuseHasItsStatusAndMessage) {
  void *a = nullptr, *b = nullptr, *o = nullptr, *s = nullptr;
  aclTensor* self = tensor({2, 3}, ACL_FLOAT, 4, &a);
  aclTensor* other = tensor({4}, ACL_FLOAT, 4, &b);
  aclTensor* out = tensor({2, 3}, ACL_FLOAT, 4, &o);
  aclTensor* strings = tensor({2, 3}, ACL_STRING, 1, &s);
  float one = 1;
  aclScalar* alpha = aclCreateScalar(&one, ACL_FLOAT);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  EXPECT_EQ(aclnnAddGetWorkspaceSize(self, other, alpha, out, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentMessage().find("do not broadcast"), std::string::npos) << recentMessage();
  EXPECT_EQ(aclnnMulGetWorkspaceSize(self, self, other, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentMessage().find("out has shape [4], but self [2, 3] and other [2, 3] broadcast "
                                 "to [2, 3]"),
            std::string::npos)
      << recentMessage();
  EXPECT_EQ(aclnnMulGetWorkspaceSize(self, strings, out, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentMessage().find("other has data type 13"), std::string::npos) << recentMessage();
  EXPECT_EQ(aclnnAddGetWorkspaceSize(self, self, nullptr, out, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(recentMessage().find("alpha is null"), std::string::npos) << recentMessage();
  EXPECT_EQ(aclnnMulGetWorkspaceSize(self, self, out, nullptr, &ex), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclnnMul(nullptr, 0, nullptr, stream_), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(recentMessage().find("aclnnMul: executor is null"), std::string::npos)
      << recentMessage();
  ASSERT_EQ(aclnnMulGetWorkspaceSize(self, self, out, &ws, &ex), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnMul(nullptr, 64, ex, stream_), ACLNN_ERR_PARAM_NULLPTR);  // frees ex
  EXPECT_NE(recentMessage().find("workspace is null for 64 bytes"), std::string::npos);
  ASSERT_EQ(aclnnMulGetWorkspaceSize(self, self, out, &ws, &ex), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnMul(nullptr, 0, ex, reinterpret_cast<aclrtStream>(0x10)), ACLNN_ERR_RUNTIME_ERROR);
  EXPECT_EQ(aclCreateTensor(nullptr, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, a),
            nullptr);
  EXPECT_NE(recentMessage().find("viewDims or stride is null"), std::string::npos);
  const int64_t bad[1] = {-2}, unit[1] = {1};
  EXPECT_EQ(aclCreateTensor(bad, 1, ACL_FLOAT, unit, 0, ACL_FORMAT_ND, bad, 1, a), nullptr);
  EXPECT_NE(recentMessage().find("view dimension -2 is negative"), std::string::npos);
  EXPECT_EQ(aclCreateScalar(nullptr, ACL_FLOAT), nullptr);
  EXPECT_EQ(aclDestroyScalar(alpha), ACLNN_SUCCESS);
}

}  // namespace
