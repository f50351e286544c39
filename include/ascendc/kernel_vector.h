// AscendC on the CPU, part 4: the element-wise, scalar, unary, conversion and
// reduction operations on local tensors, and printf.
#ifndef COHORT_ASCENDC_KERNEL_VECTOR_H_
#define COHORT_ASCENDC_KERNEL_VECTOR_H_

#include "kernel_tensor.h"

namespace AscendC {

// ---- Vector computation (count-based) ------------------------------------------------
namespace cohort_detail {
template <typename T, typename F>
inline void binary(const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& a,
                   const LocalTensor<T>& b, int32_t count, F f) {
  if (count < 0) trap("%s: count %d is negative", call, count);
  checkLocal(call, "dst", count, dst);
  checkLocal(call, "src0", count, a);
  checkLocal(call, "src1", count, b);
  T* d = dst.GetPhyAddr();
  const T* x = a.GetPhyAddr();
  const T* y = b.GetPhyAddr();
  for (int32_t i = 0; i < count; ++i) {
    d[i] = static_cast<T>(f(static_cast<CalcT<T>>(x[i]), static_cast<CalcT<T>>(y[i])));
  }
}
template <typename T, typename F>
inline void unary(const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& a,
                  int32_t count, F f) {
  if (count < 0) trap("%s: count %d is negative", call, count);
  checkLocal(call, "dst", count, dst);
  checkLocal(call, "src", count, a);
  T* d = dst.GetPhyAddr();
  const T* x = a.GetPhyAddr();
  for (int32_t i = 0; i < count; ++i) d[i] = static_cast<T>(f(static_cast<CalcT<T>>(x[i])));
}
}  // namespace cohort_detail

#define COHORT_ASCENDC_BINARY(Name, expr)                                                  \
  template <typename T>                                                                   \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0,      \
                              const LocalTensor<T>& src1, const int32_t& count) {         \
    cohort_detail::binary(#Name, dst, src0, src1, count, [](auto a, auto b) { return expr; }); \
  }
COHORT_ASCENDC_BINARY(Add, a + b)
COHORT_ASCENDC_BINARY(Sub, a - b)
COHORT_ASCENDC_BINARY(Mul, a * b)
COHORT_ASCENDC_BINARY(Div, a / b)
COHORT_ASCENDC_BINARY(Max, a > b ? a : b)
COHORT_ASCENDC_BINARY(Min, a < b ? a : b)
#undef COHORT_ASCENDC_BINARY

#define COHORT_ASCENDC_SCALAR(Name, expr)                                                     \
  template <typename T, typename U>                                                          \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src,          \
                              const U& scalarValue, const int32_t& count) {                  \
    const auto s = static_cast<cohort_detail::CalcT<T>>(static_cast<T>(scalarValue));        \
    cohort_detail::unary(#Name, dst, src, count, [s](auto a) { return expr; });              \
  }
COHORT_ASCENDC_SCALAR(Adds, a + s)
COHORT_ASCENDC_SCALAR(Muls, a * s)
COHORT_ASCENDC_SCALAR(Maxs, a > s ? a : s)
COHORT_ASCENDC_SCALAR(Mins, a < s ? a : s)
#undef COHORT_ASCENDC_SCALAR

#define COHORT_ASCENDC_UNARY(Name, expr)                                                    \
  template <typename T>                                                                    \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src,        \
                              const int32_t& count) {                                      \
    cohort_detail::unary(#Name, dst, src, count, [](auto a) { return expr; });             \
  }
COHORT_ASCENDC_UNARY(Abs, a < 0 ? -a : a)
COHORT_ASCENDC_UNARY(Exp, std::exp(a))
COHORT_ASCENDC_UNARY(Ln, std::log(a))
COHORT_ASCENDC_UNARY(Sqrt, std::sqrt(a))
COHORT_ASCENDC_UNARY(Relu, a > 0 ? a : decltype(a)(0))
COHORT_ASCENDC_UNARY(Reciprocal, decltype(a)(1) / a)
#undef COHORT_ASCENDC_UNARY

/// Every element of dst set to `value`.
template <typename T, typename U>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const U& value, const int32_t& count) {
  if (count < 0) cohort_detail::trap("Duplicate: count %d is negative", count);
  cohort_detail::checkLocal("Duplicate", "dst", count, dst);
  const T v = static_cast<T>(value);
  std::fill_n(dst.GetPhyAddr(), count, v);
}

enum class RoundMode : uint8_t {
  CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD
};

/// Converts each element, rounding as `mode` says when the destination is coarser.
template <typename D, typename S>
__aicore__ inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src,
                            const RoundMode& mode, const uint32_t& count) {
  cohort_detail::checkLocal("Cast", "dst", count, dst);
  cohort_detail::checkLocal("Cast", "src", count, src);
  D* d = dst.GetPhyAddr();
  const S* s = src.GetPhyAddr();
  for (uint32_t i = 0; i < count; ++i) {
    const double v = static_cast<double>(static_cast<cohort_detail::CalcT<S>>(s[i]));
    double r = v;
    if (std::is_integral<D>::value) {
      switch (mode) {
        case RoundMode::CAST_FLOOR: r = std::floor(v); break;
        case RoundMode::CAST_CEIL: r = std::ceil(v); break;
        case RoundMode::CAST_ROUND: r = std::round(v); break;
        case RoundMode::CAST_TRUNC: r = std::trunc(v); break;
        default: r = std::nearbyint(v); break;
      }
    }
    d[i] = static_cast<D>(static_cast<cohort_detail::CalcT<D>>(r));
  }
}

/// dst[0] = the sum of src's first `count` elements (work is scratch space).
template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& work, const int32_t count) {
  (void)work;
  cohort_detail::checkLocal("ReduceSum", "src", count, src);
  cohort_detail::checkLocal("ReduceSum", "dst", 1, dst);
  cohort_detail::CalcT<T> sum = 0;
  for (int32_t i = 0; i < count; ++i) sum += static_cast<cohort_detail::CalcT<T>>(src.GetPhyAddr()[i]);
  dst.GetPhyAddr()[0] = static_cast<T>(sum);
}
/// dst[0] = the largest of src's first `count` elements; with calIndex, dst[1] holds
/// its index (the bits of a uint32_t, as the device writes it).
template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& work, const int32_t count,
                                 bool calIndex = false) {
  (void)work;
  if (count <= 0) cohort_detail::trap("ReduceMax: count %d is not positive", count);
  cohort_detail::checkLocal("ReduceMax", "src", count, src);
  cohort_detail::checkLocal("ReduceMax", "dst", calIndex ? 2 : 1, dst);
  const T* s = src.GetPhyAddr();
  int32_t best = 0;
  for (int32_t i = 1; i < count; ++i) {
    if (static_cast<cohort_detail::CalcT<T>>(s[i]) > static_cast<cohort_detail::CalcT<T>>(s[best])) best = i;
  }
  dst.GetPhyAddr()[0] = s[best];
  if (calIndex) {
    const uint32_t index = static_cast<uint32_t>(best);
    std::memcpy(dst.GetPhyAddr() + 1, &index, std::min(sizeof(T), sizeof(index)));
  }
}

// ---- Printing ------------------------------------------------------------------------
/// printf from a kernel: one whole line per call on the host's stdout.
__aicore__ inline void printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
__aicore__ inline void printf(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n > 0) {
    std::fwrite(line, 1, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1), stdout);
    std::fflush(stdout);
  }
}
#define PRINTF AscendC::printf

}  // namespace AscendC

#endif  // COHORT_ASCENDC_KERNEL_VECTOR_H_
