// AVX-512's primitives (F and BW) for kernels/x86_vector.h, which says what each
// does: shared by path_avx512.cc and path_avx512_bf16.cc. Each includes it once,
// after it defines COHORT_KERNEL (its target attribute). Masks are k registers, so
// the NaN fix-ups of bf16 are merge-masked operations. Internal linkage; no
// include guard, on purpose.

// GCC 12 takes the _mm512_undefined_*() placeholders inside its own intrinsics for
// uninitialized values (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace cohort::kernels {
namespace {

struct Isa {
  using F = __m512;
  using I = __m512i;
  using Mask = __mmask16;
  static constexpr std::size_t kLanes = 16;
  static constexpr std::size_t kStoreBytes = 64;

  COHORT_KERNEL static F loadF(const float* p) { return _mm512_loadu_ps(p); }
  COHORT_KERNEL static void storeF(float* p, F v) { _mm512_storeu_ps(p, v); }
  COHORT_KERNEL static F halfToF(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  COHORT_KERNEL static void fToHalf(std::uint16_t* p, F v) {
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  }
  COHORT_KERNEL static I widenU16(const std::uint16_t* p) {
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  COHORT_KERNEL static void narrowU32(std::uint16_t* p, I v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(v));
  }
  COHORT_KERNEL static I loadI(const void* p) { return _mm512_loadu_si512(p); }
  COHORT_KERNEL static void storeI(void* p, I v) { _mm512_storeu_si512(p, v); }
  COHORT_KERNEL static F asF(I v) { return _mm512_castsi512_ps(v); }
  COHORT_KERNEL static I asI(F v) { return _mm512_castps_si512(v); }
  COHORT_KERNEL static I shl16(I v) { return _mm512_slli_epi32(v, 16); }
  COHORT_KERNEL static I shr16(I v) { return _mm512_srli_epi32(v, 16); }
  COHORT_KERNEL static I andI(I a, I b) { return _mm512_and_si512(a, b); }
  COHORT_KERNEL static I addI(I a, I b) { return _mm512_add_epi32(a, b); }
  COHORT_KERNEL static I setI(int x) { return _mm512_set1_epi32(x); }
  COHORT_KERNEL static Mask nanOf(F v) { return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q); }
  COHORT_KERNEL static I addUnless(Mask m, I x, I b) {
    return _mm512_mask_add_epi32(x, static_cast<Mask>(~m), x, b);
  }
  COHORT_KERNEL static I orWhere(Mask m, I x, I c) { return _mm512_mask_or_epi32(x, m, x, c); }
  COHORT_KERNEL static I oddWords(I even, I odd) {
    return _mm512_mask_blend_epi16(0xaaaaaaaa, even, odd);
  }
  // MAXPS(b, a) is b > a ? b : a, i.e. a < b ? b : a: a on NaNs and on two zeros.
  COHORT_KERNEL static F max(F a, F b) { return _mm512_max_ps(b, a); }
  COHORT_KERNEL static F min(F a, F b) { return _mm512_min_ps(b, a); }
  COHORT_KERNEL static F div(F a, F b) { return _mm512_div_ps(a, b); }
  COHORT_KERNEL static F splat(float x) { return _mm512_set1_ps(x); }
  COHORT_KERNEL static void streamStore(char* dst, const char* src) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), loadI(src));
  }
};

}  // namespace
}  // namespace cohort::kernels

