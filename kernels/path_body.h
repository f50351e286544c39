// The kernels of one SIMD path, written once for all paths. Each path's file
// (path_scalar.cc, path_avx2.cc, path_avx512.cc, path_avx512_bf16.cc) includes it once,
// after it defines:
//   COHORT_KERNEL  the function attribute that compiles a function for the path
//                  (__attribute__((target(...))), or nothing for the scalar path);
//   COHORT_PATH_TABLE  the name of the path's table function in kernels/table.h;
// and (the vector paths through kernels/x86_vector.h):
//   Vec            the path's fp32 vector: F, kLanes, add, mul, max, min, div, splat
//                  (following kernels/element_ops.h bit for bit), and streamStore
//                  (kStoreBytes bytes, non-temporal, to an aligned destination);
//   F32Format, HalfFormat, Bf16Format  load(const Elem*) -> Vec::F and
//                  store(Elem*, Vec::F) of kLanes elements, unaligned; and kPaired:
//                  whether the format has load2(const Elem*, F[2]) and
//                  store2(Elem*, const F[2]) of 2 * kLanes elements in an order of
//                  its own (store2 undoing load2), faster than two loads or stores.
// Everything here has internal linkage, so the paths' instances of the same templates
// stay apart (each is compiled for its own target). No include guard, on purpose.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/element_ops.h"
#include "kernels/table.h"
#include "kernels/tuning.h"

namespace cohort::kernels {
namespace {

using F = Vec::F;

// One op on elements (elem, the rules of element_ops.h) and on fp32 vectors (vec).
template <ReduceOp kOp>
struct OpOf {
  template <typename T>
  COHORT_ALWAYS_INLINE static T elem(T a, T b) {
    if constexpr (kOp == ReduceOp::kSum) return ops::sum(a, b);
    if constexpr (kOp == ReduceOp::kProd) return ops::prod(a, b);
    if constexpr (kOp == ReduceOp::kMax) return ops::max(a, b);
    if constexpr (kOp == ReduceOp::kMin) return ops::min(a, b);
  }
  COHORT_KERNEL static F vec(F a, F b) {
    if constexpr (kOp == ReduceOp::kSum) return Vec::add(a, b);
    if constexpr (kOp == ReduceOp::kProd) return Vec::mul(a, b);
    if constexpr (kOp == ReduceOp::kMax) return Vec::max(a, b);
    if constexpr (kOp == ReduceOp::kMin) return Vec::min(a, b);
  }
};

// Integers and fp64: the element rules in a plain loop, which the compiler vectorizes
// for the path's target (it checks at run time that dst is a, b or apart from both).
template <typename T, typename Op>
COHORT_KERNEL void reduceElements(void* dst, const void* a, const void* b, std::size_t bytes,
                                  const void*) {
  const std::size_t n = bytes / sizeof(T);
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) d[i] = Op::template elem<T>(x[i], y[i]);
}

template <typename T>
COHORT_KERNEL void averageElements(void* data, std::size_t count, int n) {
  T* d = static_cast<T*>(data);
  for (std::size_t i = 0; i < count; ++i) d[i] /= static_cast<T>(n);
}

// Two vectors (2 * kLanes elements) at p. kPaired: through the format's load2/store2,
// which may keep the elements in an order of their own (store2 undoes load2's): for
// maps whose input and output are the same format, where that is faster.
template <typename Fmt, bool kPaired>
COHORT_KERNEL void loadPair(const typename Fmt::Elem* p, F* v) {
  if constexpr (kPaired) {
    Fmt::load2(p, v);
  } else {
    v[0] = Fmt::load(p);
    v[1] = Fmt::load(p + Vec::kLanes);
  }
}

template <typename Fmt, bool kPaired>
COHORT_KERNEL void storePair(typename Fmt::Elem* p, const F* v) {
  if constexpr (kPaired) {
    Fmt::store2(p, v);
  } else {
    Fmt::store(p, v[0]);
    Fmt::store(p + Vec::kLanes, v[1]);
  }
}

// Two vectors of x (and of y, for a binary step) at i, mapped by `step` into r.
template <typename In, bool kPaired, typename Step>
COHORT_KERNEL void stepPair(const typename In::Elem* x, const typename In::Elem* y,
                            const Step& step, F* r) {
  F vx[2];
  loadPair<In, kPaired>(x, vx);
  F vy[2] = {vx[0], vx[1]};  // a unary step ignores them
  if constexpr (Step::kBinary) loadPair<In, kPaired>(y, vy);
  r[0] = step(vx[0], vy[0]);
  r[1] = step(vx[1], vy[1]);
}

// d[i] = step(x[i], y[i]) for [0, n), two vectors at a time; the last partial pair
// goes through buffers, so that every element takes the same instructions whatever
// its position. All loads of an iteration come before its stores: d may be x or y.
template <typename In, typename Out, typename Step>
COHORT_KERNEL void mapVectors(const typename In::Elem* x, const typename In::Elem* y,
                              typename Out::Elem* d, std::size_t n, const Step& step) {
  constexpr bool kPaired = std::is_same_v<In, Out> && In::kPaired;
  constexpr std::size_t kPair = 2 * Vec::kLanes;
  constexpr std::size_t kUnroll = tuning::kFloatUnroll;
  std::size_t i = 0;
  for (; i + kUnroll * kPair <= n; i += kUnroll * kPair) {
    F r[2 * kUnroll];
    for (std::size_t u = 0; u < kUnroll; ++u) {
      stepPair<In, kPaired>(x + i + u * kPair, y + i + u * kPair, step, &r[2 * u]);
    }
    for (std::size_t u = 0; u < kUnroll; ++u) storePair<Out, kPaired>(d + i + u * kPair, &r[2 * u]);
  }
  F r[2];
  for (; i + kPair <= n; i += kPair) {
    stepPair<In, kPaired>(x + i, y + i, step, r);
    storePair<Out, kPaired>(d + i, r);
  }
  if (i == n) return;
  typename In::Elem bx[kPair] = {}, by[kPair] = {};
  typename Out::Elem bd[kPair];
  std::memcpy(bx, x + i, (n - i) * sizeof(bx[0]));
  if constexpr (Step::kBinary) std::memcpy(by, y + i, (n - i) * sizeof(by[0]));
  stepPair<In, kPaired>(bx, by, step, r);
  storePair<Out, kPaired>(bd, r);
  std::memcpy(d + i, bd, (n - i) * sizeof(bd[0]));
}

template <typename Op>
struct ReduceStep {
  static constexpr bool kBinary = true;
  COHORT_KERNEL F operator()(F x, F y) const { return Op::vec(x, y); }
};

struct AverageStep {
  static constexpr bool kBinary = false;
  F divisor;
  COHORT_KERNEL F operator()(F x, F) const { return Vec::div(x, divisor); }
};

struct CopyStep {
  static constexpr bool kBinary = false;
  COHORT_KERNEL F operator()(F x, F) const { return x; }
};

// fp32, fp16 and bf16: in fp32 vectors, rounded back once.
template <typename Fmt, typename Op>
COHORT_KERNEL void reduceFloats(void* dst, const void* a, const void* b, std::size_t bytes,
                                const void*) {
  using E = typename Fmt::Elem;
  mapVectors<Fmt, Fmt>(static_cast<const E*>(a), static_cast<const E*>(b), static_cast<E*>(dst),
                       bytes / sizeof(E), ReduceStep<Op>{});
}

template <typename Fmt>
COHORT_KERNEL void averageFloats(void* data, std::size_t count, int n) {
  auto* d = static_cast<typename Fmt::Elem*>(data);
  mapVectors<Fmt, Fmt>(d, d, d, count, AverageStep{Vec::splat(static_cast<float>(n))});
}

template <typename Fmt>
COHORT_KERNEL void toFloatKernel(const void* src, float* dst, std::size_t count) {
  const auto* s = static_cast<const typename Fmt::Elem*>(src);
  mapVectors<Fmt, F32Format>(s, s, dst, count, CopyStep{});
}

template <typename Fmt>
COHORT_KERNEL void fromFloatKernel(const float* src, void* dst, std::size_t count) {
  mapVectors<F32Format, Fmt>(src, src, static_cast<typename Fmt::Elem*>(dst), count, CopyStep{});
}

COHORT_KERNEL void streamCopyKernel(void* to, const void* from, std::size_t bytes) {
  constexpr std::size_t kAlign = Vec::kStoreBytes;
  constexpr std::size_t kStep = tuning::kStreamCopyStep;
  static_assert(kStep % kAlign == 0, "a step is whole stores");
  auto* dst = static_cast<char*>(to);
  const auto* src = static_cast<const char*>(from);
  const std::size_t head =
      std::min(bytes, (kAlign - reinterpret_cast<std::uintptr_t>(dst) % kAlign) % kAlign);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  bytes -= head;
  const std::size_t body = bytes / kStep * kStep;
  for (std::size_t i = 0; i < body; i += kStep) {
    for (std::size_t k = 0; k < kStep; k += kAlign) Vec::streamStore(dst + i + k, src + i + k);
  }
  std::memcpy(dst + body, src + body, bytes - body);
}

template <ReduceOp kOp>
Reduction reductionOf(DataType t) {
  using Op = OpOf<kOp>;
  switch (t) {
    case DataType::kInt8:
      return {reduceElements<std::int8_t, Op>, nullptr, 1};
    case DataType::kUint8:
      return {reduceElements<std::uint8_t, Op>, nullptr, 1};
    case DataType::kInt16:
      return {reduceElements<std::int16_t, Op>, nullptr, 2};
    case DataType::kUint16:
      return {reduceElements<std::uint16_t, Op>, nullptr, 2};
    case DataType::kInt32:
      return {reduceElements<std::int32_t, Op>, nullptr, 4};
    case DataType::kUint32:
      return {reduceElements<std::uint32_t, Op>, nullptr, 4};
    case DataType::kInt64:
      return {reduceElements<std::int64_t, Op>, nullptr, 8};
    case DataType::kUint64:
      return {reduceElements<std::uint64_t, Op>, nullptr, 8};
    case DataType::kFloat16:
      return {reduceFloats<HalfFormat, Op>, nullptr, 2};
    case DataType::kBFloat16:
      return {reduceFloats<Bf16Format, Op>, nullptr, 2};
    case DataType::kFloat32:
      return {reduceFloats<F32Format, Op>, nullptr, 4};
    case DataType::kFloat64:
      return {reduceElements<double, Op>, nullptr, 8};
  }
  return {nullptr, nullptr, 0};
}

detail::KernelTable makeTable() {
  detail::KernelTable k{};
  for (int t = 0; t < kDataTypeCount; ++t) {
    const auto type = static_cast<DataType>(t);
    k.reduce[t][static_cast<int>(ReduceOp::kSum)] = reductionOf<ReduceOp::kSum>(type);
    k.reduce[t][static_cast<int>(ReduceOp::kProd)] = reductionOf<ReduceOp::kProd>(type);
    k.reduce[t][static_cast<int>(ReduceOp::kMax)] = reductionOf<ReduceOp::kMax>(type);
    k.reduce[t][static_cast<int>(ReduceOp::kMin)] = reductionOf<ReduceOp::kMin>(type);
  }
  k.average[static_cast<int>(DataType::kFloat16)] = averageFloats<HalfFormat>;
  k.average[static_cast<int>(DataType::kBFloat16)] = averageFloats<Bf16Format>;
  k.average[static_cast<int>(DataType::kFloat32)] = averageFloats<F32Format>;
  k.average[static_cast<int>(DataType::kFloat64)] = averageElements<double>;
  k.toFloat[0] = toFloatKernel<HalfFormat>;
  k.toFloat[1] = toFloatKernel<Bf16Format>;
  k.fromFloat[0] = fromFloatKernel<HalfFormat>;
  k.fromFloat[1] = fromFloatKernel<Bf16Format>;
  k.streamCopy = streamCopyKernel;
  return k;
}

}  // namespace

namespace detail {

const KernelTable* COHORT_PATH_TABLE() {
  static const KernelTable table = makeTable();
  return &table;
}

}  // namespace detail
}  // namespace cohort::kernels
