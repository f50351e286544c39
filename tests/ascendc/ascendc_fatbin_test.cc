// Fatbin modules (ascendc_fatbin_library): loaded from a file or from memory, a
// kernel found by name, its arguments built value by value (placeholders too) or
// packed, launched on a stream; and each misuse named.
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ascendc/ascendc_test_util.h"

namespace cohort::acltest {
namespace {

class AscendcFatbinTest : public KernelTest {
 protected:
  void TearDown() override {
    if (binary_ != nullptr) {
      EXPECT_EQ(aclrtBinaryUnLoad(binary_), ACL_SUCCESS);
    }
    KernelTest::TearDown();
  }
  // axpy's arguments: x, y, a placeholder holding the length, alpha.
  aclrtArgsHandle axpyArgs(aclrtFuncHandle f, float* x, float* y, uint32_t length, float alpha) {
    aclrtArgsHandle args = nullptr;
    aclrtParamHandle p = nullptr;
    EXPECT_EQ(aclrtKernelArgsInit(f, &args), ACL_SUCCESS);
    EXPECT_EQ(aclrtKernelArgsAppend(args, &x, sizeof x, &p), ACL_SUCCESS);
    EXPECT_EQ(aclrtKernelArgsAppend(args, &y, sizeof y, &p), ACL_SUCCESS);
    aclrtParamHandle holder = nullptr;
    EXPECT_EQ(aclrtKernelArgsAppendPlaceHolder(args, &holder), ACL_SUCCESS);
    void* buffer = nullptr;
    EXPECT_EQ(aclrtKernelArgsGetPlaceHolderBuffer(args, holder, sizeof length, &buffer),
              ACL_SUCCESS);
    *static_cast<uint32_t*>(buffer) = length;
    EXPECT_EQ(aclrtKernelArgsAppend(args, &alpha, sizeof alpha, &p), ACL_SUCCESS);
    EXPECT_EQ(aclrtKernelArgsFinalize(args), ACL_SUCCESS);
    return args;
  }
  aclrtBinHandle binary_ = nullptr;
};

TEST_F(AscendcFatbinTest, LoadFindLaunchWithPlaceholderArguments) {
  ASSERT_ACL_OK(aclrtBinaryLoadFromFile(COHORT_TEST_FATBIN, nullptr, &binary_));
  aclrtFuncHandle f = nullptr;
  ASSERT_ACL_OK(aclrtBinaryGetFunction(binary_, "axpy", &f));
  char name[16] = {};
  ASSERT_ACL_OK(aclrtGetFunctionName(f, sizeof name, name));
  EXPECT_STREQ(name, "axpy");
  const uint32_t n = 10007;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 97);
    y[i] = 0.5f * static_cast<float>(i % 13);
  }
  float* dx = deviceCopy(x);
  float* dy = deviceCopy(y);
  aclrtArgsHandle args = axpyArgs(f, dx, dy, n, 3.0f);
  ASSERT_ACL_OK(aclrtLaunchKernelWithConfig(f, 7, stream_, nullptr, args, nullptr));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  auto out = hostCopy(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 3.0f * x[i] + y[i]) << i;
}

TEST_F(AscendcFatbinTest, ArgumentsInTheCallersMemory) {
  ASSERT_ACL_OK(aclrtBinaryLoadFromFile(COHORT_TEST_FATBIN, nullptr, &binary_));
  aclrtFuncHandle f = nullptr;
  ASSERT_ACL_OK(aclrtBinaryGetFunction(binary_, "axpy", &f));
  size_t handleBytes = 0, argsBytes = 0;
  ASSERT_ACL_OK(aclrtKernelArgsGetHandleMemSize(f, &handleBytes));
  // x, y, the length's placeholder (a pointer), alpha.
  const size_t userBytes = 3 * sizeof(void*) + sizeof(float);
  ASSERT_ACL_OK(aclrtKernelArgsGetMemSize(f, userBytes, &argsBytes));
  EXPECT_GE(argsBytes, userBytes);
  std::vector<unsigned char> handleMem(handleBytes), argsMem(argsBytes);
  auto args = static_cast<aclrtArgsHandle>(static_cast<void*>(handleMem.data()));
  EXPECT_ACL_ERROR(aclrtKernelArgsInitByUserMem(f, args, argsMem.data(), userBytes - 1),
                   ACL_ERROR_INVALID_PARAM, "is less than the");
  EXPECT_ACL_ERROR(aclrtKernelArgsInitByUserMem(f, args, nullptr, argsBytes),
                   ACL_ERROR_INVALID_PARAM, "userHostMem is null");
  ASSERT_ACL_OK(aclrtKernelArgsInitByUserMem(f, args, argsMem.data(), argsBytes));
  const uint32_t n = 999;
  std::vector<float> x(n, 2.0f), y(n);
  for (uint32_t i = 0; i < n; ++i) y[i] = static_cast<float>(i);
  float* dx = deviceCopy(x);
  float* dy = deviceCopy(y);
  aclrtParamHandle p = nullptr, holder = nullptr;
  ASSERT_ACL_OK(aclrtKernelArgsAppend(args, &dx, sizeof dx, &p));
  ASSERT_ACL_OK(aclrtKernelArgsAppend(args, &dy, sizeof dy, &p));
  ASSERT_ACL_OK(aclrtKernelArgsAppendPlaceHolder(args, &holder));
  void* buffer = nullptr;
  ASSERT_ACL_OK(aclrtKernelArgsGetPlaceHolderBuffer(args, holder, sizeof n, &buffer));
  *static_cast<uint32_t*>(buffer) = n;
  const float alpha = -1.5f;
  ASSERT_ACL_OK(aclrtKernelArgsAppend(args, const_cast<float*>(&alpha), sizeof alpha, &p));
  ASSERT_ACL_OK(aclrtKernelArgsFinalize(args));
  ASSERT_ACL_OK(aclrtLaunchKernelWithConfig(f, 3, stream_, nullptr, args, nullptr));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  auto out = hostCopy(dy, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], alpha * x[i] + y[i]) << i;
}

TEST_F(AscendcFatbinTest, PackedArgumentsAndAModuleFromMemory) {
  std::ifstream file(COHORT_TEST_FATBIN, std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(image.empty());
  ASSERT_ACL_OK(aclrtBinaryLoadFromData(image.data(), image.size(), nullptr, &binary_));
  aclrtFuncHandle f = nullptr;
  ASSERT_ACL_OK(aclrtBinaryGetFunction(binary_, "sum_pair", &f));
  int64_t* out = deviceCopy(std::vector<int64_t>(5, 0));
  // out, a, b at their natural alignment: 8, 4 (+4 padding), 8 bytes.
  unsigned char blob[24] = {};
  const int32_t a = -7;
  const int64_t b = 1LL << 40;
  std::memcpy(blob, &out, 8);
  std::memcpy(blob + 8, &a, 4);
  std::memcpy(blob + 16, &b, 8);
  ASSERT_ACL_OK(aclrtLaunchKernel(f, 5, blob, sizeof blob, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  for (int64_t v : hostCopy(out, 5)) EXPECT_EQ(v, b + a);
  EXPECT_ACL_ERROR(aclrtLaunchKernel(f, 5, blob, 20, stream_), ACL_ERROR_INVALID_PARAM,
                   "argsSize 20 is less than the 24 bytes of sum_pair's 3 parameters");
}

TEST_F(AscendcFatbinTest, MisusesAreNamed) {
  EXPECT_ACL_ERROR(aclrtBinaryLoadFromFile("/nonexistent/k.o", nullptr, &binary_),
                   ACL_ERROR_INVALID_FILE, "cannot read /nonexistent/k.o");
  const std::string notModule = ::testing::TempDir() + "not_a_module.o";
  std::ofstream(notModule) << "plain text";
  EXPECT_ACL_ERROR(aclrtBinaryLoadFromFile(notModule.c_str(), nullptr, &binary_),
                   ACL_ERROR_INVALID_FILE, "is not a kernel module built by ascendc_fatbin_library");
  ASSERT_ACL_OK(aclrtBinaryLoadFromFile(COHORT_TEST_FATBIN, nullptr, &binary_));
  aclrtFuncHandle f = nullptr;
  EXPECT_ACL_ERROR(aclrtBinaryGetFunction(binary_, "nope", &f), ACL_ERROR_RT_KERNEL_LOOKUP,
                   "has no kernel nope (it has: ");
  ASSERT_ACL_OK(aclrtBinaryGetFunction(binary_, "axpy", &f));
  aclrtArgsHandle args = nullptr;
  aclrtParamHandle p = nullptr;
  ASSERT_ACL_OK(aclrtKernelArgsInit(f, &args));
  float* x = nullptr;
  uint16_t small = 0;
  EXPECT_ACL_ERROR(aclrtKernelArgsAppend(args, &small, sizeof small, &p), ACL_ERROR_INVALID_PARAM,
                   "parameter 0 of axpy has 8 bytes, not paramSize 2");
  ASSERT_ACL_OK(aclrtKernelArgsAppend(args, &x, sizeof x, &p));
  EXPECT_ACL_ERROR(aclrtKernelArgsFinalize(args), ACL_ERROR_INVALID_PARAM,
                   "axpy takes 4 parameters, the list has 1");
  EXPECT_ACL_ERROR(aclrtLaunchKernelWithConfig(f, 1, stream_, nullptr, args, nullptr),
                   ACL_ERROR_INVALID_PARAM, "not finalized");
  // Unloading while a launch is queued: the launch still runs (the module is kept).
  float* dx = deviceCopy(std::vector<float>(64, 1.0f));
  float* dy = deviceCopy(std::vector<float>(64, 2.0f));
  aclrtArgsHandle good = axpyArgs(f, dx, dy, 64, 1.0f);
  ASSERT_ACL_OK(aclrtLaunchKernelWithConfig(f, 2, stream_, nullptr, good, nullptr));
  ASSERT_ACL_OK(aclrtBinaryUnLoad(binary_));
  binary_ = nullptr;
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  for (float v : hostCopy(dy, 64)) EXPECT_EQ(v, 3.0f);
}

}  // namespace
}  // namespace cohort::acltest
