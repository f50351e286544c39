// The element rules every kernel path follows, on scalars: the scalar path applies
// them to every element, the vector paths to integers and fp64 (compiled there with
// their target's instructions), and their fp32 vector code reproduces them bit for
// bit (tests/kernels compares every path with the scalar one).
#pragma once

#include <cstdint>
#include <type_traits>

#define COHORT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace cohort::kernels::ops {

// Integer sums and products wrap (two's complement), never undefined behaviour: they
// are computed unsigned, at least 32 bits wide so that uint16 * uint16 cannot
// overflow int.
template <typename T, bool = std::is_integral_v<T>>
struct WideOf {
  using type = T;
};
template <typename T>
struct WideOf<T, true> {
  using type = std::conditional_t<(sizeof(T) < 4), std::uint32_t, std::make_unsigned_t<T>>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

// A NaN result of a sum or product is a's NaN (quieted) when a is a NaN: x86 returns
// the first operand's NaN when both are NaNs, and a compiler may swap the operands of
// a + b, so the rule is spelled out to make the bits independent of the code generated.
template <typename T>
COHORT_ALWAYS_INLINE T sum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a != a ? a + a : a + b;
  } else {
    return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
  }
}

template <typename T>
COHORT_ALWAYS_INLINE T prod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a != a ? a + a : a * b;
  } else {
    return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
  }
}

// a when either is a NaN or both are zeros: MAXPS(b, a) and MINPS(b, a) exactly.
template <typename T>
COHORT_ALWAYS_INLINE T max(T a, T b) {
  return a < b ? b : a;
}

template <typename T>
COHORT_ALWAYS_INLINE T min(T a, T b) {
  return b < a ? b : a;
}

}  // namespace cohort::kernels::ops
