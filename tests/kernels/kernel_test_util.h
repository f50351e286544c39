// What the kernel tests share: a suite parameterized by SIMD path that skips the
// paths this processor lacks, and inputs full of the values that go wrong.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/simd.h"

namespace cohort::kernels {
// Test names and messages show the path by name.
inline void PrintTo(SimdPath path, std::ostream* os) { *os << simdPathName(path); }
}  // namespace cohort::kernels

namespace cohort::kernels::testing {

/// A test per path; on a path the processor cannot run it is skipped, saying why.
class PathTest : public ::testing::TestWithParam<SimdPath> {
 protected:
  void SetUp() override {
    if (!pathSupported(GetParam())) {
      GTEST_SKIP() << "the " << simdPathName(GetParam()) << " path is not tested: this processor "
                   << "lacks " << missingFeatures(GetParam(), CpuFeatures::detect());
    }
  }
  SimdPath path() const { return GetParam(); }
};

inline std::string pathTestName(const ::testing::TestParamInfo<SimdPath>& info) {
  return simdPathName(info.param);
}

#define COHORT_INSTANTIATE_PATHS(suite)                                                \
  INSTANTIATE_TEST_SUITE_P(Paths, suite,                                               \
                           ::testing::Values(SimdPath::kScalar, SimdPath::kAvx2,       \
                                             SimdPath::kAvx512, SimdPath::kAvx512Bf16), \
                           ::cohort::kernels::testing::pathTestName)

/// fp32 bit patterns: zeros, denormals, the limits, infinities, quiet and signalling
/// NaNs with payloads and both signs, and ties of the fp16 and bf16 roundings.
inline const std::vector<std::uint32_t>& specialFloats() {
  static const std::vector<std::uint32_t> kBits = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000,
      0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
      0xffc00000, 0x7fc12345, 0xffc00001, 0x7f800001, 0x7fa00000, 0xffbfffff, 0x7fbfe000,
      0x3f808000, 0x3f818000, 0x3f807fff, 0x3f800fff, 0x3f801000, 0x3f803000, 0x33000000,
      0x33000001, 0x387fc000, 0x477fe000, 0x477ff000, 0x38800000, 0x00020000, 0x80020000};
  return kBits;
}

/// `n` elements of `elementSize` bytes: random bit patterns, with the special values
/// spread among them (for the 16-bit float types random patterns already hold
/// NaNs, infinities and denormals; the specials add fp32's at their top half).
inline std::vector<unsigned char> randomElements(std::size_t n, std::size_t elementSize,
                                                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> out(n * elementSize);
  for (auto& b : out) b = static_cast<unsigned char>(rng());
  const auto& special = specialFloats();
  for (std::size_t i = 0; i < n; i += 3) {
    const std::uint32_t bits = special[rng() % special.size()];
    if (elementSize == 4) {
      std::memcpy(&out[i * 4], &bits, 4);
    } else if (elementSize == 2) {
      const auto top = static_cast<std::uint16_t>(bits >> 16);
      std::memcpy(&out[i * 2], &top, 2);
    }
  }
  return out;
}

/// Counts that end in every possible partial vector, and some whole ones.
inline const std::vector<std::size_t>& oddCounts() {
  static const std::vector<std::size_t> kCounts = {0,  1,  2,  3,  7,  8,   15,  16,  17,   31,
                                                   33, 47, 63, 64, 65, 127, 129, 255, 1000, 4099};
  return kCounts;
}

}  // namespace cohort::kernels::testing
