// AscendC kernels for the emulated-device tests, written against Cohort's
// kernel_operator.h and built by ascendc.cmake's ascendc_library, as a CANN
// sample's kernels are.
#include "kernel_operator.h"
#include "test_kernels.h"

using namespace AscendC;

namespace {

constexpr int32_t kBuffers = 2;

template <typename T>
class TiledAdd {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock, uint32_t tile) {
    const uint64_t start = static_cast<uint64_t>(perBlock) * GetBlockIdx();
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x) + start, perBlock);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y) + start, perBlock);
    zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z) + start, perBlock);
    perBlock_ = perBlock;
    tile_ = tile;
    pipe_.InitBuffer(inX_, kBuffers, tile * sizeof(T));
    pipe_.InitBuffer(inY_, kBuffers, tile * sizeof(T));
    pipe_.InitBuffer(outZ_, kBuffers, tile * sizeof(T));
  }
  __aicore__ inline void Process() {
    for (uint32_t done = 0; done < perBlock_; done += tile_) {
      const uint32_t n = perBlock_ - done < tile_ ? perBlock_ - done : tile_;
      LocalTensor<T> x = inX_.AllocTensor<T>();
      LocalTensor<T> y = inY_.AllocTensor<T>();
      DataCopy(x, xGm_[done], n);
      DataCopy(y, yGm_[done], n);
      inX_.EnQue(x);
      inY_.EnQue(y);
      LocalTensor<T> xs = inX_.DeQue<T>();
      LocalTensor<T> ys = inY_.DeQue<T>();
      LocalTensor<T> z = outZ_.AllocTensor<T>();
      Add(z, xs, ys, n);
      outZ_.EnQue<T>(z);
      inX_.FreeTensor(xs);
      inY_.FreeTensor(ys);
      LocalTensor<T> zs = outZ_.DeQue<T>();
      DataCopy(zGm_[done], zs, n);
      outZ_.FreeTensor(zs);
    }
  }

 private:
  TPipe pipe_;
  TQue<QuePosition::VECIN, kBuffers> inX_, inY_;
  TQue<QuePosition::VECOUT, kBuffers> outZ_;
  GlobalTensor<T> xGm_, yGm_, zGm_;
  uint32_t perBlock_ = 0;
  uint32_t tile_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void add_float(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock,
                                                uint32_t tile) {
  TiledAdd<float> op;
  op.Init(x, y, z, perBlock, tile);
  op.Process();
}

extern "C" __global__ __aicore__ void add_half(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock,
                                               uint32_t tile) {
  TiledAdd<half> op;
  op.Init(x, y, z, perBlock, tile);
  op.Process();
}

extern "C" __global__ __aicore__ void vector_ops(__gm__ float* x, __gm__ float* y, __gm__ float* out,
                                                 uint32_t perBlock) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, perBlock * sizeof(float) * 3);
  LocalTensor<float> all = buf.Get<float>();
  LocalTensor<float> a = all;
  LocalTensor<float> b = all[perBlock];
  LocalTensor<float> r = all[2 * perBlock];
  GlobalTensor<float> xg, yg;
  const uint64_t start = static_cast<uint64_t>(perBlock) * GetBlockIdx();
  xg.SetGlobalBuffer(x + start, perBlock);
  yg.SetGlobalBuffer(y + start, perBlock);
  DataCopy(a, xg, perBlock);
  DataCopy(b, yg, perBlock);
  const uint64_t total = static_cast<uint64_t>(perBlock) * GetBlockNum();
  int k = 0;
  auto store = [&](const LocalTensor<float>& t) {
    GlobalTensor<float> og;
    og.SetGlobalBuffer(out + k * total + start, perBlock);
    DataCopy(og, t, perBlock);
    ++k;
  };
  const int32_t n = static_cast<int32_t>(perBlock);
  Add(r, a, b, n); store(r);
  Sub(r, a, b, n); store(r);
  Mul(r, a, b, n); store(r);
  Div(r, a, b, n); store(r);
  Max(r, a, b, n); store(r);
  Min(r, a, b, n); store(r);
  Adds(r, a, 1.5f, n); store(r);
  Muls(r, a, -2.0f, n); store(r);
  Maxs(r, a, 0.25f, n); store(r);
  Mins(r, a, 0.25f, n); store(r);
  Abs(r, a, n); store(r);
  Exp(r, a, n); store(r);
  Ln(r, b, n); store(r);
  Sqrt(r, b, n); store(r);
  Relu(r, a, n); store(r);
  Duplicate(r, 7.0f, n); store(r);
  PipeBarrier<PIPE_ALL>();
}

extern "C" __global__ __aicore__ void reduce(__gm__ float* x, __gm__ float* sums, __gm__ float* maxes,
                                             __gm__ uint32_t* indexes, uint32_t perBlock) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> in;
  TBuf<> work;
  TBuf<> result;
  pipe.InitBuffer(in, 1, perBlock * sizeof(float));
  pipe.InitBuffer(work, perBlock * sizeof(float));
  pipe.InitBuffer(result, 32);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer(x + static_cast<uint64_t>(perBlock) * GetBlockIdx(), perBlock);
  LocalTensor<float> t = in.AllocTensor<float>();
  DataCopy(t, xg, perBlock);
  in.EnQue(t);
  LocalTensor<float> v = in.DeQue<float>();
  LocalTensor<float> w = work.Get<float>();
  LocalTensor<float> res = result.Get<float>();
  ReduceSum(res, v, w, static_cast<int32_t>(perBlock));
  sums[GetBlockIdx()] = res.GetValue(0);
  ReduceMax(res, v, w, static_cast<int32_t>(perBlock), true);
  maxes[GetBlockIdx()] = res.GetValue(0);
  indexes[GetBlockIdx()] = res.ReinterpretCast<uint32_t>().GetValue(1);
  in.FreeTensor(v);
}

extern "C" __global__ __aicore__ void block_ids(__gm__ int32_t* out) {
  int32_t idx = block_idx;
  out[idx] = idx * 1000 + static_cast<int32_t>(GetBlockNum());
}

extern "C" __global__ __aicore__ void concurrency(__gm__ int32_t* running, __gm__ int32_t* peak) {
  const int32_t now = __atomic_add_fetch(running, 1, __ATOMIC_SEQ_CST);
  int32_t seen = __atomic_load_n(peak, __ATOMIC_SEQ_CST);
  while (now > seen && !__atomic_compare_exchange_n(peak, &seen, now, false, __ATOMIC_SEQ_CST,
                                                     __ATOMIC_SEQ_CST)) {
  }
  // Long enough that blocks that can overlap do.
  volatile uint64_t spin = 0;
  for (uint64_t i = 0; i < 3000000; ++i) spin = spin + i;
  __atomic_sub_fetch(running, 1, __ATOMIC_SEQ_CST);
}

extern "C" __global__ __aicore__ void trapping(uint32_t which, __gm__ int32_t* done, uint32_t viaAsm) {
  if (static_cast<uint32_t>(GetBlockIdx()) == which) {
    if (viaAsm != 0) {
      asm("trap");
    } else {
      trap();
    }
  }
  __atomic_add_fetch(done, 1, __ATOMIC_SEQ_CST);
}

extern "C" __global__ __aicore__ void faulting(uint32_t which, __gm__ int32_t* bad,
                                                __gm__ int32_t* done) {
  if (static_cast<uint32_t>(GetBlockIdx()) == which) {
    *reinterpret_cast<volatile int32_t*>(bad) = 1;
  } else {
    __atomic_add_fetch(done, 1, __ATOMIC_SEQ_CST);
  }
}

extern "C" __global__ __aicore__ void ub_hungry(uint32_t bytes) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, bytes);
  LocalTensor<uint8_t> t = q.AllocTensor<uint8_t>();
  t.SetValue(bytes - 1, 1);
  q.FreeTensor(t);
}

extern "C" __global__ __aicore__ void misuse(__gm__ float* x, uint32_t mode) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 256);
  if (mode == 0) {
    LocalTensor<float> t = q.DeQue<float>();
    (void)t;
  } else {
    GlobalTensor<float> xg;
    xg.SetGlobalBuffer(x, 1024);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, xg, 65);  // the tensor holds 64 floats
  }
}

extern "C" __global__ __aicore__ void print_blocks() {
  AscendC::printf("block %d of %d\n", static_cast<int>(GetBlockIdx()),
                  static_cast<int>(GetBlockNum()));
}

extern "C" __global__ __aicore__ void pad_cast(__gm__ float* x, __gm__ int32_t* out, uint32_t length,
                                               float scale) {
  TPipe pipe;
  TBuf<> inBuf, outBuf;
  const uint32_t padded = (length + 7) / 8 * 8;
  pipe.InitBuffer(inBuf, padded * sizeof(float));
  pipe.InitBuffer(outBuf, padded * sizeof(int32_t));
  GlobalTensor<float> xg;
  GlobalTensor<int32_t> og;
  xg.SetGlobalBuffer(x, length);
  og.SetGlobalBuffer(out, length);
  LocalTensor<float> v = inBuf.Get<float>();
  LocalTensor<int32_t> o = outBuf.Get<int32_t>();
  Duplicate(v, -1.0f, static_cast<int32_t>(padded));
  DataCopyExtParams copy(1, length * sizeof(float), 0, 0);
  DataCopyPadExtParams<float> pad(true, 0, static_cast<uint8_t>(padded - length), 0.0f);
  DataCopyPad(v, xg, copy, pad);
  Muls(v, v, scale, static_cast<int32_t>(padded));
  Cast(o, v, RoundMode::CAST_TRUNC, padded);
  DataCopyPad(og, o, DataCopyExtParams(1, length * sizeof(int32_t), 0, 0));
}

uint32_t LaunchAddFloat(uint32_t blockDim, void* stream, float* x, float* y, float* z,
                        uint32_t perBlock, uint32_t tile) {
  return add_float<<<blockDim, nullptr, stream>>>(x, y, z, perBlock, tile);
}
uint32_t LaunchAddHalf(uint32_t blockDim, void* stream, void* x, void* y, void* z,
                       uint32_t perBlock, uint32_t tile) {
  return add_half<<<blockDim, nullptr, stream>>>(x, y, z, perBlock, tile);
}
uint32_t LaunchVectorOps(uint32_t blockDim, void* stream, float* x, float* y, float* out,
                         uint32_t perBlock) {
  return vector_ops<<<blockDim, nullptr, stream>>>(x, y, out, perBlock);
}
uint32_t LaunchReduce(uint32_t blockDim, void* stream, float* x, float* sums, float* maxes,
                      uint32_t* indexes, uint32_t perBlock) {
  return reduce<<<blockDim, nullptr, stream>>>(x, sums, maxes, indexes, perBlock);
}
uint32_t LaunchBlockIds(uint32_t blockDim, void* stream, int32_t* out) {
  return block_ids<<<blockDim, nullptr, stream>>>(out);
}
uint32_t LaunchConcurrency(uint32_t blockDim, void* stream, int32_t* running, int32_t* peak) {
  return concurrency<<<blockDim, nullptr, stream>>>(running, peak);
}
uint32_t LaunchTrap(uint32_t blockDim, void* stream, uint32_t which, int32_t* done, bool viaAsm) {
  return trapping<<<blockDim, nullptr, stream>>>(which, done, viaAsm ? 1u : 0u);
}
uint32_t LaunchFault(uint32_t blockDim, void* stream, uint32_t which, int32_t* bad, int32_t* done) {
  return faulting<<<blockDim, nullptr, stream>>>(which, bad, done);
}
uint32_t LaunchUbHungry(uint32_t blockDim, void* stream, uint32_t bytes) {
  return ub_hungry<<<blockDim, nullptr, stream>>>(bytes);
}
uint32_t LaunchMisuse(uint32_t blockDim, void* stream, float* x, uint32_t mode) {
  return misuse<<<blockDim, nullptr, stream>>>(x, mode);
}
uint32_t LaunchPrint(uint32_t blockDim, void* stream) {
  return print_blocks<<<blockDim, nullptr, stream>>>();
}
uint32_t LaunchPadCast(uint32_t blockDim, void* stream, float* x, int32_t* out, uint32_t length,
                       float scale) {
  return pad_cast<<<blockDim, nullptr, stream>>>(x, out, length, scale);
}
