// The reductions: every type x op x SIMD path against the scalar path, bit for bit,
// over odd counts and unaligned heads, in place and not; fp16 and bf16 against the
// fp32 result rounded once; the special values against the rules of
// kernels/element_ops.h.
#include "kernels/reduce.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/convert.h"
#include "kernels/kernel_test_util.h"

namespace cohort::kernels::testing {
namespace {

using Bytes = std::vector<unsigned char>;

constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin};

// "" when equal, else where and how the first differing element differs.
std::string difference(const Bytes& got, const Bytes& want, std::size_t e) {
  for (std::size_t i = 0; i < got.size(); i += e) {
    if (std::memcmp(&got[i], &want[i], e) == 0) continue;
    std::string g, w;
    for (std::size_t k = e; k-- > 0;) {
      g += fmt::format("{:02x}", got[i + k]);
      w += fmt::format("{:02x}", want[i + k]);
    }
    return fmt::format("element {}: 0x{} instead of 0x{}", i / e, g, w);
  }
  return "";
}

// Runs `r` over n elements at the given element offsets of dst, a and b (dst: a
// poisoned buffer of n + 4 elements, or a's / b's own buffer when inPlace is 1 / 2).
Bytes run(const Reduction& r, const Bytes& a, const Bytes& b, std::size_t n, std::size_t offD,
          std::size_t offA, std::size_t offB, int inPlace) {
  const std::size_t e = r.elementSize;
  Bytes x = a, y = b, d((n + 4) * e, 0xA5);
  unsigned char* dst = inPlace == 1 ? &x[offA * e] : inPlace == 2 ? &y[offB * e] : &d[offD * e];
  r.fn(dst, &x[offA * e], &y[offB * e], n * e, r.context);
  return inPlace == 1 ? x : inPlace == 2 ? y : d;
}

class ReduceTest : public PathTest {};

TEST_P(ReduceTest, EveryTypeAndOpMatchesTheScalarPath) {
  struct Layout {
    std::size_t d, a, b;
    int inPlace;
  };
  const Layout layouts[] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 3, 0},
                            {3, 2, 1, 0}, {0, 1, 0, 1}, {0, 0, 3, 2}};
  for (int t = 0; t < kDataTypeCount; ++t) {
    const auto type = static_cast<DataType>(t);
    for (ReduceOp op : kOps) {
      const Reduction& mine = reductionFor(type, op, path());
      const Reduction& ref = reductionFor(type, op, SimdPath::kScalar);
      ASSERT_EQ(mine.elementSize, ref.elementSize);
      const std::size_t e = ref.elementSize;
      for (std::size_t n : oddCounts()) {
        const Bytes a = randomElements(n + 4, e, 17 * n + t);
        const Bytes b = randomElements(n + 4, e, 31 * n + t + 1000);
        for (const Layout& l : layouts) {
          const std::string bad = difference(run(mine, a, b, n, l.d, l.a, l.b, l.inPlace),
                                             run(ref, a, b, n, l.d, l.a, l.b, l.inPlace), e);
          ASSERT_EQ(bad, "") << dataTypeName(type) << " " << reduceOpName(op) << " count " << n
                             << " offsets dst/a/b " << l.d << "/" << l.a << "/" << l.b
                             << (l.inPlace == 1   ? " into a"
                                 : l.inPlace == 2 ? " into b"
                                                  : "");
        }
      }
    }
  }
}

// fp16 and bf16: the fp32 kernel's result on the widened inputs, rounded once; so
// NaNs, infinities, denormals and -0 come out as fp32 makes them.
TEST_P(ReduceTest, HalfTypesRoundTheFp32ResultOnce) {
  constexpr std::size_t n = 4099;
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    const bool fp16 = type == DataType::kFloat16;
    for (ReduceOp op : kOps) {
      const Bytes a = randomElements(n, 2, 5), b = randomElements(n, 2, 6);
      std::vector<std::uint16_t> x(n), y(n), got(n);
      std::memcpy(x.data(), a.data(), 2 * n);
      std::memcpy(y.data(), b.data(), 2 * n);
      std::vector<float> fx(n), fy(n), fr(n);
      for (std::size_t i = 0; i < n; ++i) {
        fx[i] = fp16 ? halfToFloat(x[i]) : bf16ToFloat(x[i]);
        fy[i] = fp16 ? halfToFloat(y[i]) : bf16ToFloat(y[i]);
      }
      const Reduction& f32 = reductionFor(DataType::kFloat32, op, SimdPath::kScalar);
      f32.fn(fr.data(), fx.data(), fy.data(), 4 * n, nullptr);
      const Reduction& mine = reductionFor(type, op, path());
      mine.fn(got.data(), x.data(), y.data(), 2 * n, nullptr);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t want = fp16 ? floatToHalf(fr[i]) : floatToBf16(fr[i]);
        ASSERT_EQ(got[i], want) << dataTypeName(type) << " " << reduceOpName(op) << " of 0x"
                                << std::hex << x[i] << " and 0x" << y[i] << " (element " << std::dec
                                << i << ")";
      }
    }
  }
}

// One special case: op(a, b) must give `want` (bits) in every position of a vector and
// of a tail (37 copies).
template <typename T>
void expectEverywhere(SimdPath path, DataType type, ReduceOp op, T a, T b, T want) {
  constexpr std::size_t n = 37;
  std::vector<T> x(n, a), y(n, b), d(n);
  reductionFor(type, op, path).fn(d.data(), x.data(), y.data(), n * sizeof(T), nullptr);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(d[i], want) << dataTypeName(type) << " " << reduceOpName(op) << " of 0x" << std::hex
                          << +a << " and 0x" << +b << " at " << std::dec << i;
  }
}

TEST_P(ReduceTest, Fp32SpecialValuesFollowTheRules) {
  const auto f32 = [&](ReduceOp op, std::uint32_t a, std::uint32_t b, std::uint32_t want) {
    std::vector<float> x(37, bitsToFloat(a)), y(37, bitsToFloat(b)), d(37);
    reductionFor(DataType::kFloat32, op, path()).fn(d.data(), x.data(), y.data(), 37 * 4, nullptr);
    for (float v : d) {
      ASSERT_EQ(floatToBits(v), want)
          << reduceOpName(op) << std::hex << " of 0x" << a << " and 0x" << b;
    }
  };
  // Sum and prod: a's NaN when a is one (quieted), else b's, else the default NaN.
  f32(ReduceOp::kSum, 0x7fc00001, 0x7fc00002, 0x7fc00001);
  f32(ReduceOp::kSum, 0x7fc00002, 0x7f800001, 0x7fc00002);
  f32(ReduceOp::kSum, 0x7fa00000, 0x3f800000, 0x7fe00000);
  f32(ReduceOp::kSum, 0x3f800000, 0x7f800001, 0x7fc00001);
  f32(ReduceOp::kProd, 0x3f800000, 0xffc00002, 0xffc00002);
  f32(ReduceOp::kProd, 0x7f800001, 0x7fc00002, 0x7fc00001);
#if defined(__x86_64__)
  f32(ReduceOp::kSum, 0x7f800000, 0xff800000, 0xffc00000);   // inf - inf: x86's default NaN
  f32(ReduceOp::kProd, 0x7f800000, 0x00000000, 0xffc00000);  // inf * 0
#endif
  f32(ReduceOp::kSum, 0x80000000, 0x80000000, 0x80000000);  // -0 + -0 = -0
  f32(ReduceOp::kSum, 0x80000000, 0x00000000, 0x00000000);
  f32(ReduceOp::kSum, 0x00000001, 0x00000001, 0x00000002);  // denormals, exactly
  f32(ReduceOp::kSum, 0x7f7fffff, 0x7f7fffff, 0x7f800000);  // overflow to inf
  f32(ReduceOp::kProd, 0x80000000, 0x40a00000, 0x80000000);
  // Max and min give a (unchanged, even a signalling NaN) on NaNs and on two zeros.
  f32(ReduceOp::kMax, 0x7fc00001, 0x3f800000, 0x7fc00001);
  f32(ReduceOp::kMax, 0x7f800001, 0x3f800000, 0x7f800001);
  f32(ReduceOp::kMax, 0x3f800000, 0x7fc00001, 0x3f800000);
  f32(ReduceOp::kMax, 0x80000000, 0x00000000, 0x80000000);
  f32(ReduceOp::kMax, 0xff800000, 0x00000001, 0x00000001);
  f32(ReduceOp::kMin, 0x7fc00001, 0x3f800000, 0x7fc00001);
  f32(ReduceOp::kMin, 0x3f800000, 0x7fc00001, 0x3f800000);
  f32(ReduceOp::kMin, 0x00000000, 0x80000000, 0x00000000);
  f32(ReduceOp::kMin, 0x7f800000, 0x80000001, 0x80000001);
}

TEST_P(ReduceTest, HalfAndIntegerSpecialValues) {
  using U16 = std::uint16_t;
  // bf16 denormals add exactly (hccl_test's "bf16 2" is the pattern 0x0002).
  expectEverywhere<U16>(path(), DataType::kBFloat16, ReduceOp::kSum, 0x0002, 0x0002, 0x0004);
  expectEverywhere<U16>(path(), DataType::kBFloat16, ReduceOp::kSum, 0x8001, 0x8001, 0x8002);
  expectEverywhere<U16>(path(), DataType::kBFloat16, ReduceOp::kSum, 0x7f7f, 0x7f7f, 0x7f80);
  expectEverywhere<U16>(path(), DataType::kBFloat16, ReduceOp::kSum, 0x7f81, 0x3f80, 0x7fc1);
  expectEverywhere<U16>(path(), DataType::kBFloat16, ReduceOp::kMax, 0x7f81, 0x3f80, 0x7fc1);
  expectEverywhere<U16>(path(), DataType::kBFloat16, ReduceOp::kMin, 0x8000, 0x0000, 0x8000);
  // 1 + 1/256 rounds to 1 (even), 1 + 3/256 to 1 + 1/64.
  expectEverywhere<U16>(path(), DataType::kBFloat16, ReduceOp::kSum, 0x3f80, 0x3b80, 0x3f80);
  expectEverywhere<U16>(path(), DataType::kFloat16, ReduceOp::kSum, 0x0001, 0x0001, 0x0002);
  expectEverywhere<U16>(path(), DataType::kFloat16, ReduceOp::kSum, 0x7bff, 0x7bff, 0x7c00);
  expectEverywhere<U16>(path(), DataType::kFloat16, ReduceOp::kSum, 0x7c01, 0x3c00, 0x7e01);
  expectEverywhere<U16>(path(), DataType::kFloat16, ReduceOp::kMax, 0x3c00, 0x7e00, 0x3c00);
  expectEverywhere<U16>(path(), DataType::kFloat16, ReduceOp::kProd, 0x8000, 0x3c00, 0x8000);
  // Integers wrap.
  expectEverywhere<std::int8_t>(path(), DataType::kInt8, ReduceOp::kSum, 127, 1, -128);
  expectEverywhere<std::int8_t>(path(), DataType::kInt8, ReduceOp::kProd, -128, -1, -128);
  expectEverywhere<std::int8_t>(path(), DataType::kInt8, ReduceOp::kMin, -128, 127, -128);
  expectEverywhere<std::uint8_t>(path(), DataType::kUint8, ReduceOp::kMax, 200, 100, 200);
  expectEverywhere<std::int16_t>(path(), DataType::kInt16, ReduceOp::kProd, 300, 300, 24464);
  expectEverywhere<U16>(path(), DataType::kUint16, ReduceOp::kProd, 65535, 65535, 1);
  expectEverywhere<std::int32_t>(path(), DataType::kInt32, ReduceOp::kMax, -3, -7, -3);
  expectEverywhere<std::int64_t>(path(), DataType::kInt64, ReduceOp::kSum, INT64_MAX, 1, INT64_MIN);
  expectEverywhere<std::uint64_t>(path(), DataType::kUint64, ReduceOp::kProd, 1ull << 63, 2, 0);
  expectEverywhere<double>(path(), DataType::kFloat64, ReduceOp::kSum, 0.5, 1e300, 1e300);
}

TEST_P(ReduceTest, AvgReducesAsSumAndFinishAverageDividesOnce) {
  for (DataType type :
       {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64}) {
    EXPECT_EQ(reductionFor(type, ReduceOp::kAvg, path()).fn,
              reductionFor(type, ReduceOp::kSum, path()).fn);
    const std::size_t e = dataTypeSize(type);
    for (int divisor : {2, 3, 7}) {
      for (std::size_t n : oddCounts()) {
        for (std::size_t off : {0, 1, 3}) {
          Bytes mine = randomElements(n + 3, e, n + divisor), ref = mine;
          finishAverage(&mine[off * e], n, type, divisor, path());
          finishAverage(&ref[off * e], n, type, divisor, SimdPath::kScalar);
          ASSERT_EQ(difference(mine, ref, e), "")
              << dataTypeName(type) << " / " << divisor << " count " << n << " offset " << off;
        }
      }
    }
  }
  std::vector<float> f = {2, 7, -1};
  finishAverage(f.data(), 3, DataType::kFloat32, 2, path());
  EXPECT_EQ(f, (std::vector<float>{1, 3.5f, -0.5f}));
  std::vector<std::int32_t> i = {4, 6};  // integers have no average: left alone
  finishAverage(i.data(), 2, DataType::kInt32, 2, path());
  EXPECT_EQ(i, (std::vector<std::int32_t>{4, 6}));
}

COHORT_INSTANTIATE_PATHS(ReduceTest);

TEST(ReduceDefaultTest, ActivePathIsTheDefault) {
  EXPECT_EQ(reductionFor(DataType::kBFloat16, ReduceOp::kSum).fn,
            reductionFor(DataType::kBFloat16, ReduceOp::kSum, activePath()).fn);
}

}  // namespace
}  // namespace cohort::kernels::testing
