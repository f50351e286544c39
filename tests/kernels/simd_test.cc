// The dispatch: which path a processor and COHORT_SIMD choose, and the error that
// names what is missing when COHORT_SIMD forces a path the processor lacks.
#include "kernels/simd.h"

#include <gtest/gtest.h>

#include "common/config.h"
#include "test_util.h"

namespace cohort::kernels {
namespace {

CpuFeatures avx2Only() {
  CpuFeatures f;
  f.avx2 = f.f16c = true;
  return f;
}

CpuFeatures everything() {
  CpuFeatures f = avx2Only();
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512bf16 = true;
  return f;
}

TEST(SimdTest, AutoChoosesTheFastestPathTheProcessorRuns) {
  SimdPath p = SimdPath::kScalar;
  ASSERT_OK(choosePath("auto", everything(), &p));
  EXPECT_EQ(p, SimdPath::kAvx512Bf16);
  CpuFeatures noBf16 = everything();
  noBf16.avx512bf16 = false;
  ASSERT_OK(choosePath("auto", noBf16, &p));
  EXPECT_EQ(p, SimdPath::kAvx512);
  ASSERT_OK(choosePath("", avx2Only(), &p));
  EXPECT_EQ(p, SimdPath::kAvx2);
  CpuFeatures noF16c = avx2Only();
  noF16c.f16c = false;  // fp16 needs F16C: no AVX2 path without it
  ASSERT_OK(choosePath("auto", noF16c, &p));
  EXPECT_EQ(p, SimdPath::kScalar);
  CpuFeatures noBw = everything();
  noBw.avx512bw = false;
  ASSERT_OK(choosePath("auto", noBw, &p));
  EXPECT_EQ(p, SimdPath::kAvx2);
}

TEST(SimdTest, ForcingAPathTheProcessorLacksIsAnErrorNamingIt) {
  SimdPath p = SimdPath::kScalar;
  EXPECT_ERROR(choosePath("avx512", avx2Only(), &p), kConfigError,
               "COHORT_SIMD=avx512 forces the avx512 kernels, but this processor lacks avx512f "
               "avx512bw (it has: avx2 f16c)");
  EXPECT_EQ(p, SimdPath::kAvx2);  // what runs meanwhile
  EXPECT_ERROR(choosePath("avx2", CpuFeatures{}, &p), kConfigError, "lacks avx2 f16c");
  EXPECT_ERROR(choosePath("avx3", everything(), &p), kConfigError,
               "expected one of auto, avx512bf16, avx512, avx2, scalar");
  CpuFeatures noDq = everything();
  noDq.avx512dq = false;
  EXPECT_ERROR(choosePath("avx512bf16", noDq, &p), kConfigError, "lacks avx512dq");
  EXPECT_EQ(p, SimdPath::kAvx512);
  ASSERT_OK(choosePath("scalar", everything(), &p));
  EXPECT_EQ(p, SimdPath::kScalar);
  ASSERT_OK(choosePath("avx2", everything(), &p));
  EXPECT_EQ(p, SimdPath::kAvx2);
}

TEST(SimdTest, ProcessFollowsCohortSimd) {
  // Run as is (auto) and, by ctest, with COHORT_SIMD=scalar and =avx2.
  const std::string& setting = Config::global().simd;
  SimdPath want = SimdPath::kScalar;
  const Status s = choosePath(setting, CpuFeatures::detect(), &want);
  EXPECT_EQ(simdStatus().code(), s.code());
  EXPECT_EQ(activePath(), want) << "COHORT_SIMD=" << setting;
  EXPECT_TRUE(pathSupported(activePath()));
  EXPECT_TRUE(pathSupported(SimdPath::kScalar));
  std::printf("COHORT_SIMD=%s: the %s path runs (processor: %s)\n", setting.c_str(),
              simdPathName(activePath()), CpuFeatures::detect().describe().c_str());
}

TEST(SimdTest, ConfigValidatesTheSetting) {
  EXPECT_EQ(Config::parse({}).simd, "auto");
  EXPECT_EQ(Config::parse({{"COHORT_SIMD", "avx2"}}).simd, "avx2");
  const Config bad = Config::parse({{"COHORT_SIMD", "sse4"}});
  EXPECT_ERROR(bad.status(), kConfigError, "COHORT_SIMD");
  EXPECT_NE(Config::parse({}).describe().find("COHORT_SIMD=auto"), std::string::npos);
}

}  // namespace
}  // namespace cohort::kernels
