// The kernels of one SIMD path, as function pointers: what the dispatch (simd.cc,
// kernels.cc) chooses between. Private to kernels/.
#pragma once

#include <cstddef>

#include "cohort/communicator.h"
#include "kernels/reduce.h"

namespace cohort::kernels::detail {

/// The ops with a kernel of their own: sum, prod, max, min (avg reduces as sum).
constexpr int kKernelOps = 4;

using AverageFn = void (*)(void* data, std::size_t count, int n);
using ToFloatFn = void (*)(const void* src, float* dst, std::size_t count);
using FromFloatFn = void (*)(const float* src, void* dst, std::size_t count);
using CopyFn = void (*)(void* dst, const void* src, std::size_t bytes);

/// One path's kernels; index 0 of the 16-bit conversions is fp16, 1 is bf16. Built once,
/// immutable after (thread-safe), lives as long as the process.
struct KernelTable {
  Reduction reduce[kDataTypeCount][kKernelOps];
  AverageFn average[kDataTypeCount];  // null for the integer types
  ToFloatFn toFloat[2];
  FromFloatFn fromFloat[2];
  CopyFn streamCopy;
};

// One per path (path_scalar.cc, path_avx2.cc, path_avx512.cc, path_avx512_bf16.cc; the
// vector paths on
// x86-64 only). Building a table runs none of its instructions; calling them needs the
// path's features.
const KernelTable* scalarKernels();
const KernelTable* avx2Kernels();
const KernelTable* avx512Kernels();
const KernelTable* avx512Bf16Kernels();

}  // namespace cohort::kernels::detail
