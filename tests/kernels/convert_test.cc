// The conversions: the scalar reference against the compiler's _Float16 and against
// F16C's documented NaN handling, bf16's rounding and denormals, and every path's
// bulk conversions against the scalar ones for every 16-bit pattern and many fp32 ones.
#include "kernels/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace cohort::kernels::testing {
namespace {

TEST(ConvertTest, HalfMatchesTheCompilerForEveryValue) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    _Float16 ref;
    std::memcpy(&ref, &h, 2);
    const float f = halfToFloat(h);
    if (std::isnan(static_cast<float>(ref))) {
      EXPECT_TRUE(std::isnan(f));
      continue;
    }
    ASSERT_EQ(floatToBits(f), floatToBits(static_cast<float>(ref))) << bits;
    ASSERT_EQ(floatToHalf(f), h) << bits;
  }
  // Rounding to nearest even, overflow and underflow.
  for (float f : {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65519.0f, 65520.0f, 1e6f, 5.96e-8f,
                  2.98e-8f, 2.99e-8f, -3.1415926f, 1e-5f, 6.1e-5f}) {
    const _Float16 ref = static_cast<_Float16>(f);
    std::uint16_t want;
    std::memcpy(&want, &ref, 2);
    EXPECT_EQ(floatToHalf(f), want) << f;
  }
}

// What VCVTPH2PS and VCVTPS2PH do with NaNs (measured on an F16C processor): quiet,
// with the sign and the top of the payload.
TEST(ConvertTest, HalfNaNsAsF16CMakesThem) {
  const std::pair<std::uint16_t, std::uint32_t> widen[] = {
      {0x7c01, 0x7fc02000}, {0x7d00, 0x7fe00000}, {0x7e00, 0x7fc00000},
      {0xfc01, 0xffc02000}, {0xfe00, 0xffc00000}, {0x7fff, 0x7fffe000}};
  for (auto [h, f] : widen) EXPECT_EQ(floatToBits(halfToFloat(h)), f) << std::hex << h;
  const std::pair<std::uint32_t, std::uint16_t> narrow[] = {
      {0x7f800001, 0x7e00}, {0x7f802000, 0x7e01}, {0x7fa00000, 0x7f00}, {0x7fc00000, 0x7e00},
      {0x7fc01fff, 0x7e00}, {0xffc02000, 0xfe01}, {0x7fbfe000, 0x7fff}};
  for (auto [f, h] : narrow) EXPECT_EQ(floatToHalf(bitsToFloat(f)), h) << std::hex << f;
  // Denormals stay.
  EXPECT_EQ(floatToBits(halfToFloat(0x0001)), 0x33800000u);
  EXPECT_EQ(floatToHalf(bitsToFloat(0x33000001)), 0x0001);
  EXPECT_EQ(floatToHalf(bitsToFloat(0x33000000)), 0x0000);  // the tie rounds to even: zero
}

TEST(ConvertTest, BFloat16RoundsToNearestEvenAndKeepsDenormals) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even wins (1.0).
  EXPECT_EQ(floatToBf16(1.0f + 1.0f / 256), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(floatToBf16(bitsToFloat(0x00018000)), 0x0002);  // a denormal tie, up to even
  EXPECT_EQ(floatToBf16(bitsToFloat(0x00008000)), 0x0000);
  EXPECT_EQ(floatToBf16(bitsToFloat(0x00008001)), 0x0001);
  EXPECT_EQ(floatToBf16(bitsToFloat(0x7f7fffff)), 0x7f80);  // rounds up to inf
  EXPECT_EQ(floatToBf16(bitsToFloat(0x7f800001)), 0x7fc0);  // NaN: quiet, top of the payload
  EXPECT_EQ(floatToBf16(bitsToFloat(0xffc12345)), 0xffc1);
  EXPECT_EQ(floatToBits(bf16ToFloat(0x7f81)), 0x7f810000u);  // widening is exact, NaNs too
}

class ConvertPathTest : public PathTest {};

TEST_P(ConvertPathTest, WideningEvery16BitPatternMatchesTheScalarPath) {
  std::vector<std::uint16_t> all(65536 + 5);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i * 40503);
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    for (std::size_t n : {all.size() - 3, std::size_t{0}, std::size_t{1}, std::size_t{7},
                          std::size_t{17}, std::size_t{33}}) {
      for (std::size_t off : {0, 1, 3}) {
        std::vector<float> mine(n + 3, -1.0f), ref(n + 3, -1.0f);
        toFloat(all.data() + off, type, mine.data() + off, n, path());
        toFloat(all.data() + off, type, ref.data() + off, n, SimdPath::kScalar);
        ASSERT_EQ(std::memcmp(mine.data(), ref.data(), mine.size() * 4), 0)
            << dataTypeName(type) << " count " << n << " offset " << off;
      }
    }
  }
}

TEST_P(ConvertPathTest, NarrowingMatchesTheScalarPath) {
  std::mt19937 rng(7);
  std::vector<std::uint32_t> bits(1 << 20);
  for (auto& b : bits) b = rng();
  std::copy(specialFloats().begin(), specialFloats().end(), bits.begin());
  std::vector<float> src(bits.size());
  std::memcpy(src.data(), bits.data(), bits.size() * 4);
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    for (std::size_t n : {src.size() - 3, std::size_t{0}, std::size_t{1}, std::size_t{9},
                          std::size_t{31}, std::size_t{35}}) {
      for (std::size_t off : {0, 1, 3}) {
        std::vector<std::uint16_t> mine(n + 3, 0xA5A5), ref(n + 3, 0xA5A5);
        fromFloat(src.data() + off, mine.data() + off, type, n, path());
        fromFloat(src.data() + off, ref.data() + off, type, n, SimdPath::kScalar);
        for (std::size_t i = 0; i < mine.size(); ++i) {
          ASSERT_EQ(mine[i], ref[i]) << dataTypeName(type) << " of 0x" << std::hex
                                     << (i >= off && i < off + n ? bits[i] : 0) << std::dec
                                     << " at " << i << ", count " << n << " offset " << off;
        }
      }
    }
  }
}

COHORT_INSTANTIATE_PATHS(ConvertPathTest);

// The scalar path's bulk conversions are the element functions above.
TEST(ConvertTest, ScalarPathIsTheElementReference) {
  std::vector<std::uint16_t> h(65536);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<std::uint16_t>(i);
  std::vector<float> f(h.size());
  toFloat(h.data(), DataType::kFloat16, f.data(), h.size(), SimdPath::kScalar);
  for (std::size_t i = 0; i < h.size(); ++i) {
    ASSERT_EQ(floatToBits(f[i]), floatToBits(halfToFloat(h[i]))) << i;
  }
  std::vector<std::uint16_t> back(h.size());
  fromFloat(f.data(), back.data(), DataType::kBFloat16, f.size(), SimdPath::kScalar);
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(back[i], floatToBf16(f[i])) << i;
}

}  // namespace
}  // namespace cohort::kernels::testing
