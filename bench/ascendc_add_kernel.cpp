// The AscendC kernel of ascendc_bench: z = x + y, each block streaming its slice
// through the unified buffer in double-buffered tiles, as CANN's add samples do.
#include "kernel_operator.h"

using namespace AscendC;

namespace {
constexpr int32_t kBuffers = 2;
constexpr uint32_t kTile = 4096;  // floats: 3 queues x 2 buffers x 16 KiB of the UB
}  // namespace

extern "C" __global__ __aicore__ void bench_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint64_t perBlock) {
  TPipe pipe;
  TQue<QuePosition::VECIN, kBuffers> inX, inY;
  TQue<QuePosition::VECOUT, kBuffers> outZ;
  GlobalTensor<float> xg, yg, zg;
  const uint64_t start = perBlock * GetBlockIdx();
  xg.SetGlobalBuffer(reinterpret_cast<float*>(x) + start, perBlock);
  yg.SetGlobalBuffer(reinterpret_cast<float*>(y) + start, perBlock);
  zg.SetGlobalBuffer(reinterpret_cast<float*>(z) + start, perBlock);
  pipe.InitBuffer(inX, kBuffers, kTile * sizeof(float));
  pipe.InitBuffer(inY, kBuffers, kTile * sizeof(float));
  pipe.InitBuffer(outZ, kBuffers, kTile * sizeof(float));
  for (uint64_t done = 0; done < perBlock; done += kTile) {
    const uint32_t n = static_cast<uint32_t>(perBlock - done < kTile ? perBlock - done : kTile);
    LocalTensor<float> a = inX.AllocTensor<float>();
    LocalTensor<float> b = inY.AllocTensor<float>();
    DataCopy(a, xg[done], n);
    DataCopy(b, yg[done], n);
    inX.EnQue(a);
    inY.EnQue(b);
    a = inX.DeQue<float>();
    b = inY.DeQue<float>();
    LocalTensor<float> c = outZ.AllocTensor<float>();
    Add(c, a, b, static_cast<int32_t>(n));
    outZ.EnQue(c);
    inX.FreeTensor(a);
    inY.FreeTensor(b);
    c = outZ.DeQue<float>();
    DataCopy(zg[done], c, n);
    outZ.FreeTensor(c);
  }
}

uint32_t LaunchBenchAdd(uint32_t blockDim, void* stream, float* x, float* y, float* z,
                        uint64_t perBlock) {
  return bench_add<<<blockDim, nullptr, stream>>>(x, y, z, perBlock);
}
