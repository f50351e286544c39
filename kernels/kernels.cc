// The entry points: each looks its kernel up in the table of the path asked for.
#include <cstring>

#include "common/error.h"
#include "kernels/convert.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"
#include "kernels/table.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cohort::kernels {

namespace {

const detail::KernelTable& tableFor(SimdPath path) {
  const detail::KernelTable* t = nullptr;
  switch (path) {
    case SimdPath::kScalar:
      t = detail::scalarKernels();
      break;
#if defined(__x86_64__)
    case SimdPath::kAvx2:
      t = detail::avx2Kernels();
      break;
    case SimdPath::kAvx512:
      t = detail::avx512Kernels();
      break;
    case SimdPath::kAvx512Bf16:
      t = detail::avx512Bf16Kernels();
      break;
#else
    default:
      break;
#endif
  }
  COHORT_CHECK(t != nullptr);  // a path this architecture does not build
  return *t;
}

// The index of a 16-bit float type in the conversion tables.
int halfIndex(DataType type) {
  COHORT_CHECK(type == DataType::kFloat16 || type == DataType::kBFloat16);
  return type == DataType::kFloat16 ? 0 : 1;
}

}  // namespace

const Reduction& reductionFor(DataType type, ReduceOp op, SimdPath path) {
  const int t = static_cast<int>(type);
  const int o = op == ReduceOp::kAvg ? static_cast<int>(ReduceOp::kSum) : static_cast<int>(op);
  COHORT_CHECK(t >= 0 && t < kDataTypeCount && o >= 0 && o < detail::kKernelOps);
  return tableFor(path).reduce[t][o];
}

void finishAverage(void* data, std::size_t count, DataType type, int n, SimdPath path) {
  const int t = static_cast<int>(type);
  COHORT_CHECK(t >= 0 && t < kDataTypeCount);
  const detail::AverageFn fn = tableFor(path).average[t];
  if (fn != nullptr && count > 0) fn(data, count, n);
}

void toFloat(const void* src, DataType srcType, float* dst, std::size_t count, SimdPath path) {
  tableFor(path).toFloat[halfIndex(srcType)](src, dst, count);
}

void fromFloat(const float* src, void* dst, DataType dstType, std::size_t count, SimdPath path) {
  tableFor(path).fromFloat[halfIndex(dstType)](src, dst, count);
}

void streamCopy(void* dst, const void* src, std::size_t bytes, SimdPath path) {
  tableFor(path).streamCopy(dst, src, bytes);
}

void streamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace cohort::kernels
