// The AVX-512 path (F and BW): fp32 in 16-lane vectors, fp16 through the 512-bit
// VCVTPH2PS/VCVTPS2PH, bf16 through integer shifts and rounding (kernels/x86_vector.h;
// path_avx512_bf16.cc rounds with AVX512_BF16 instead); integers and fp64
// as the compiler vectorizes the element rules for 512-bit registers. Compiled with
// function attributes, so that the library still runs on processors without AVX-512.
#include "kernels/table.h"

#if defined(__x86_64__)
#define COHORT_KERNEL __attribute__((target("avx512f,avx512bw,avx2,f16c,prefer-vector-width=512")))

#include "kernels/avx512_isa.h"
#include "kernels/x86_vector.h"
#define COHORT_PATH_TABLE avx512Kernels
#include "kernels/path_body.h"

#endif  // __x86_64__
