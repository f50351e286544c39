// The AVX-512 path with AVX512_BF16 (and DQ): path_avx512.cc's kernels, but fp32 ->
// bf16 rounds with VCVTNE2PS2BF16, one instruction for two vectors where the integer
// rounding takes six per vector. That instruction flushes denormal inputs to zero,
// while the reference (element_ops.h) rounds them like any other value: a pair of
// vectors holding a denormal takes the integer rounding instead, so the results stay
// bit-identical to every other path. NaNs come out as the reference's (the quieted top
// half). Compiled with function attributes, like the other vector paths.
#include "kernels/table.h"

#if defined(__x86_64__)
#define COHORT_KERNEL \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512bf16,avx2,f16c,prefer-vector-width=512")))

#include "kernels/avx512_isa.h"
#define COHORT_OWN_BF16_FORMAT
#include "kernels/x86_vector.h"

namespace cohort::kernels {
namespace {

struct Bf16Format : Bf16Integer {
  // VFPCLASSPS category 0x20: denormal.
  COHORT_KERNEL static __mmask16 denormals(Isa::F v) { return _mm512_fpclass_ps_mask(v, 0x20); }

  COHORT_KERNEL static void store(Elem* p, Isa::F v) {
    if (__builtin_expect(denormals(v) != 0, 0)) return Bf16Integer::store(p, v);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), (__m256i)_mm512_cvtneps_pbh(v));
  }
  // v[0] holds the even elements, v[1] the odd ones (load2's order): one conversion
  // puts them in the low and high halves, and one word permutation interleaves them.
  COHORT_KERNEL static void store2(Elem* p, const Isa::F* v) {
    if (__builtin_expect((denormals(v[0]) | denormals(v[1])) != 0, 0)) {
      return Bf16Integer::store2(p, v);
    }
    const __m512i halves = (__m512i)_mm512_cvtne2ps_pbh(v[1], v[0]);
    // Word 2i of the result is word i of the low half, word 2i + 1 word i of the high.
    const __m512i interleave = _mm512_set_epi16(
        31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
        23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    _mm512_storeu_si512(p, _mm512_permutexvar_epi16(interleave, halves));
  }
};

}  // namespace
}  // namespace cohort::kernels

#define COHORT_PATH_TABLE avx512Bf16Kernels
#include "kernels/path_body.h"

#endif  // __x86_64__
