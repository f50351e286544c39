#include "tools/perf/data_pattern.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cohort::perf {

namespace {

constexpr double k2to53 = 9007199254740992.0;

const TypeInfo kTypes[] = {
    {DataType::kInt8, "int8", "int8", 1, 127},
    {DataType::kUint8, "uint8", "uint8", 1, 254},
    {DataType::kInt16, "int16", "int16", 2, 32767},
    {DataType::kUint16, "uint16", "uint16", 2, 65534},
    {DataType::kInt32, "int32", "int32", 4, 2147483647.0},
    {DataType::kUint32, "uint32", "uint32", 4, 4294967294.0},
    {DataType::kInt64, "int64", "int64", 8, k2to53},
    {DataType::kUint64, "uint64", "uint64", 8, k2to53},
    {DataType::kFloat16, "half", "fp16", 2, 2048},       // every integer up to 2^11 is exact
    {DataType::kBFloat16, "bfloat16", "bfp16", 2, 256},  // 8 significant bits
    {DataType::kFloat32, "float", "fp32", 4, 16777216.0},
    {DataType::kFloat64, "double", "fp64", 8, k2to53},
};

// fp16 and bf16 as their bit patterns. The patterns only produce values that are
// exact in the type (non-negative integers within maxExact, powers of two), so
// encoding is a re-biasing of the float's exponent and a truncation of its mantissa.
struct Half {
  std::uint16_t bits;
};
struct BFloat16 {
  std::uint16_t bits;
};

template <typename T>
T encode(double v) {
  return static_cast<T>(v);
}
template <>
Half encode<Half>(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  if ((b & 0x7fffffffu) == 0) return Half{static_cast<std::uint16_t>(b >> 16)};
  const std::uint32_t sign = (b >> 16) & 0x8000u;
  const std::uint32_t exponent = ((b >> 23) & 0xffu) - 127u + 15u;
  return Half{static_cast<std::uint16_t>(sign | (exponent << 10) | ((b >> 13) & 0x3ffu))};
}
template <>
BFloat16 encode<BFloat16>(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return BFloat16{static_cast<std::uint16_t>(b >> 16)};
}

// Calls fn(T{}) with the C++ type that holds `type`'s elements.
template <typename Fn>
auto visitType(DataType type, Fn&& fn) {
  switch (type) {
    case DataType::kInt8:
      return fn(std::int8_t{});
    case DataType::kUint8:
      return fn(std::uint8_t{});
    case DataType::kInt16:
      return fn(std::int16_t{});
    case DataType::kUint16:
      return fn(std::uint16_t{});
    case DataType::kInt32:
      return fn(std::int32_t{});
    case DataType::kUint32:
      return fn(std::uint32_t{});
    case DataType::kInt64:
      return fn(std::int64_t{});
    case DataType::kUint64:
      return fn(std::uint64_t{});
    case DataType::kFloat16:
      return fn(Half{});
    case DataType::kBFloat16:
      return fn(BFloat16{});
    case DataType::kFloat32:
      return fn(float{});
    case DataType::kFloat64:
      break;
  }
  return fn(double{});
}

template <typename T, typename F>
long long countWrong(const void* buffer, std::size_t count, F expected) {
  const auto* p = static_cast<const unsigned char*>(buffer);
  long long wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const T e = encode<T>(expected(i));
    wrong += std::memcmp(p + i * sizeof(T), &e, sizeof(T)) != 0;
  }
  return wrong;
}

}  // namespace

const TypeInfo& typeInfo(DataType type) {
  for (const auto& t : kTypes) {
    if (t.type == type) return t;
  }
  return kTypes[10];
}

std::vector<DataType> allTypes() {
  return {DataType::kInt8,    DataType::kUint8,    DataType::kInt32,   DataType::kUint32,
          DataType::kInt64,   DataType::kUint64,   DataType::kFloat16, DataType::kFloat32,
          DataType::kFloat64, DataType::kBFloat16, DataType::kInt16,   DataType::kUint16};
}

bool parseType(const std::string& text, DataType* out) {
  static const std::pair<const char*, DataType> kAliases[] = {{"float16", DataType::kFloat16},
                                                              {"float32", DataType::kFloat32},
                                                              {"float64", DataType::kFloat64},
                                                              {"bf16", DataType::kBFloat16}};
  for (const auto& t : kTypes) {
    if (text == t.name || text == t.hcclName) {
      *out = t.type;
      return true;
    }
  }
  for (const auto& a : kAliases) {
    if (text == a.first) {
      *out = a.second;
      return true;
    }
  }
  return false;
}

bool parseOp(const std::string& text, ReduceOp* out) {
  for (int i = 0; i < kReduceOpCount; ++i) {
    if (text == reduceOpName(static_cast<ReduceOp>(i))) {
      *out = static_cast<ReduceOp>(i);
      return true;
    }
  }
  return false;
}

bool isFloatType(DataType type) {
  return type == DataType::kFloat16 || type == DataType::kBFloat16 || type == DataType::kFloat32 ||
         type == DataType::kFloat64;
}

Pattern::Pattern(DataType type, ReduceOp op, int nranks, bool reduction)
    : type_(type), op_(reduction ? op : ReduceOp::kSum), nranks_(nranks) {
  const double maxValue = typeInfo(type).maxExact;
  const double n = nranks;
  if (reduction && op == ReduceOp::kProd) {
    form_ = Form::kPowersOfTwo;
    maxTwos_ = std::min(62, static_cast<int>(std::floor(std::log2(maxValue))));
    return;
  }
  if (reduction && (op == ReduceOp::kMax || op == ReduceOp::kMin)) {
    form_ = Form::kModular;  // 1031 is prime: the largest value moves between ranks
    modulus_ = static_cast<std::uint64_t>(std::min(maxValue, 1030.0)) + 1;
    return;
  }
  scale_ = reduction && op == ReduceOp::kAvg ? n : 1.0;
  const double peersTotal = reduction ? 1023 * n + 512 * n * (n - 1) : 1023 + 1024 * (n - 1);
  if (scale_ * peersTotal <= maxValue) return;  // Form::kPeers
  form_ = Form::kModular;
  modulus_ = static_cast<std::uint64_t>(std::floor(maxValue / (scale_ * (reduction ? n : 1)))) + 1;
}

double Pattern::input(int rank, std::size_t i) const {
  const auto r = static_cast<std::size_t>(rank);
  switch (form_) {
    case Form::kPeers:
      return scale_ * static_cast<double>(((i + 97u * r) & 1023u) + 1024u * r);
    case Form::kModular:
      return scale_ * static_cast<double>((i + 97u * r) % modulus_);
    case Form::kPowersOfTwo:
      return rank < 3 * maxTwos_ && (i + r) % 3 == 0 ? 2.0 : 1.0;
  }
  return 0;
}

double Pattern::reduced(std::size_t i) const {
  double acc = input(0, i);
  for (int r = 1; r < nranks_; ++r) {
    const double v = input(r, i);
    switch (op_) {
      case ReduceOp::kProd:
        acc *= v;
        break;
      case ReduceOp::kMax:
        acc = std::max(acc, v);
        break;
      case ReduceOp::kMin:
        acc = std::min(acc, v);
        break;
      default:
        acc += v;
        break;
    }
  }
  return op_ == ReduceOp::kAvg ? acc / nranks_ : acc;
}

void fillInputs(DataType type, void* buffer, std::size_t count, const Pattern& pattern, int rank) {
  visitType(type, [&](auto zero) {
    using T = decltype(zero);
    auto* p = static_cast<T*>(buffer);
    for (std::size_t i = 0; i < count; ++i) p[i] = encode<T>(pattern.input(rank, i));
  });
}

long long countWrongInputs(DataType type, const void* buffer, std::size_t count,
                           const Pattern& pattern, int rank, std::size_t offset) {
  return visitType(type, [&](auto zero) {
    return countWrong<decltype(zero)>(
        buffer, count, [&](std::size_t i) { return pattern.input(rank, offset + i); });
  });
}

long long countWrongReduced(DataType type, const void* buffer, std::size_t count,
                            const Pattern& pattern, std::size_t offset) {
  return visitType(type, [&](auto zero) {
    return countWrong<decltype(zero)>(buffer, count,
                                      [&](std::size_t i) { return pattern.reduced(offset + i); });
  });
}

void corruptElement(DataType type, void* buffer, std::size_t i) {
  static_cast<unsigned char*>(buffer)[i * typeInfo(type).size] ^= 1u;
}

}  // namespace cohort::perf
