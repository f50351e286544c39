// Independent expectations for collective tests: input values chosen so that any
// order of reduction gives the same exact result (small integers; products of
// ones and twos), encoded per type without the library's code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cohort/communicator.h"

namespace cohort::testing {

/// The input value of rank r at element i for a test of `op`.
inline double inputValue(ReduceOp op, int r, std::size_t i) {
  if (op == ReduceOp::kProd) return ((static_cast<std::size_t>(r) + i) % 3 == 0) ? 2.0 : 1.0;
  return static_cast<double>((static_cast<std::size_t>(r) * 3 + i) % 7 + 1);
}

/// The reduction over ranks 0..n-1 of inputValue(op, r, i) as the type sees it
/// (integer products wrap modulo the type's width; avg is returned as sum / n).
double expectedReduce(ReduceOp op, int n, std::size_t i);

/// Writes v (exactly representable, or wrapped for integers) as `type` at dst.
void encode(DataType type, double v, void* dst);
/// Reads element `i` of `type` as a double.
double decode(DataType type, const void* src, std::size_t i);
/// The bytes of v as `type`, for bit-exact comparison.
std::vector<std::uint8_t> bytesOf(DataType type, double v);

/// Compares `count` elements of `type` at `actual` with expected(i); returns ""
/// or a description of the first wrong elements. With `tolerance` > 0 values are
/// compared relatively (avg); otherwise bit for bit.
template <typename F>
std::string compare(DataType type, const void* actual, std::size_t count, F expected,
                    double tolerance = 0) {
  const std::size_t e = dataTypeSize(type);
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t i = 0; i < count; ++i) {
    const double want = expected(i);
    bool ok;
    if (tolerance > 0) {
      const double got = decode(type, actual, i);
      ok = std::abs(got - want) <= tolerance * std::max(1.0, std::abs(want));
    } else {
      ok = std::memcmp(static_cast<const char*>(actual) + i * e, bytesOf(type, want).data(), e) == 0;
    }
    if (!ok && wrong++ == 0) {
      first = "element " + std::to_string(i) + " is " + std::to_string(decode(type, actual, i)) +
              ", expected " + std::to_string(want);
    }
  }
  return wrong == 0 ? "" : std::to_string(wrong) + " wrong elements; first: " + first;
}

}  // namespace cohort::testing
