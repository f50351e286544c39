#include "collective/expect.h"

#include <cmath>

namespace cohort::testing {

double expectedReduce(ReduceOp op, int n, std::size_t i) {
  double acc = inputValue(op, 0, i);
  for (int r = 1; r < n; ++r) {
    const double v = inputValue(op, r, i);
    switch (op) {
      case ReduceOp::kSum: case ReduceOp::kAvg: acc += v; break;
      case ReduceOp::kProd: acc *= v; break;
      case ReduceOp::kMax: acc = std::max(acc, v); break;
      case ReduceOp::kMin: acc = std::min(acc, v); break;
    }
  }
  return op == ReduceOp::kAvg ? acc / n : acc;
}

namespace {
template <typename T>
void put(double v, void* dst) {
  // Integers wrap modulo their width, as two's complement hardware does.
  const T t = static_cast<T>(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  std::memcpy(dst, &t, sizeof(T));
}
template <typename T>
double get(const void* src, std::size_t i) {
  T t;
  std::memcpy(&t, static_cast<const char*>(src) + i * sizeof(T), sizeof(T));
  return static_cast<double>(t);
}
}  // namespace

void encode(DataType type, double v, void* dst) {
  switch (type) {
    case DataType::kInt8: put<std::int8_t>(v, dst); break;
    case DataType::kUint8: put<std::uint8_t>(v, dst); break;
    case DataType::kInt16: put<std::int16_t>(v, dst); break;
    case DataType::kUint16: put<std::uint16_t>(v, dst); break;
    case DataType::kInt32: put<std::int32_t>(v, dst); break;
    case DataType::kUint32: put<std::uint32_t>(v, dst); break;
    case DataType::kInt64: put<std::int64_t>(v, dst); break;
    case DataType::kUint64: put<std::uint64_t>(v, dst); break;
    case DataType::kFloat16: {
      const _Float16 h = static_cast<_Float16>(v);  // the compiler's own conversion
      std::memcpy(dst, &h, 2);
      break;
    }
    case DataType::kBFloat16: {
      const float f = static_cast<float>(v);
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const std::uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);
      const auto b = static_cast<std::uint16_t>(rounded >> 16);
      std::memcpy(dst, &b, 2);
      break;
    }
    case DataType::kFloat32: {
      const float f = static_cast<float>(v);
      std::memcpy(dst, &f, 4);
      break;
    }
    case DataType::kFloat64: std::memcpy(dst, &v, 8); break;
  }
}

double decode(DataType type, const void* src, std::size_t i) {
  switch (type) {
    case DataType::kInt8: return get<std::int8_t>(src, i);
    case DataType::kUint8: return get<std::uint8_t>(src, i);
    case DataType::kInt16: return get<std::int16_t>(src, i);
    case DataType::kUint16: return get<std::uint16_t>(src, i);
    case DataType::kInt32: return get<std::int32_t>(src, i);
    case DataType::kUint32: return get<std::uint32_t>(src, i);
    case DataType::kInt64: return get<std::int64_t>(src, i);
    case DataType::kUint64: return get<std::uint64_t>(src, i);
    case DataType::kFloat16: {
      _Float16 h;
      std::memcpy(&h, static_cast<const char*>(src) + 2 * i, 2);
      return static_cast<double>(h);
    }
    case DataType::kBFloat16: {
      std::uint16_t b;
      std::memcpy(&b, static_cast<const char*>(src) + 2 * i, 2);
      const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DataType::kFloat32: return get<float>(src, i);
    case DataType::kFloat64: return get<double>(src, i);
  }
  return 0;
}

std::vector<std::uint8_t> bytesOf(DataType type, double v) {
  std::vector<std::uint8_t> b(dataTypeSize(type));
  encode(type, v, b.data());
  return b;
}

}  // namespace cohort::testing
