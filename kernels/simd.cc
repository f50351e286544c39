#include "kernels/simd.h"

#include <fmt/format.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"

namespace cohort::kernels {

namespace {

// A feature, by the name __builtin_cpu_supports and /proc/cpuinfo give it.
struct Feature {
  const char* name;
  bool CpuFeatures::*have;
};
constexpr Feature kAvx2{"avx2", &CpuFeatures::avx2};
constexpr Feature kF16c{"f16c", &CpuFeatures::f16c};
constexpr Feature kAvx512f{"avx512f", &CpuFeatures::avx512f};
constexpr Feature kAvx512bw{"avx512bw", &CpuFeatures::avx512bw};
constexpr Feature kAvx512dq{"avx512dq", &CpuFeatures::avx512dq};
constexpr Feature kAvx512bf16{"avx512bf16", &CpuFeatures::avx512bf16};

// The names of those of `features` that `cpu` has (or, !present, lacks).
std::string names(std::initializer_list<Feature> features, const CpuFeatures& cpu, bool present) {
  std::string out;
  for (const Feature& f : features) {
    if (cpu.*f.have == present) out += (out.empty() ? "" : " ") + std::string(f.name);
  }
  return out;
}

SimdPath fastest(const CpuFeatures& cpu) {
  for (int p = kSimdPathCount - 1; p > 0; --p) {
    if (missingFeatures(static_cast<SimdPath>(p), cpu).empty()) return static_cast<SimdPath>(p);
  }
  return SimdPath::kScalar;
}

// AVX512_BF16: CPUID leaf 7, sub-leaf 1, EAX bit 5. Read directly, as not every
// compiler's __builtin_cpu_supports knows the name.
bool cpuHasAvx512Bf16() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 5)) != 0;
#else
  return false;
#endif
}

// The choice of this process, made once.
struct Active {
  SimdPath path = SimdPath::kScalar;
  Status status;
  CpuFeatures cpu;
};

const Active& active() {
  static const Active a = [] {
    Active out;
    out.cpu = CpuFeatures::detect();
    out.status = choosePath(Config::global().simd, out.cpu, &out.path);
    if (!out.status.ok()) {
      COHORT_LOG(kError, "kernels", "{}", out.status.message());
    }
    COHORT_LOG(kInfo, "kernels", "SIMD path {} (processor: {})", simdPathName(out.path),
               out.cpu.describe());
    return out;
  }();
  return a;
}

}  // namespace

const char* simdPathName(SimdPath path) {
  static const char* kNames[] = {"scalar", "avx2", "avx512", "avx512bf16"};
  const int i = static_cast<int>(path);
  return i >= 0 && i < kSimdPathCount ? kNames[i] : "unknown";
}

CpuFeatures CpuFeatures::detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  // These also check that the operating system saves the vector registers (XGETBV).
  f.avx2 = __builtin_cpu_supports("avx2") != 0;
  f.f16c = __builtin_cpu_supports("f16c") != 0;
  f.avx512f = __builtin_cpu_supports("avx512f") != 0;
  f.avx512bw = __builtin_cpu_supports("avx512bw") != 0;
  f.avx512dq = __builtin_cpu_supports("avx512dq") != 0;
  f.avx512bf16 = f.avx512f && cpuHasAvx512Bf16();
#endif
  return f;
}

std::string CpuFeatures::describe() const {
  const std::string out =
      names({kAvx2, kF16c, kAvx512f, kAvx512bw, kAvx512dq, kAvx512bf16}, *this, true);
  return out.empty() ? "none" : out;
}

std::string missingFeatures(SimdPath path, const CpuFeatures& cpu) {
#if defined(__x86_64__)
  switch (path) {
    case SimdPath::kScalar:
      return "";
    case SimdPath::kAvx2:
      return names({kAvx2, kF16c}, cpu, false);
    // The compiler may use AVX2 and F16C instructions in the AVX-512 code as well.
    case SimdPath::kAvx512:
      return names({kAvx512f, kAvx512bw, kAvx2, kF16c}, cpu, false);
    case SimdPath::kAvx512Bf16:
      return names({kAvx512f, kAvx512bw, kAvx512dq, kAvx512bf16, kAvx2, kF16c}, cpu, false);
  }
  return "an unknown path";
#else
  return path == SimdPath::kScalar ? "" : "an x86-64 processor";
#endif
}

Status choosePath(const std::string& setting, const CpuFeatures& cpu, SimdPath* out) {
  *out = fastest(cpu);
  if (setting.empty() || setting == "auto") return Status::Ok();
  for (int p = 0; p < kSimdPathCount; ++p) {
    const auto path = static_cast<SimdPath>(p);
    if (setting != simdPathName(path)) continue;
    const std::string lacks = missingFeatures(path, cpu);
    if (!lacks.empty()) {
      return makeError(ErrorCode::kConfigError,
                       "COHORT_SIMD={} forces the {} kernels, but this processor lacks {} (it "
                       "has: {}); unset it or choose one of the paths it runs",
                       setting, setting, lacks, cpu.describe());
    }
    *out = path;
    return Status::Ok();
  }
  return makeError(ErrorCode::kConfigError,
                   "COHORT_SIMD={}: expected one of auto, avx512bf16, avx512, avx2, scalar",
                   setting);
}

SimdPath activePath() { return active().path; }

Status simdStatus() { return active().status; }

bool pathSupported(SimdPath path) { return missingFeatures(path, active().cpu).empty(); }

}  // namespace cohort::kernels
