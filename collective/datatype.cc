#include "collective/datatype.h"

#include <cmath>
#include <cstring>

namespace cohort {

std::size_t dataTypeSize(DataType type) {
  static const std::size_t kSizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};
  const int i = static_cast<int>(type);
  return i >= 0 && i < kDataTypeCount ? kSizes[i] : 0;
}

const char* dataTypeName(DataType type) {
  static const char* kNames[] = {"int8",   "uint8",  "int16",   "uint16", "int32", "uint32",
                                 "int64",  "uint64", "float16", "bfloat16", "float", "double"};
  const int i = static_cast<int>(type);
  return i >= 0 && i < kDataTypeCount ? kNames[i] : "unknown";
}

const char* reduceOpName(ReduceOp op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < kReduceOpCount ? kNames[i] : "unknown";
}

namespace collective {

bool validType(DataType type) {
  return static_cast<int>(type) >= 0 && static_cast<int>(type) < kDataTypeCount;
}
bool validOp(ReduceOp op) { return static_cast<int>(op) >= 0 && static_cast<int>(op) < kReduceOpCount; }
bool isFloat(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat32 ||
         t == DataType::kFloat64;
}

float halfToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f;
  std::uint32_t mant = h & 0x3ff;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while ((mant & 0x400) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t floatToHalf(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) {  // inf or nan
    return static_cast<std::uint16_t>(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
  }
  if (absx >= 0x477ff000) return static_cast<std::uint16_t>(sign | 0x7c00);  // overflow
  if (absx < 0x38800000) {  // subnormal or zero in half
    if (absx < 0x33000000) return sign;  // rounds to zero
    const std::uint32_t mant = (absx & 0x7fffff) | 0x800000;
    const int shift = 126 - static_cast<int>(absx >> 23);  // 14..24
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = ((absx >> 13) - (112u << 10));
  const std::uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float bf16ToFloat(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t floatToBf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<std::uint16_t>((x >> 16) | 0x40);  // nan
  const std::uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

namespace {

struct Sum { template <typename T> static T apply(T a, T b) { return a + b; } };
struct Prod { template <typename T> static T apply(T a, T b) { return a * b; } };
struct Max { template <typename T> static T apply(T a, T b) { return a < b ? b : a; } };
struct Min { template <typename T> static T apply(T a, T b) { return b < a ? b : a; } };

// Integer arithmetic wraps (as two's complement), never undefined behaviour.
template <typename T, bool = std::is_integral_v<T>>
struct WideOf {
  using type = T;
};
template <typename T>
struct WideOf<T, true> {  // at least 32 bits, so uint16 * uint16 cannot overflow int
  using type = std::conditional_t<(sizeof(T) < 4), std::uint32_t, std::make_unsigned_t<T>>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

// AVX2 and baseline versions chosen at load time (an ifunc). Sanitizer runtimes
// cannot resolve ifuncs that early, so sanitized builds keep one version.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define COHORT_KERNEL_CLONES
#else
#define COHORT_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#endif

template <typename T, typename Op>
COHORT_KERNEL_CLONES void kernel(
    void* dst, const void* a, const void* b, std::size_t bytes, const void*) {
  const std::size_t n = bytes / sizeof(T);
  T* __restrict d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* __restrict y = static_cast<const T*>(b);
  if constexpr (std::is_same_v<Op, Sum> || std::is_same_v<Op, Prod>) {
    using W = Wide<T>;
    for (std::size_t i = 0; i < n; ++i) {
      d[i] = static_cast<T>(Op::apply(static_cast<W>(x[i]), static_cast<W>(y[i])));
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) d[i] = Op::apply(x[i], y[i]);
  }
}

template <float (*ToF)(std::uint16_t), std::uint16_t (*FromF)(float), typename Op>
void halfKernel(void* dst, const void* a, const void* b, std::size_t bytes, const void*) {
  const std::size_t n = bytes / 2;
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  for (std::size_t i = 0; i < n; ++i) d[i] = FromF(Op::apply(ToF(x[i]), ToF(y[i])));
}

template <typename Op>
transport::Reduction make(DataType t) {
  switch (t) {
    case DataType::kInt8: return {kernel<std::int8_t, Op>, nullptr, 1};
    case DataType::kUint8: return {kernel<std::uint8_t, Op>, nullptr, 1};
    case DataType::kInt16: return {kernel<std::int16_t, Op>, nullptr, 2};
    case DataType::kUint16: return {kernel<std::uint16_t, Op>, nullptr, 2};
    case DataType::kInt32: return {kernel<std::int32_t, Op>, nullptr, 4};
    case DataType::kUint32: return {kernel<std::uint32_t, Op>, nullptr, 4};
    case DataType::kInt64: return {kernel<std::int64_t, Op>, nullptr, 8};
    case DataType::kUint64: return {kernel<std::uint64_t, Op>, nullptr, 8};
    case DataType::kFloat16: return {halfKernel<halfToFloat, floatToHalf, Op>, nullptr, 2};
    case DataType::kBFloat16: return {halfKernel<bf16ToFloat, floatToBf16, Op>, nullptr, 2};
    case DataType::kFloat32: return {kernel<float, Op>, nullptr, 4};
    case DataType::kFloat64: return {kernel<double, Op>, nullptr, 8};
  }
  return {nullptr, nullptr, 0};
}

struct Table {
  transport::Reduction r[kDataTypeCount][4];
  Table() {
    for (int t = 0; t < kDataTypeCount; ++t) {
      const auto type = static_cast<DataType>(t);
      r[t][0] = make<Sum>(type);
      r[t][1] = make<Prod>(type);
      r[t][2] = make<Max>(type);
      r[t][3] = make<Min>(type);
    }
  }
};

}  // namespace

const transport::Reduction& reductionFor(DataType type, ReduceOp op) {
  static const Table table;
  const int o = op == ReduceOp::kAvg ? 0 : static_cast<int>(op);
  return table.r[static_cast<int>(type)][o];
}

void finishAverage(void* data, std::size_t count, DataType type, int n) {
  switch (type) {
    case DataType::kFloat32: {
      auto* d = static_cast<float*>(data);
      for (std::size_t i = 0; i < count; ++i) d[i] /= static_cast<float>(n);
      break;
    }
    case DataType::kFloat64: {
      auto* d = static_cast<double*>(data);
      for (std::size_t i = 0; i < count; ++i) d[i] /= n;
      break;
    }
    case DataType::kFloat16: {
      auto* d = static_cast<std::uint16_t*>(data);
      for (std::size_t i = 0; i < count; ++i) d[i] = floatToHalf(halfToFloat(d[i]) / n);
      break;
    }
    case DataType::kBFloat16: {
      auto* d = static_cast<std::uint16_t*>(data);
      for (std::size_t i = 0; i < count; ++i) d[i] = floatToBf16(bf16ToFloat(d[i]) / n);
      break;
    }
    default:
      break;
  }
}

}  // namespace collective
}  // namespace cohort
