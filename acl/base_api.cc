// The runtime's base facilities (CANN's acl_base_rt.h): fp16 conversions, data
// type sizes, data buffers, application logs, the SoC name, CANN attributes and
// device capabilities. None needs aclInit: they describe the installation or
// convert values.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "acl/acl.h"
#include "acl/device_profile.h"
#include "acl/entry_names.h"
#include "cohort/runtime.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "kernels/convert.h"

// What aclCreateDataBuffer hands out: an address and a size, nothing owned.
struct aclDataBuffer {
  void* data;
  size_t size;
};

namespace {

using cohort::kernels::bitsToFloat;
using cohort::kernels::floatToBits;

// Rounds `value >> shift` to nearest, ties to even (shift >= 1).
std::uint32_t shiftRoundEven(std::uint32_t value, int shift) {
  const std::uint32_t kept = value >> shift;
  const std::uint32_t rest = value & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
}

// Every aclDataBuffer alive, so that a destroyed or foreign pointer is an error
// rather than a crash. Thread-safe; the set lives as long as the process.
class DataBuffers {
 public:
  static DataBuffers& get() {
    static DataBuffers* buffers = new DataBuffers;  // never destroyed: usable at exit
    return *buffers;
  }
  void add(const aclDataBuffer* buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(buffer);
  }
  bool remove(const aclDataBuffer* buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.erase(buffer) != 0;
  }
  bool contains(const aclDataBuffer* buffer) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.count(buffer) != 0;
  }

 private:
  std::mutex mu_;
  std::unordered_set<const aclDataBuffer*> live_;
};

Outcome checkBuffer(const char* function, const aclDataBuffer* buffer) {
  if (buffer == nullptr) return nullArgument(function, "dataBuffer");
  if (!DataBuffers::get().contains(buffer)) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: dataBuffer {} is not a live aclDataBuffer (destroyed, or not "
                             "made by aclCreateDataBuffer)",
                             function, static_cast<const void*>(buffer));
  }
  return Status::Ok();
}

constexpr aclCannAttr kSupportedAttributes[] = {ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16};

}  // namespace

// ---- fp16 and data types ---------------------------------------------------------

float aclFloat16ToFloat(aclFloat16 value) {
  const std::uint32_t sign = static_cast<std::uint32_t>(value & 0x8000u) << 16;
  std::uint32_t exponent = (value >> 10) & 0x1fu;
  std::uint32_t mantissa = value & 0x3ffu;
  if (exponent == 0) {
    if (mantissa == 0) return bitsToFloat(sign);  // +-0
    // A denormal: normalise it; its value is mantissa * 2^-24.
    exponent = 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x3ffu;
  }
  // Exponent 31 is an ordinary binade here (2^16 .. 2^17), as in CANN: no inf/NaN.
  return bitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

aclFloat16 aclFloatToFloat16(float value) {
  const std::uint32_t bits = floatToBits(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  // From 65504 (0x477FE000) up every value rounds to 65504 or would overflow, and
  // saturation makes both 65504; inf and NaN (exponent 255) too.
  if (magnitude >= 0x477fe000u) return static_cast<aclFloat16>(sign | 0x7bffu);
  if (magnitude >= 0x38800000u) {  // at least 2^-14: a normal fp16
    // Rebias the exponent (127 -> 15) and round 23 mantissa bits to 10; a carry
    // out of the mantissa moves into the exponent, which is what rounding means.
    const std::uint32_t rebased = magnitude - (112u << 23);
    return static_cast<aclFloat16>(sign | shiftRoundEven(rebased, 13));
  }
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return static_cast<aclFloat16>(sign);  // below half of 2^-24
  // A denormal fp16 counts units of 2^-24: value = significand * 2^(exponent - 150),
  // so the count is significand >> (126 - exponent), rounded (14 <= shift <= 24).
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  return static_cast<aclFloat16>(sign |
                                 shiftRoundEven(significand, 126 - static_cast<int>(exponent)));
}

size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
    // The sub-byte types take one byte per element, as INT4 does in CANN.
    case ACL_INT4:
    case ACL_UINT1:
    case ACL_FLOAT6_E3M2:
    case ACL_FLOAT6_E2M3:
    case ACL_FLOAT4_E2M1:
    case ACL_FLOAT4_E1M2:
      return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
      return 4;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    case ACL_STRING:
    case ACL_DT_UNDEFINED:
      return 0;
  }
  apiCallAnyTime("aclDataTypeSize", [&]() -> Outcome {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "aclDataTypeSize: {} is not an aclDataType; its size is 0",
                             static_cast<int>(dataType));
  });
  return 0;
}

// ---- Data buffers ------------------------------------------------------------------

aclDataBuffer* aclCreateDataBuffer(void* data, size_t size) {
  aclDataBuffer* created = nullptr;
  apiCallAnyTime("aclCreateDataBuffer", [&]() -> Outcome {
    if (data == nullptr && size != 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclCreateDataBuffer: data is null but size is {} (an empty "
                               "buffer has size 0)",
                               size);
    }
    auto buffer = std::make_unique<aclDataBuffer>(aclDataBuffer{data, size});
    DataBuffers::get().add(buffer.get());
    created = buffer.release();
    return Status::Ok();
  });
  return created;
}

aclError aclDestroyDataBuffer(const aclDataBuffer* dataBuffer) {
  return apiCallAnyTime("aclDestroyDataBuffer", [&]() -> Outcome {
    if (dataBuffer == nullptr) return nullArgument("aclDestroyDataBuffer", "dataBuffer");
    // Removing first makes a second destroy, even a concurrent one, an error.
    if (!DataBuffers::get().remove(dataBuffer)) {
      return checkBuffer("aclDestroyDataBuffer", dataBuffer);
    }
    delete dataBuffer;
    return Status::Ok();
  });
}

aclError aclUpdateDataBuffer(aclDataBuffer* dataBuffer, void* data, size_t size) {
  return apiCallAnyTime("aclUpdateDataBuffer", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkBuffer("aclUpdateDataBuffer", dataBuffer));
    dataBuffer->data = data;
    dataBuffer->size = size;
    return Status::Ok();
  });
}

void* aclGetDataBufferAddr(const aclDataBuffer* dataBuffer) {
  void* data = nullptr;
  apiCallAnyTime("aclGetDataBufferAddr", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkBuffer("aclGetDataBufferAddr", dataBuffer));
    data = dataBuffer->data;
    return Status::Ok();
  });
  return data;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer* dataBuffer) {
  uint32_t size = 0;
  apiCallAnyTime("aclGetDataBufferSize", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkBuffer("aclGetDataBufferSize", dataBuffer));
    if (dataBuffer->size > UINT32_MAX) {
      size = UINT32_MAX;
      COHORT_LOG(kWarn, "acl",
                 "aclGetDataBufferSize: the size {} does not fit 32 bits; returning {} (use "
                 "aclGetDataBufferSizeV2)",
                 dataBuffer->size, size);
    } else {
      size = static_cast<uint32_t>(dataBuffer->size);
    }
    return Status::Ok();
  });
  return size;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer* dataBuffer) {
  size_t size = 0;
  apiCallAnyTime("aclGetDataBufferSizeV2", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(checkBuffer("aclGetDataBufferSizeV2", dataBuffer));
    size = dataBuffer->size;
    return Status::Ok();
  });
  return size;
}

// ---- Logs, SoC, attributes, capabilities -------------------------------------------

void aclAppLog(aclLogLevel logLevel, const char* func, const char* file, uint32_t line,
               const char* fmt, ...) {
  if (func == nullptr || file == nullptr || fmt == nullptr) return;
  cohort::LogLevel level = cohort::LogLevel::kError;  // and for values that are no level
  switch (logLevel) {
    case ACL_DEBUG:
      level = cohort::LogLevel::kDebug;
      break;
    case ACL_INFO:
      level = cohort::LogLevel::kInfo;
      break;
    case ACL_WARNING:
      level = cohort::LogLevel::kWarn;
      break;
    case ACL_ERROR:
      level = cohort::LogLevel::kError;
      break;
  }
  if (!cohort::log::enabled(level, "acl")) return;
  constexpr size_t kLimit = 1024;  // bytes of formatted text, with its terminating NUL
  char text[kLimit];
  va_list args;
  va_start(args, fmt);
  const int length = std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  if (length < 0) {
    cohort::log::write(cohort::LogLevel::kError, "acl",
                       fmt::format("aclAppLog from {} ({}:{}): the format '{}' is invalid", func,
                                   file, line, fmt));
    return;
  }
  if (static_cast<size_t>(length) >= kLimit) {
    static constexpr char kMark[] = "...[truncated]";
    std::memcpy(text + kLimit - sizeof kMark, kMark, sizeof kMark);
  }
  cohort::log::write(level, "acl", fmt::format("{} ({}:{}): {}", func, file, line, text));
}

const char* aclrtGetSocName(void) { return cohort::Config::global().socName.c_str(); }

aclError aclGetCannAttributeList(const aclCannAttr** cannAttrList, size_t* num) {
  return apiCallAnyTime("aclGetCannAttributeList", [&]() -> Outcome {
    if (cannAttrList == nullptr) return nullArgument("aclGetCannAttributeList", "cannAttrList");
    if (num == nullptr) return nullArgument("aclGetCannAttributeList", "num");
    *cannAttrList = kSupportedAttributes;
    *num = sizeof kSupportedAttributes / sizeof kSupportedAttributes[0];
    return Status::Ok();
  });
}

aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t* value) {
  return apiCallAnyTime("aclGetCannAttribute", [&]() -> Outcome {
    if (value == nullptr) return nullArgument("aclGetCannAttribute", "value");
    switch (cannAttr) {
      case ACL_CANN_ATTR_INF_NAN:
      case ACL_CANN_ATTR_BF16:
        *value = 1;
        return Status::Ok();
      case ACL_CANN_ATTR_JIT_COMPILE:
        *value = 0;
        return Status::Ok();
      case ACL_CANN_ATTR_UNDEFINED:
        break;
    }
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "aclGetCannAttribute: cannAttr {} is not a CANN attribute "
                             "(ACL_CANN_ATTR_INF_NAN, _BF16 or _JIT_COMPILE: 0..2)",
                             static_cast<int>(cannAttr));
  });
}

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t* value) {
  const char* fn = "aclGetDeviceCapability";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (value == nullptr) return nullArgument(fn, "value");
    int count = 0;
    COHORT_RETURN_IF_ERROR(rt::getDeviceCount(&count));
    if (deviceId >= static_cast<uint32_t>(count)) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: deviceId {} is not a visible device (0..{})", fn, deviceId,
                               count - 1);
    }
    // The emulated device's figures, as aclrtGetDeviceInfo reports them.
    switch (deviceInfo) {
      case ACL_DEVICE_INFO_AI_CORE_NUM:
        *value = cohort::acl::profile::kAiCores;
        return Status::Ok();
      case ACL_DEVICE_INFO_VECTOR_CORE_NUM:
        *value = cohort::acl::profile::kVectorCores;
        return Status::Ok();
      case ACL_DEVICE_INFO_L2_SIZE:
        *value = cohort::acl::profile::kL2CacheBytes;
        return Status::Ok();
      case ACL_DEVICE_INFO_UNDEFINED:
        break;
    }
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: deviceInfo {} is not an aclDeviceInfo (AI_CORE_NUM, "
                             "VECTOR_CORE_NUM or L2_SIZE: 0..2)",
                             fn, static_cast<int>(deviceInfo));
  });
}
