// Element-wise reductions dst = a (op) b for every type and op. Integers wrap (two's
// complement); fp16 and bf16 are computed in fp32 and rounded to nearest even once per
// call, so a reduction of n inputs rounds n - 1 times whatever the path or algorithm.
//
// Special values follow the scalar rules of every path (kernels/element_ops.h):
// sum and prod are IEEE, and a NaN result is a's NaN (quieted) when a is a NaN, else
// b's, else the processor's default NaN; max is `a < b ? b : a` and min `b < a ? b : a`,
// so either returns a (unchanged, even a signalling NaN) when a or b is a NaN, and a
// when both are zeros of either sign.
#pragma once

#include <cstddef>

#include "cohort/communicator.h"
#include "kernels/simd.h"

namespace cohort::kernels {

/// dst[i] = a[i] (op) b[i] for `bytes` bytes (a multiple of elementSize). A
/// transport calls it on chunks as they arrive. dst may be a or b, element for
/// element, but must not overlap them otherwise. A plain value; the kernels it
/// points to are thread-safe and live as long as the process.
struct Reduction {
  void (*fn)(void* dst, const void* a, const void* b, std::size_t bytes, const void* context);
  const void* context;
  std::size_t elementSize;
};

/// The kernel for `type` and `op` on `path` (which the processor must run:
/// pathSupported). kAvg reduces as kSum; the caller divides at the end with
/// finishAverage. Valid type and op only.
const Reduction& reductionFor(DataType type, ReduceOp op, SimdPath path = activePath());

/// data[i] /= n for the float types (avg), rounding fp16 and bf16 once; integer
/// types are left as they are.
void finishAverage(void* data, std::size_t count, DataType type, int n,
                   SimdPath path = activePath());

}  // namespace cohort::kernels
