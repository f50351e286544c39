// Which vector instructions the kernels use: the processor's features (cpuid), the
// paths built from them, and the one path this process runs, chosen once from the
// processor and COHORT_SIMD. Every path computes bit-identical results; they
// differ only in speed.
#pragma once

#include <string>

#include "cohort/status.h"

namespace cohort::kernels {

/// The kernel paths, slowest first. kScalar is the portable reference the others
/// match bit for bit; kAvx512Bf16 is kAvx512 with AVX512_BF16's rounding to bf16.
enum class SimdPath : int { kScalar = 0, kAvx2, kAvx512, kAvx512Bf16 };
constexpr int kSimdPathCount = 4;

/// "scalar", "avx2", "avx512", "avx512bf16": the names COHORT_SIMD takes.
const char* simdPathName(SimdPath path);

/// What the processor (and the operating system, for the register state) offers. A
/// plain value; detect() is thread-safe.
struct CpuFeatures {
  bool avx2 = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512bf16 = false;

  static CpuFeatures detect();
  /// "avx2 f16c avx512f avx512bw avx512dq avx512bf16" (those present), or "none".
  std::string describe() const;
};

/// The features `path` needs that `cpu` lacks, space-separated; empty when it can run.
std::string missingFeatures(SimdPath path, const CpuFeatures& cpu);

/// The path for a COHORT_SIMD setting ("auto" or empty: the fastest `cpu` runs).
/// kConfigError naming the missing features when the setting forces a path `cpu`
/// lacks, or for an unknown setting; *out is then the fastest path `cpu` runs.
Status choosePath(const std::string& setting, const CpuFeatures& cpu, SimdPath* out);

/// The path this process runs: chosen on first use (at the latest when a
/// communicator is created) from CpuFeatures::detect() and COHORT_SIMD, then fixed.
SimdPath activePath();
/// Whether that choice failed (COHORT_SIMD forces a path this processor lacks): the
/// communicator refuses to start with it. The kernels meanwhile run activePath().
Status simdStatus();
/// Whether this processor runs `path` (tests and benchmarks skip the others).
bool pathSupported(SimdPath path);

}  // namespace cohort::kernels
