// AscendC kernels launched with <<<>>> on the emulated devices: every element of
// every vector operation against a value computed here, odd sizes and block counts,
// float and half; the blocks' identities; stream order with copies, events and
// callbacks; resource limits capping the blocks that run at once; replay in a
// captured model; and each fault -- a trap, a unified-buffer overrun, a queue
// misused, an operand too long -- as an AI Core exception naming kernel and block.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ascendc/ascendc_test_util.h"
#include "ascendc/test_kernels.h"

namespace cohort::acltest {
namespace {

class AscendcTest : public KernelTest {
 protected:
  // The stream's error after a kernel that should fault: the AI Core exception,
  // with a message naming `kernel`, `block` and `cause`.
  void expectFault(const std::string& kernel, const std::string& block, const std::string& cause) {
    EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_ERROR_RT_VECTOR_CORE_EXCEPTION);
    const char* m = aclGetRecentErrMsg();
    ASSERT_NE(m, nullptr);
    const std::string message(m);
    EXPECT_NE(message.find("AI Core exception in kernel " + kernel), std::string::npos) << message;
    EXPECT_NE(message.find(block), std::string::npos) << message;
    EXPECT_NE(message.find(cause), std::string::npos) << message;
  }
};

std::vector<float> pattern(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 37) % 101);
  return v;
}

TEST_F(AscendcTest, TiledFloatAddCoversEveryElementForOddSizes) {
  for (uint32_t blocks : {1u, 3u, 7u}) {
    for (uint32_t perBlock : {1u, 33u, 1000u, 4099u}) {
      const size_t n = size_t{blocks} * perBlock;
      auto x = pattern(n, 0.5f, -3.0f);
      auto y = pattern(n, -0.25f, 1.0f);
      float* dx = deviceCopy(x);
      float* dy = deviceCopy(y);
      float* dz = deviceCopy(std::vector<float>(n, -999.0f));
      ASSERT_EQ(LaunchAddFloat(blocks, stream_, dx, dy, dz, perBlock, 256), ACL_SUCCESS);
      ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
      auto z = hostCopy(dz, n);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(z[i], x[i] + y[i]) << "blocks " << blocks << " perBlock " << perBlock << " i " << i;
      }
    }
  }
}

TEST_F(AscendcTest, HalfAddRoundsAsHalf) {
  const uint32_t blocks = 5, perBlock = 777;
  const size_t n = size_t{blocks} * perBlock;
  std::vector<_Float16> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<_Float16>(static_cast<float>(i % 251) * 0.125f);
    y[i] = static_cast<_Float16>(1.0f / static_cast<float>(1 + i % 13));
  }
  auto* dx = deviceCopy(x);
  auto* dy = deviceCopy(y);
  auto* dz = deviceCopy(std::vector<_Float16>(n));
  ASSERT_EQ(LaunchAddHalf(blocks, stream_, dx, dy, dz, perBlock, 128), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  auto z = hostCopy(dz, n);
  for (size_t i = 0; i < n; ++i) {
    const _Float16 want = static_cast<_Float16>(static_cast<float>(x[i]) + static_cast<float>(y[i]));
    ASSERT_EQ(static_cast<float>(z[i]), static_cast<float>(want)) << i;
  }
}

TEST_F(AscendcTest, EveryVectorOperationMatchesItsDefinition) {
  const uint32_t blocks = 3, perBlock = 301;
  const size_t n = size_t{blocks} * perBlock;
  auto x = pattern(n, 0.03f, -1.5f);
  auto y = pattern(n, 0.02f, 0.5f);  // positive: Ln and Sqrt
  constexpr int kOps = 16;
  float* dx = deviceCopy(x);
  float* dy = deviceCopy(y);
  float* dout = deviceCopy(std::vector<float>(n * kOps, -12345.0f));
  ASSERT_EQ(LaunchVectorOps(blocks, stream_, dx, dy, dout, perBlock), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  auto out = hostCopy(dout, n * kOps);
  const char* names[kOps] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls",
                             "Maxs", "Mins", "Abs", "Exp", "Ln", "Sqrt", "Relu", "Duplicate"};
  for (size_t i = 0; i < n; ++i) {
    const float a = x[i], b = y[i];
    const float want[kOps] = {a + b, a - b, a * b, a / b, std::max(a, b), std::min(a, b),
                              a + 1.5f, a * -2.0f, std::max(a, 0.25f), std::min(a, 0.25f),
                              std::fabs(a), std::exp(a), std::log(b), std::sqrt(b),
                              std::max(a, 0.0f), 7.0f};
    for (int k = 0; k < kOps; ++k) {
      ASSERT_FLOAT_EQ(out[k * n + i], want[k]) << names[k] << " element " << i;
    }
  }
}

TEST_F(AscendcTest, ReduceSumAndMaxWithIndexPerBlock) {
  const uint32_t blocks = 4, perBlock = 1023;
  const size_t n = size_t{blocks} * perBlock;
  auto x = pattern(n, 0.01f, -0.3f);
  x[2 * perBlock + 517] = 100.0f;
  float* dx = deviceCopy(x);
  float* sums = deviceCopy(std::vector<float>(blocks));
  float* maxes = deviceCopy(std::vector<float>(blocks));
  uint32_t* indexes = deviceCopy(std::vector<uint32_t>(blocks));
  ASSERT_EQ(LaunchReduce(blocks, stream_, dx, sums, maxes, indexes, perBlock), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  auto s = hostCopy(sums, blocks);
  auto m = hostCopy(maxes, blocks);
  auto idx = hostCopy(indexes, blocks);
  for (uint32_t b = 0; b < blocks; ++b) {
    float sum = 0, best = x[b * perBlock];
    uint32_t at = 0;
    for (uint32_t i = 0; i < perBlock; ++i) {
      sum += x[b * perBlock + i];
      if (x[b * perBlock + i] > best) {
        best = x[b * perBlock + i];
        at = i;
      }
    }
    EXPECT_FLOAT_EQ(s[b], sum) << b;
    EXPECT_EQ(m[b], best) << b;
    EXPECT_EQ(idx[b], at) << b;
  }
  EXPECT_EQ(idx[2], 517u);
}

TEST_F(AscendcTest, DataCopyPadCastAndDuplicateOnAnOddLength) {
  const uint32_t length = 13;
  std::vector<float> x(length);
  for (uint32_t i = 0; i < length; ++i) x[i] = 0.7f * static_cast<float>(i) - 3.2f;
  float* dx = deviceCopy(x);
  int32_t* dout = deviceCopy(std::vector<int32_t>(length + 3, 4242));
  ASSERT_EQ(LaunchPadCast(1, stream_, dx, dout, length, 2.0f), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  auto out = hostCopy(dout, length + 3);
  for (uint32_t i = 0; i < length; ++i) {
    EXPECT_EQ(out[i], static_cast<int32_t>(std::trunc(x[i] * 2.0f))) << i;
  }
  for (uint32_t i = length; i < length + 3; ++i) EXPECT_EQ(out[i], 4242) << "written past the end";
}

TEST_F(AscendcTest, EveryBlockRunsOnceWithItsIndex) {
  for (uint32_t blocks : {1u, 2u, 17u, 48u}) {
    int32_t* out = deviceCopy(std::vector<int32_t>(blocks, -1));
    ASSERT_EQ(LaunchBlockIds(blocks, stream_, out), ACL_SUCCESS);
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    auto v = hostCopy(out, blocks);
    for (uint32_t b = 0; b < blocks; ++b) EXPECT_EQ(v[b], static_cast<int32_t>(b * 1000 + blocks));
  }
}

TEST_F(AscendcTest, KernelsRunInStreamOrderWithCopiesEventsAndCallbacks) {
  const uint32_t blocks = 2, perBlock = 4096;
  const size_t n = size_t{blocks} * perBlock;
  auto x = pattern(n, 1.0f, 0.0f);
  float* dx = deviceCopy(std::vector<float>(n, 0.0f));
  float* dy = deviceCopy(std::vector<float>(n, 1.0f));
  float* dz = deviceCopy(std::vector<float>(n, 0.0f));
  // The input arrives by an async copy queued before the kernel.
  ASSERT_ACL_OK(aclrtMemcpyAsync(dx, n * sizeof(float), x.data(), n * sizeof(float),
                                 ACL_MEMCPY_HOST_TO_DEVICE, stream_));
  ASSERT_EQ(LaunchAddFloat(blocks, stream_, dx, dy, dz, perBlock, 512), ACL_SUCCESS);
  aclrtEvent done = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&done));
  ASSERT_ACL_OK(aclrtRecordEvent(done, stream_));
  // A second stream waits for the kernel through the event, then adds again.
  aclrtStream other = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&other));
  ASSERT_ACL_OK(aclrtStreamWaitEvent(other, done));
  float* dw = deviceCopy(std::vector<float>(n, 0.0f));
  ASSERT_EQ(LaunchAddFloat(blocks, other, dz, dy, dw, perBlock, 512), ACL_SUCCESS);
  struct Seen {
    float* dz;
    float first = 0;
  } seen{dz};
  ASSERT_ACL_OK(aclrtLaunchHostFunc(
      stream_,
      [](void* p) {
        auto* s = static_cast<Seen*>(p);
        aclrtMemcpy(&s->first, sizeof(float), s->dz, sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
      },
      &seen));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(other));
  EXPECT_EQ(seen.first, x[0] + 1.0f);
  auto w = hostCopy(dw, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(w[i], x[i] + 2.0f) << i;
  EXPECT_EQ(aclrtDestroyEvent(done), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(other), ACL_SUCCESS);
}

TEST_F(AscendcTest, ResourceLimitsCapTheBlocksRunningAtOnce) {
  int32_t* running = deviceCopy(std::vector<int32_t>{0});
  int32_t* peak = deviceCopy(std::vector<int32_t>{0});
  ASSERT_ACL_OK(aclrtSetStreamResLimit(stream_, ACL_RT_DEV_RES_VECTOR_CORE, 1));
  ASSERT_EQ(LaunchConcurrency(8, stream_, running, peak), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(hostCopy(peak, 1)[0], 1) << "one vector core allowed, blocks overlapped";
  // Without the limit, the 4 AI Core threads of the test's environment overlap.
  ASSERT_ACL_OK(aclrtResetStreamResLimit(stream_));
  ASSERT_ACL_OK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 2));
  ASSERT_ACL_OK(aclrtMemset(peak, sizeof(int32_t), 0, sizeof(int32_t)));
  ASSERT_EQ(LaunchConcurrency(8, stream_, running, peak), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_LE(hostCopy(peak, 1)[0], 2);
  ASSERT_ACL_OK(aclrtResetDeviceResLimit(0));
}

TEST_F(AscendcTest, ATrapIsAnAiCoreExceptionNamingKernelAndBlock) {
  for (bool viaAsm : {true, false}) {
    int32_t* done = deviceCopy(std::vector<int32_t>{0});
    ASSERT_ACL_OK(aclrtSetStreamResLimit(stream_, ACL_RT_DEV_RES_VECTOR_CORE, 1));
    ASSERT_EQ(LaunchTrap(6, stream_, 2, done, viaAsm), ACL_SUCCESS);
    expectFault("trapping", "block 2 of 6", viaAsm ? "asm(\"trap\")" : "executed trap");
    // One core: blocks 0 and 1 ran, 2 trapped, the rest never started.
    EXPECT_EQ(hostCopy(done, 1)[0], 2);
    aclrtErrorInfo info = {};
    ASSERT_ACL_OK(aclrtGetErrorVerbose(0, &info));
    EXPECT_EQ(info.errorType, ACL_RT_ERROR_AICORE);
    ASSERT_ACL_OK(aclrtResetStreamResLimit(stream_));
  }
}

TEST_F(AscendcTest, AnInvalidAccessIsAnAiCoreExceptionAndTheProcessGoesOn) {
  int32_t* done = deviceCopy(std::vector<int32_t>{0});
  int32_t* bad = reinterpret_cast<int32_t*>(static_cast<uintptr_t>(0x40));  // never mapped
  ASSERT_ACL_OK(aclrtSetStreamResLimit(stream_, ACL_RT_DEV_RES_VECTOR_CORE, 1));
  ASSERT_EQ(LaunchFault(5, stream_, 3, bad, done), ACL_SUCCESS);
  expectFault("faulting", "block 3 of 5", "invalid memory access (SIGSEGV) at address 0x40");
  // One core: blocks 0 to 2 ran, 3 faulted, 4 never started.
  EXPECT_EQ(hostCopy(done, 1)[0], 3);
  ASSERT_ACL_OK(aclrtResetStreamResLimit(stream_));
  // The same stream, and every core, runs the next kernel (the error was reported).
  ASSERT_ACL_OK(aclrtMemset(done, sizeof(int32_t), 0, sizeof(int32_t)));
  ASSERT_EQ(LaunchFault(6, stream_, 6, bad, done), ACL_SUCCESS);  // no block 6: none faults
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(hostCopy(done, 1)[0], 6);
}

TEST_F(AscendcTest, AUnifiedBufferOverrunTrapsInsteadOfCorrupting) {
  ASSERT_EQ(LaunchUbHungry(2, stream_, 64 * 1024), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  ASSERT_EQ(LaunchUbHungry(3, stream_, 200 * 1024), ACL_SUCCESS);
  expectFault("ub_hungry", " of 3: ", "204800 bytes of the unified buffer");
}

TEST_F(AscendcTest, QueueMisuseAndLongOperandsTrap) {
  float* x = deviceCopy(std::vector<float>(1024, 1.0f));
  ASSERT_EQ(LaunchMisuse(1, stream_, x, 0), ACL_SUCCESS);
  expectFault("misuse", "block 0 of 1", "DeQue: the queue is empty");
  ASSERT_ACL_OK(aclrtDestroyStream(stream_));
  ASSERT_ACL_OK(aclrtCreateStream(&stream_));
  ASSERT_EQ(LaunchMisuse(1, stream_, x, 1), ACL_SUCCESS);
  expectFault("misuse", "block 0 of 1", "DataCopy: 65 elements asked, but the local destination has only 64");
}

TEST_F(AscendcTest, ALaunchOfNoBlocksIsRefused) {
  int32_t* out = deviceCopy(std::vector<int32_t>(1, -1));
  EXPECT_ACL_ERROR(LaunchBlockIds(0, stream_, out), ACL_ERROR_INVALID_PARAM, "blockDim is 0");
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(hostCopy(out, 1)[0], -1);
}

TEST_F(AscendcTest, PrintfWritesOneLinePerBlock) {
  testing::internal::CaptureStdout();
  ASSERT_EQ(LaunchPrint(3, stream_), ACL_SUCCESS);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  const std::string out = testing::internal::GetCapturedStdout();
  for (int b = 0; b < 3; ++b) {
    EXPECT_NE(out.find("block " + std::to_string(b) + " of 3\n"), std::string::npos) << out;
  }
}

TEST_F(AscendcTest, ACapturedKernelRunsAtEveryReplayWithItsArguments) {
  const uint32_t blocks = 3, perBlock = 1001;
  const size_t n = size_t{blocks} * perBlock;
  float* dx = deviceCopy(std::vector<float>(n, 0.0f));
  float* dy = deviceCopy(std::vector<float>(n, 0.5f));
  float* dz = deviceCopy(std::vector<float>(n, 0.0f));
  aclmdlRI model = nullptr;
  ASSERT_ACL_OK(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  ASSERT_EQ(LaunchAddFloat(blocks, stream_, dx, dy, dz, perBlock, 100), ACL_SUCCESS);
  ASSERT_ACL_OK(aclmdlRICaptureEnd(stream_, &model));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(hostCopy(dz, 1)[0], 0.0f) << "a captured kernel ran at capture";
  for (int round = 1; round <= 3; ++round) {
    auto x = pattern(n, static_cast<float>(round), 0.0f);
    ASSERT_ACL_OK(aclrtMemcpy(dx, n * sizeof(float), x.data(), n * sizeof(float),
                              ACL_MEMCPY_HOST_TO_DEVICE));
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    auto z = hostCopy(dz, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] + 0.5f) << "round " << round << " i " << i;
  }
  ASSERT_ACL_OK(aclmdlRIDestroy(model));
}

}  // namespace
}  // namespace cohort::acltest
