// Kernels of a fatbin module (ascendc_fatbin_library): loaded at run time with
// aclrtBinaryLoadFromFile and launched by name with an argument list.
#include "kernel_operator.h"

// y[i] = alpha * x[i] + y[i] over the block's slice of *length elements (a
// placeholder parameter: the host fills its buffer, the kernel gets a pointer).
extern "C" __global__ __aicore__ void axpy(__gm__ float* x, __gm__ float* y,
                                           __gm__ uint32_t* length, float alpha) {
  const uint32_t n = *length;
  const uint32_t per = n / static_cast<uint32_t>(AscendC::GetBlockNum());
  const uint32_t start = per * static_cast<uint32_t>(AscendC::GetBlockIdx());
  const uint32_t end = AscendC::GetBlockIdx() + 1 == AscendC::GetBlockNum() ? n : start + per;
  for (uint32_t i = start; i < end; ++i) y[i] = alpha * x[i] + y[i];
}

// out[block] = a + b, for the packed-argument launch (aclrtLaunchKernel).
extern "C" __global__ __aicore__ void sum_pair(__gm__ int64_t* out, int32_t a, int64_t b) {
  out[AscendC::GetBlockIdx()] = a + b;
}
