// The scalar path: every element through the rules of kernels/element_ops.h and the
// reference conversions of kernels/convert.h. The reference the vector paths match,
// and the path of processors without AVX2 + F16C.
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/convert.h"
#include "kernels/element_ops.h"

#define COHORT_KERNEL

namespace cohort::kernels {
namespace {

struct Vec {
  using F = float;
  static constexpr std::size_t kLanes = 1;
  static constexpr std::size_t kStoreBytes = 16;
  static F add(F a, F b) { return ops::sum(a, b); }
  static F mul(F a, F b) { return ops::prod(a, b); }
  static F max(F a, F b) { return ops::max(a, b); }
  static F min(F a, F b) { return ops::min(a, b); }
  static F div(F a, F b) { return a / b; }
  static F splat(float x) { return x; }
  static void streamStore(char* dst, const char* src) {
#if defined(__SSE2__)  // baseline x86-64
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
#else
    std::memcpy(dst, src, kStoreBytes);
#endif
  }
};

struct F32Format {
  using Elem = float;
  static constexpr bool kPaired = false;
  static float load(const Elem* p) { return *p; }
  static void store(Elem* p, float v) { *p = v; }
};

struct HalfFormat {
  using Elem = std::uint16_t;
  static constexpr bool kPaired = false;
  static float load(const Elem* p) { return halfToFloat(*p); }
  static void store(Elem* p, float v) { *p = floatToHalf(v); }
};

struct Bf16Format {
  using Elem = std::uint16_t;
  static constexpr bool kPaired = false;
  static float load(const Elem* p) { return bf16ToFloat(*p); }
  static void store(Elem* p, float v) { *p = floatToBf16(v); }
};

}  // namespace
}  // namespace cohort::kernels

#define COHORT_PATH_TABLE scalarKernels
#include "kernels/path_body.h"
