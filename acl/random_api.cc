// aclrtRandomNumAsync: random numbers made on the stream, from Philox4x32-10 (the
// generator CANN names) keyed by the seed, starting at the 128-bit counter in device
// memory, which the task advances by the blocks it used: the same seed and counter give
// the same numbers, and consecutive tasks give fresh ones.
#include <cmath>
#include <cstring>

#include "acl/entry_names.h"
#include "kernels/convert.h"

namespace {

constexpr std::size_t kCounterBytes = 16;

// Philox4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
class Philox {
 public:
  Philox(std::uint64_t seed, const std::uint32_t counter[4]) {
    key_[0] = static_cast<std::uint32_t>(seed);
    key_[1] = static_cast<std::uint32_t>(seed >> 32);
    std::memcpy(counter_, counter, sizeof(counter_));
  }
  std::uint32_t next() {
    if (used_ == 4) refill();
    return out_[used_++];
  }
  double unit() { return next() * (1.0 / 4294967296.0); }  // [0, 1)
  std::uint64_t next64() { return (static_cast<std::uint64_t>(next()) << 32) | next(); }
  const std::uint32_t* counter() const { return counter_; }

 private:
  void refill() {
    std::uint32_t c[4];
    std::memcpy(c, counter_, sizeof(c));
    std::uint32_t k0 = key_[0], k1 = key_[1];
    for (int round = 0; round < 10; ++round) {
      const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c[0];
      const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c[2];
      const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k0;
      const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1;
      c[0] = n0;
      c[1] = static_cast<std::uint32_t>(p1);
      c[2] = n2;
      c[3] = static_cast<std::uint32_t>(p0);
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    std::memcpy(out_, c, sizeof(out_));
    used_ = 0;
    for (int i = 0; i < 4 && ++counter_[i] == 0; ++i) {
    }
  }
  std::uint32_t key_[2];
  std::uint32_t counter_[4];
  std::uint32_t out_[4] = {};
  int used_ = 4;
};

// A task parameter, read when the task runs (from device memory when isAddr).
struct Param {
  aclrtRandomParaInfo info;
  std::size_t bytes;  // the value's size

  void read(void* out) const {
    if (info.isAddr == 0) {
      std::memcpy(out, info.valueOrAddr, bytes);
      return;
    }
    const void* address = nullptr;
    std::memcpy(&address, info.valueOrAddr, sizeof(address));
    std::memcpy(out, address, bytes);
  }
  std::uint64_t readUnsigned() const {  // seed and count: 4 or 8 bytes
    std::uint64_t v = 0;
    if (bytes == 4) {
      std::uint32_t v32 = 0;
      read(&v32);
      return v32;
    }
    read(&v);
    return v;
  }
};

bool deviceBytes(const void* p, std::size_t bytes) {
  rt::PointerAttributes a;
  if (!rt::pointerGetAttributes(p, &a).ok() || !a.isDevice || a.allocationBase == nullptr) {
    return false;
  }
  return static_cast<const char*>(p) + bytes <=
         static_cast<const char*>(a.allocationBase) + a.allocationSize;
}

// `bytes` is the value's size; integer parameters (seed, count) may be 4 or 8 bytes.
Outcome makeParam(const char* fn, const char* name, const aclrtRandomParaInfo& info,
                  std::size_t bytes, bool either48, Param* out) {
  if (info.isAddr > 1)
    return invalidArgument(fn, "{}.isAddr {} is neither 0 nor 1", name, info.isAddr);
  if (info.isAddr == 0) {
    const bool fits = either48 ? (info.size == 4 || info.size == 8) : info.size == bytes;
    if (!fits) {
      return invalidArgument(fn, "{}.size {} does not fit its type ({} bytes)", name, info.size,
                             either48 ? std::size_t{8} : bytes);
    }
    bytes = info.size;
  } else {
    if (either48) bytes = 8;
    const void* address = nullptr;
    std::memcpy(&address, info.valueOrAddr, sizeof(address));
    if (!deviceBytes(address, bytes)) {
      return invalidArgument(fn,
                             "{} points at {}, which does not hold {} bytes of device "
                             "memory",
                             name, address, bytes);
    }
  }
  *out = Param{info, bytes};
  return Status::Ok();
}

// A floating type's value as double, and back (for the result).
double floatValue(aclDataType type, const Param& p) {
  if (type == ACL_FLOAT) {
    float f = 0;
    p.read(&f);
    return f;
  }
  std::uint16_t h = 0;
  p.read(&h);
  return type == ACL_FLOAT16 ? cohort::kernels::halfToFloat(h) : cohort::kernels::bf16ToFloat(h);
}

void storeFloat(aclDataType type, double v, void* out, std::size_t i) {
  const auto f = static_cast<float>(v);
  if (type == ACL_FLOAT) {
    static_cast<float*>(out)[i] = f;
  } else {
    static_cast<std::uint16_t*>(out)[i] =
        type == ACL_FLOAT16 ? cohort::kernels::floatToHalf(f) : cohort::kernels::floatToBf16(f);
  }
}

double loadFloat(aclDataType type, const void* out, std::size_t i) {
  if (type == ACL_FLOAT) return static_cast<const float*>(out)[i];
  const std::uint16_t h = static_cast<const std::uint16_t*>(out)[i];
  return type == ACL_FLOAT16 ? cohort::kernels::halfToFloat(h) : cohort::kernels::bf16ToFloat(h);
}

std::size_t sizeOf(aclDataType type) {
  switch (type) {
    case ACL_FLOAT16:
    case ACL_BF16:
      return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
      return 4;
    case ACL_INT64:
    case ACL_UINT64:
      return 8;
    default:
      return 0;
  }
}

bool isFloat(aclDataType t) { return t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16; }

struct Task {
  aclrtRandomNumFuncType func;
  aclDataType type;
  Param a, b;  // min/max, mean/stddev, or ratio (a)
  Param seed, num;
  void* result;
  void* counter;
  void* staging;  // randomParaAddr, or null
  aclrtRandomNumFuncParaInfo funcInfo;

  Status run() const;
};

Status Task::run() const {
  const std::uint64_t n = num.readUnsigned();
  const std::size_t outBytes =
      func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK ? (n + 7) / 8 : n * sizeOf(type);
  if (!deviceBytes(result, outBytes)) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "aclrtRandomNumAsync: the result at "
                             "{} does not hold {} numbers ({} bytes)",
                             result, n, outBytes);
  }
  if (staging != nullptr) std::memcpy(staging, &funcInfo, sizeof(funcInfo));
  std::uint32_t start[4];
  std::memcpy(start, counter, kCounterBytes);
  Philox gen(seed.readUnsigned(), start);
  if (func == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS && !isFloat(type)) {
    std::uint64_t lo = 0, hi = 0;  // two's complement bits, 64-bit
    const bool isSigned = type == ACL_INT32 || type == ACL_INT64;
    if (sizeOf(type) == 4) {
      std::uint32_t l = 0, h = 0;
      a.read(&l), b.read(&h);
      lo = isSigned
               ? static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(l)))
               : l;
      hi = isSigned
               ? static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(h)))
               : h;
    } else {
      a.read(&lo), b.read(&hi);
    }
    const bool ordered =
        isSigned ? static_cast<std::int64_t>(lo) < static_cast<std::int64_t>(hi) : lo < hi;
    if (!ordered) {
      return Status(ErrorCode::kInvalidArgument,
                    "aclrtRandomNumAsync: uniform max must exceed min");
    }
    const std::uint64_t range = hi - lo;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t v = lo + gen.next64() % range;
      if (sizeOf(type) == 4) {
        static_cast<std::uint32_t*>(result)[i] = static_cast<std::uint32_t>(v);
      } else {
        static_cast<std::uint64_t*>(result)[i] = v;
      }
    }
  } else if (func == ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS) {
    const double lo = floatValue(type, a), hi = floatValue(type, b);
    if (!(lo < hi)) {
      return Status(ErrorCode::kInvalidArgument,
                    "aclrtRandomNumAsync: uniform max must exceed min");
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      storeFloat(type, lo + gen.unit() * (hi - lo), result, i);
      if (loadFloat(type, result, i) >= hi) storeFloat(type, lo, result, i);  // rounded up to max
    }
  } else if (func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK) {
    const double ratio = floatValue(type, a);
    if (!(ratio >= 0 && ratio <= 1)) {
      return Status(ErrorCode::kInvalidArgument,
                    "aclrtRandomNumAsync: the dropout ratio is not "
                    "in [0, 1]");
    }
    auto* bits = static_cast<std::uint8_t*>(result);
    std::memset(bits, 0, outBytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      if (gen.unit() >= ratio)
        bits[i / 8] = static_cast<std::uint8_t>(bits[i / 8] | (1u << (i % 8)));
    }
  } else {
    const double mean = floatValue(type, a), stddev = floatValue(type, b);
    if (!(stddev >= 0)) {
      return Status(ErrorCode::kInvalidArgument, "aclrtRandomNumAsync: stddev is negative");
    }
    const bool truncated = func == ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS;
    std::uint64_t i = 0;
    while (i < n) {
      // Box-Muller: two normal numbers from two uniform ones.
      const double u1 = (gen.next() + 1.0) * (1.0 / 4294967296.0);  // (0, 1]
      const double u2 = gen.unit();
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double z[2] = {r * std::cos(2 * M_PI * u2), r * std::sin(2 * M_PI * u2)};
      for (double v : z) {
        if (i == n || (truncated && std::fabs(v) > 2.0)) continue;
        storeFloat(type, mean + stddev * v, result, i++);
      }
    }
  }
  std::memcpy(counter, gen.counter(), kCounterBytes);
  return Status::Ok();
}

}  // namespace

aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo* taskInfo, const aclrtStream stream,
                             void* reserve) {
  const char* fn = "aclrtRandomNumAsync";
  return apiCall(fn, [&]() -> Outcome {
    if (taskInfo == nullptr) return nullArgument(fn, "taskInfo");
    if (reserve != nullptr) return invalidArgument(fn, "reserve must be NULL");
    Task task{};
    task.func = taskInfo->randomNumFuncParaInfo.funcType;
    task.type = taskInfo->dataType;
    task.funcInfo = taskInfo->randomNumFuncParaInfo;
    const std::size_t bytes = sizeOf(task.type);
    const auto& info = taskInfo->randomNumFuncParaInfo.paramInfo;
    switch (task.func) {
      case ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
        if (bytes == 0) {
          return invalidArgument(fn,
                                 "dataType {} cannot be uniform (ACL_INT32, ACL_INT64, "
                                 "ACL_UINT32, ACL_UINT64, ACL_FLOAT, ACL_FLOAT16, ACL_BF16)",
                                 static_cast<int>(task.type));
        }
        ACL_RETURN_IF_FAILED(makeParam(fn, "min", info.uniformDisInfo.min, bytes, false, &task.a));
        ACL_RETURN_IF_FAILED(makeParam(fn, "max", info.uniformDisInfo.max, bytes, false, &task.b));
        break;
      case ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS:
      case ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS:
      case ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
        if (!isFloat(task.type)) {
          return invalidArgument(fn,
                                 "dataType {} is not a floating type (ACL_FLOAT, "
                                 "ACL_FLOAT16, ACL_BF16)",
                                 static_cast<int>(task.type));
        }
        if (task.func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK) {
          ACL_RETURN_IF_FAILED(makeParam(fn, "dropoutRation", info.dropoutBitmaskInfo.dropoutRation,
                                         bytes, false, &task.a));
        } else {
          ACL_RETURN_IF_FAILED(
              makeParam(fn, "mean", info.normalDisInfo.mean, bytes, false, &task.a));
          ACL_RETURN_IF_FAILED(
              makeParam(fn, "stddev", info.normalDisInfo.stddev, bytes, false, &task.b));
        }
        break;
      default:
        return invalidArgument(fn, "funcType {} is not an aclrtRandomNumFuncType (0..3)",
                               static_cast<int>(task.func));
    }
    ACL_RETURN_IF_FAILED(makeParam(fn, "randomSeed", taskInfo->randomSeed, 8, true, &task.seed));
    ACL_RETURN_IF_FAILED(makeParam(fn, "randomNum", taskInfo->randomNum, 8, true, &task.num));
    task.result = taskInfo->randomResultAddr;
    task.counter = taskInfo->randomCounterAddr;
    task.staging = taskInfo->randomParaAddr;
    if (task.result == nullptr) return nullArgument(fn, "randomResultAddr");
    if (task.counter == nullptr) return nullArgument(fn, "randomCounterAddr");
    if (!deviceBytes(task.counter, kCounterBytes)) {
      return invalidArgument(fn, "randomCounterAddr {} does not hold {} bytes of device memory",
                             task.counter, kCounterBytes);
    }
    if (!deviceBytes(task.result, 1)) {
      return invalidArgument(fn, "randomResultAddr {} is not device memory", task.result);
    }
    if (task.staging != nullptr && !deviceBytes(task.staging, sizeof(task.funcInfo))) {
      return invalidArgument(fn, "randomParaAddr {} does not hold {} bytes of device memory",
                             task.staging, sizeof(task.funcInfo));
    }
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return rt::launchKernel(toStream(stream), [task](rt::Stream*) { return task.run(); });
  });
}
