// The AVX2 + F16C path: fp32 in 8-lane vectors, fp16 through F16C's conversions, bf16
// through integer shifts and rounding (kernels/x86_vector.h); integers and fp64 as the
// compiler vectorizes the element rules for AVX2. Compiled with function attributes,
// so that the library still loads and runs on processors without AVX2 (the dispatch
// never calls it there).
#include "kernels/table.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#define COHORT_KERNEL __attribute__((target("avx2,f16c")))

namespace cohort::kernels {
namespace {

// AVX2's primitives (kernels/x86_vector.h says what each does).
struct Isa {
  using F = __m256;
  using I = __m256i;
  using Mask = __m256i;  // all ones in a NaN's lane
  static constexpr std::size_t kLanes = 8;
  static constexpr std::size_t kStoreBytes = 32;

  COHORT_KERNEL static F loadF(const float* p) { return _mm256_loadu_ps(p); }
  COHORT_KERNEL static void storeF(float* p, F v) { _mm256_storeu_ps(p, v); }
  COHORT_KERNEL static F halfToF(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  COHORT_KERNEL static void fToHalf(std::uint16_t* p, F v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  COHORT_KERNEL static I widenU16(const std::uint16_t* p) {
    return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  // Lanes of at most 0xffff: the unsigned saturation of PACKUSDW leaves them alone.
  COHORT_KERNEL static void narrowU32(std::uint16_t* p, I v) {
    const __m128i packed =
        _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
  }
  COHORT_KERNEL static I loadI(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
  }
  COHORT_KERNEL static void storeI(void* p, I v) {
    _mm256_storeu_si256(static_cast<__m256i*>(p), v);
  }
  COHORT_KERNEL static F asF(I v) { return _mm256_castsi256_ps(v); }
  COHORT_KERNEL static I asI(F v) { return _mm256_castps_si256(v); }
  COHORT_KERNEL static I shl16(I v) { return _mm256_slli_epi32(v, 16); }
  COHORT_KERNEL static I shr16(I v) { return _mm256_srli_epi32(v, 16); }
  COHORT_KERNEL static I andI(I a, I b) { return _mm256_and_si256(a, b); }
  COHORT_KERNEL static I addI(I a, I b) { return _mm256_add_epi32(a, b); }
  COHORT_KERNEL static I setI(int x) { return _mm256_set1_epi32(x); }
  COHORT_KERNEL static Mask nanOf(F v) { return asI(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
  COHORT_KERNEL static I addUnless(Mask m, I x, I b) { return addI(x, _mm256_andnot_si256(m, b)); }
  COHORT_KERNEL static I orWhere(Mask m, I x, I c) { return _mm256_or_si256(x, andI(m, c)); }
  COHORT_KERNEL static I oddWords(I even, I odd) { return _mm256_blend_epi16(even, odd, 0xaa); }
  // MAXPS(b, a) is b > a ? b : a, i.e. a < b ? b : a: a on NaNs and on two zeros.
  COHORT_KERNEL static F max(F a, F b) { return _mm256_max_ps(b, a); }
  COHORT_KERNEL static F min(F a, F b) { return _mm256_min_ps(b, a); }
  COHORT_KERNEL static F div(F a, F b) { return _mm256_div_ps(a, b); }
  COHORT_KERNEL static F splat(float x) { return _mm256_set1_ps(x); }
  COHORT_KERNEL static void streamStore(char* dst, const char* src) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), loadI(src));
  }
};

}  // namespace
}  // namespace cohort::kernels

#include "kernels/x86_vector.h"
#define COHORT_PATH_TABLE avx2Kernels
#include "kernels/path_body.h"

#endif  // __x86_64__
