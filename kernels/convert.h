// Conversions between fp32 and the 16-bit float types: the scalar reference (inline,
// element by element) and the bulk conversions of every path.
//
// fp16 follows F16C (VCVTPH2PS, VCVTPS2PH with round to nearest even), so that the
// scalar path and the vector paths agree on every bit: denormals are kept both ways;
// a NaN keeps its sign and the top of its payload and comes out quiet. bf16 -> fp32
// is exact (a shift, NaNs unchanged); fp32 -> bf16 rounds to nearest even, keeping
// denormals, and a NaN comes out quiet with the top of its payload: integer operations
// on most paths, AVX512_BF16's VCVTNE2PS2BF16 on the avx512bf16 path except where a
// vector holds a denormal (which that instruction would flush).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cohort/communicator.h"
#include "kernels/simd.h"

namespace cohort::kernels {

inline float bitsToFloat(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline std::uint32_t floatToBits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

inline float halfToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f;
  std::uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) {  // inf, or a NaN made quiet
    return bitsToFloat(sign | 0x7f800000 | (mant << 13) | (mant != 0 ? 0x400000 : 0));
  }
  if (exp != 0) return bitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bitsToFloat(sign);
  exp = 113;  // a denormal: normalise it
  while ((mant & 0x400) == 0) {
    mant <<= 1;
    --exp;
  }
  return bitsToFloat(sign | (exp << 23) | ((mant & 0x3ff) << 13));
}

inline std::uint16_t floatToHalf(float f) {
  const std::uint32_t x = floatToBits(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t absx = x & 0x7fffffff;
  if (absx > 0x7f800000) {  // NaN: quiet, the top of the payload
    return static_cast<std::uint16_t>(sign | 0x7e00 | ((absx >> 13) & 0x3ff));
  }
  if (absx >= 0x477ff000) return static_cast<std::uint16_t>(sign | 0x7c00);  // inf, overflow
  if (absx < 0x38800000) {               // a denormal or zero in fp16
    if (absx < 0x33000000) return sign;  // rounds to zero
    const std::uint32_t mant = (absx & 0x7fffff) | 0x800000;
    const int shift = 126 - static_cast<int>(absx >> 23);  // 14..24
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (absx >> 13) - (112u << 10);
  const std::uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

inline float bf16ToFloat(std::uint16_t b) {
  return bitsToFloat(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t floatToBf16(float f) {
  const std::uint32_t x = floatToBits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<std::uint16_t>((x >> 16) | 0x40);  // NaN
  return static_cast<std::uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/// dst[i] = src[i] as fp32, for src of type kFloat16 or kBFloat16 (exact).
void toFloat(const void* src, DataType srcType, float* dst, std::size_t count,
             SimdPath path = activePath());
/// dst[i] = src[i] rounded to dstType (kFloat16 or kBFloat16), to nearest even.
void fromFloat(const float* src, void* dst, DataType dstType, std::size_t count,
               SimdPath path = activePath());

}  // namespace cohort::kernels
