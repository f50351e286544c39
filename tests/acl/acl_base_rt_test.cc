// The base facilities of acl_base_rt.h: fp16 conversions against a reference for
// every fp16 and for the rounding cases, data type sizes, data buffers, CANN
// attributes, device capabilities, the SoC name, aclAppLog. All but the data
// buffers on device memory work before aclInit, which the plain TESTs check.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "acl_test_util.h"
#include "common/config.h"
#include "common/log.h"

namespace cohort::acltest {
namespace {

std::uint32_t bitsOf(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

float floatOf(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The reference reading of an fp16: sign * 2^(e-15) * 1.m (e > 0, e = 31 included,
// which CANN reads as a finite binade) or sign * 2^-14 * 0.m, in double arithmetic.
double referenceValue(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// The reference conversion: the nearest of all finite fp16 values by search, ties
// to the even bit pattern, saturated at 65504 (NaN and inf too), sign kept.
class ReferenceRounding {
 public:
  ReferenceRounding() {
    for (std::uint32_t h = 0; h <= 0x7bff; ++h) values_.push_back(referenceValue(h));
  }
  std::uint16_t operator()(float x) const {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double magnitude = std::fabs(static_cast<double>(x));
    if (std::isnan(x) || magnitude >= 65504.0) return sign | 0x7bff;
    // values_[i] <= magnitude < values_[i + 1]
    const auto upper = std::upper_bound(values_.begin(), values_.end(), magnitude);
    const std::size_t i = static_cast<std::size_t>(upper - values_.begin()) - 1;
    const double below = magnitude - values_[i];
    const double above = values_[i + 1] - magnitude;
    std::size_t chosen = i;
    if (above < below || (above == below && (i & 1) != 0)) chosen = i + 1;
    return static_cast<std::uint16_t>(sign | chosen);
  }
  const std::vector<double>& values() const { return values_; }

 private:
  std::vector<double> values_;  // of patterns 0 .. 0x7BFF, increasing
};

TEST(AclBaseRt, Fp16ToFloatIsExactForEveryPattern) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const float converted = aclFloat16ToFloat(static_cast<aclFloat16>(h));
    const float expected = static_cast<float>(referenceValue(static_cast<std::uint16_t>(h)));
    ASSERT_EQ(bitsOf(converted), bitsOf(expected)) << std::hex << "fp16 0x" << h;
  }
  EXPECT_TRUE(std::signbit(aclFloat16ToFloat(0x8000)));            // -0
  EXPECT_EQ(aclFloat16ToFloat(0x0001), std::ldexp(1.0f, -24));     // the smallest denormal
  EXPECT_EQ(aclFloat16ToFloat(0x03ff), std::ldexp(1023.0f, -24));  // the largest denormal
  EXPECT_EQ(aclFloat16ToFloat(0x7bff), 65504.0f);
  // The all-ones exponent is an ordinary binade, as CANN documents it.
  EXPECT_EQ(aclFloat16ToFloat(0x7c00), 65536.0f);
  EXPECT_EQ(aclFloat16ToFloat(0xfc00), -65536.0f);
  EXPECT_EQ(aclFloat16ToFloat(0x7e00), 98304.0f);
  EXPECT_EQ(aclFloat16ToFloat(0x7fff), 131008.0f);
}

TEST(AclBaseRt, FloatToFp16RoundTripsEveryFiniteFp16) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const float value = aclFloat16ToFloat(static_cast<aclFloat16>(h));
    const std::uint16_t back = aclFloatToFloat16(value);
    if ((h & 0x7c00) != 0x7c00) {
      ASSERT_EQ(back, h) << std::hex << "fp16 0x" << h;
    } else {  // 65536 and up saturate
      ASSERT_EQ(back, (h & 0x8000) | 0x7bff) << std::hex << "fp16 0x" << h;
    }
  }
}

TEST(AclBaseRt, FloatToFp16RoundsToNearestEvenLikeTheReference) {
  const ReferenceRounding reference;
  std::vector<float> inputs;
  const std::vector<double>& values = reference.values();
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    // Every tie (exact in float: 12 significant bits at most) and its neighbours.
    const float tie = static_cast<float>((values[i] + values[i + 1]) / 2);
    ASSERT_EQ(static_cast<double>(tie), (values[i] + values[i + 1]) / 2);
    for (float f : {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 1e9f)}) {
      inputs.push_back(f);
      inputs.push_back(-f);
    }
  }
  std::mt19937 random(12345);
  for (int i = 0; i < 2000000; ++i) inputs.push_back(floatOf(random()));  // every exponent
  for (float f : inputs) {
    ASSERT_EQ(aclFloatToFloat16(f), reference(f))
        << "float " << f << " (bits 0x" << std::hex << bitsOf(f) << ")";
  }
}

TEST(AclBaseRt, FloatToFp16SelectedValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const struct {
    float value;
    std::uint16_t expected;
  } cases[] = {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.1f, 0x2e66},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},                          // a tie: to the even 1.0
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3c02},                      // a tie: to the even 0x3C02
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3c01},  // just above a tie
      {2047.5f, 0x6800},                   // a tie between 2047 and 2048: to 2048
      {std::ldexp(1.0f, -14), 0x0400},     // the smallest normal
      {std::ldexp(1023.5f, -24), 0x0400},  // a tie between denormal 0x3FF and 0x400
      {std::ldexp(1.0f, -24), 0x0001},     // the smallest denormal
      {std::ldexp(1.0f, -25), 0x0000},     // a tie between 0 and 2^-24: to 0
      {std::ldexp(1.5f, -25), 0x0001},     // above the tie
      {std::ldexp(3.0f, -25), 0x0002},     // a tie between 1 and 2 units: to 2
      {std::ldexp(5.0f, -25), 0x0002},     // a tie between 2 and 3 units: to 2
      {-std::ldexp(1.0f, -24), 0x8001},
      {1e-8f, 0x0000},
      {-1e-8f, 0x8000},
      {1e-40f, 0x0000},  // a float denormal
      {65504.0f, 0x7bff},
      {65519.0f, 0x7bff},
      {65520.0f, 0x7bff},  // IEEE rounds it to inf; CANN saturates
      {1e9f, 0x7bff},
      {-1e9f, 0xfbff},
      {inf, 0x7bff},
      {-inf, 0xfbff},
      {nan, 0x7bff},
      {-nan, 0xfbff},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(aclFloatToFloat16(c.value), c.expected)
        << "float " << c.value << " (bits 0x" << std::hex << bitsOf(c.value) << ")";
  }
}

TEST(AclBaseRt, DataTypeSizes) {
  const struct {
    aclDataType type;
    size_t size;
  } cases[] = {
      {ACL_DT_UNDEFINED, 0}, {ACL_FLOAT, 4},       {ACL_FLOAT16, 2},       {ACL_INT8, 1},
      {ACL_INT32, 4},        {ACL_UINT8, 1},       {ACL_INT16, 2},         {ACL_UINT16, 2},
      {ACL_UINT32, 4},       {ACL_INT64, 8},       {ACL_UINT64, 8},        {ACL_DOUBLE, 8},
      {ACL_BOOL, 1},         {ACL_STRING, 0},      {ACL_COMPLEX64, 8},     {ACL_COMPLEX128, 16},
      {ACL_BF16, 2},         {ACL_INT4, 1},        {ACL_UINT1, 1},         {ACL_COMPLEX32, 4},
      {ACL_HIFLOAT8, 1},     {ACL_FLOAT8_E5M2, 1}, {ACL_FLOAT8_E4M3FN, 1}, {ACL_FLOAT8_E8M0, 1},
      {ACL_FLOAT6_E3M2, 1},  {ACL_FLOAT6_E2M3, 1}, {ACL_FLOAT4_E2M1, 1},   {ACL_FLOAT4_E1M2, 1},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(aclDataTypeSize(c.type), c.size) << "aclDataType " << static_cast<int>(c.type);
  }
  // Values that are no aclDataType: 0, and a message saying so.
  for (int value : {5, 14, 15, 28, 42, -2, 1000}) {
    aclGetRecentErrMsg();
    EXPECT_EQ(aclDataTypeSize(static_cast<aclDataType>(value)), 0u) << value;
    const char* message = aclGetRecentErrMsg();
    ASSERT_NE(message, nullptr);
    EXPECT_NE(std::string(message).find("is not an aclDataType"), std::string::npos) << message;
  }
}

TEST(AclBaseRt, DataBuffersBeforeInit) {
  char bytes[64];
  aclDataBuffer* buffer = aclCreateDataBuffer(bytes, sizeof bytes);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(aclGetDataBufferAddr(buffer), bytes);
  EXPECT_EQ(aclGetDataBufferSizeV2(buffer), sizeof bytes);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(aclGetDataBufferSize(buffer), sizeof bytes);
#pragma GCC diagnostic pop
  ASSERT_ACL_OK(aclUpdateDataBuffer(buffer, bytes + 8, 16));
  EXPECT_EQ(aclGetDataBufferAddr(buffer), bytes + 8);
  EXPECT_EQ(aclGetDataBufferSizeV2(buffer), 16u);
  // A size beyond 32 bits: V2 tells it, the deprecated call saturates.
  ASSERT_ACL_OK(aclUpdateDataBuffer(buffer, bytes, std::size_t{5} << 32));
  EXPECT_EQ(aclGetDataBufferSizeV2(buffer), std::size_t{5} << 32);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(aclGetDataBufferSize(buffer), UINT32_MAX);
#pragma GCC diagnostic pop
  ASSERT_ACL_OK(aclDestroyDataBuffer(buffer));

  aclDataBuffer* empty = aclCreateDataBuffer(nullptr, 0);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(aclGetDataBufferAddr(empty), nullptr);
  EXPECT_EQ(aclGetDataBufferSizeV2(empty), 0u);
  ASSERT_ACL_OK(aclDestroyDataBuffer(empty));
}

TEST(AclBaseRt, DataBufferErrors) {
  aclGetRecentErrMsg();
  EXPECT_EQ(aclCreateDataBuffer(nullptr, 5), nullptr);
  const char* message = aclGetRecentErrMsg();
  ASSERT_NE(message, nullptr);
  EXPECT_NE(std::string(message).find("data is null but size is 5"), std::string::npos);

  char bytes[8];
  aclDataBuffer* buffer = aclCreateDataBuffer(bytes, sizeof bytes);
  ASSERT_NE(buffer, nullptr);
  ASSERT_ACL_OK(aclDestroyDataBuffer(buffer));
  EXPECT_ACL_ERROR(aclDestroyDataBuffer(buffer), ACL_ERROR_INVALID_PARAM,
                   "is not a live aclDataBuffer");
  EXPECT_ACL_ERROR(aclUpdateDataBuffer(buffer, bytes, 1), ACL_ERROR_INVALID_PARAM,
                   "is not a live aclDataBuffer");
  EXPECT_EQ(aclGetDataBufferAddr(buffer), nullptr);
  EXPECT_EQ(aclGetDataBufferSizeV2(buffer), 0u);
  EXPECT_ACL_ERROR(aclDestroyDataBuffer(nullptr), ACL_ERROR_INVALID_PARAM, "dataBuffer is null");
  EXPECT_ACL_ERROR(aclUpdateDataBuffer(nullptr, bytes, 1), ACL_ERROR_INVALID_PARAM,
                   "dataBuffer is null");
  EXPECT_EQ(aclGetDataBufferAddr(nullptr), nullptr);
  EXPECT_EQ(aclGetDataBufferSizeV2(nullptr), 0u);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(aclGetDataBufferSize(nullptr), 0u);
#pragma GCC diagnostic pop
  aclGetRecentErrMsg();
}

class AclBaseRtTest : public AclTest {};

TEST_F(AclBaseRtTest, DataBufferDescribesDeviceMemory) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  void* device = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&device, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  aclDataBuffer* buffer = aclCreateDataBuffer(device, 4096);
  ASSERT_NE(buffer, nullptr);
  const std::vector<char> in(4096, 'd');
  std::vector<char> out(4096, 0);
  ASSERT_ACL_OK(aclrtMemcpy(aclGetDataBufferAddr(buffer), aclGetDataBufferSizeV2(buffer), in.data(),
                            in.size(), ACL_MEMCPY_HOST_TO_DEVICE));
  ASSERT_ACL_OK(aclrtMemcpy(out.data(), out.size(), device, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_EQ(in, out);
  ASSERT_ACL_OK(aclDestroyDataBuffer(buffer));
  ASSERT_ACL_OK(aclrtFree(device));  // the memory stayed the program's
}

TEST(AclBaseRt, CannAttributes) {
  const aclCannAttr* list = nullptr;
  size_t num = 0;
  ASSERT_ACL_OK(aclGetCannAttributeList(&list, &num));
  ASSERT_EQ(num, 2u);
  EXPECT_EQ(list[0], ACL_CANN_ATTR_INF_NAN);
  EXPECT_EQ(list[1], ACL_CANN_ATTR_BF16);
  for (size_t i = 0; i < num; ++i) {
    int32_t value = -1;
    ASSERT_ACL_OK(aclGetCannAttribute(list[i], &value));
    EXPECT_EQ(value, 1) << static_cast<int>(list[i]);
  }
  int32_t value = -1;
  ASSERT_ACL_OK(aclGetCannAttribute(ACL_CANN_ATTR_JIT_COMPILE, &value));
  EXPECT_EQ(value, 0);  // no operator compiler
  EXPECT_ACL_ERROR(aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &value), ACL_ERROR_INVALID_PARAM,
                   "cannAttr -1 is not a CANN attribute");
  EXPECT_ACL_ERROR(aclGetCannAttribute(static_cast<aclCannAttr>(3), &value),
                   ACL_ERROR_INVALID_PARAM, "cannAttr 3 is not a CANN attribute");
  EXPECT_ACL_ERROR(aclGetCannAttribute(ACL_CANN_ATTR_BF16, nullptr), ACL_ERROR_INVALID_PARAM,
                   "value is null");
  EXPECT_ACL_ERROR(aclGetCannAttributeList(nullptr, &num), ACL_ERROR_INVALID_PARAM,
                   "cannAttrList is null");
  EXPECT_ACL_ERROR(aclGetCannAttributeList(&list, nullptr), ACL_ERROR_INVALID_PARAM, "num is null");
}

TEST(AclBaseRt, DeviceCapabilitiesOfTheDefaultSoc) {
  // The test environment leaves COHORT_SOC_NAME unset: Ascend910B4, 4 devices.
  for (uint32_t device = 0; device < 4; ++device) {
    int64_t value = -1;
    ASSERT_ACL_OK(aclGetDeviceCapability(device, ACL_DEVICE_INFO_AI_CORE_NUM, &value));
    EXPECT_EQ(value, 20);
    ASSERT_ACL_OK(aclGetDeviceCapability(device, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &value));
    EXPECT_EQ(value, 40);
    ASSERT_ACL_OK(aclGetDeviceCapability(device, ACL_DEVICE_INFO_L2_SIZE, &value));
    EXPECT_EQ(value, 96ll << 20);
  }
  int64_t value = -1;
  EXPECT_ACL_ERROR(aclGetDeviceCapability(4, ACL_DEVICE_INFO_L2_SIZE, &value),
                   ACL_ERROR_INVALID_PARAM, "deviceId 4 is not a visible device (0..3)");
  EXPECT_ACL_ERROR(aclGetDeviceCapability(0, ACL_DEVICE_INFO_UNDEFINED, &value),
                   ACL_ERROR_INVALID_PARAM, "deviceInfo -1 is not an aclDeviceInfo");
  EXPECT_ACL_ERROR(aclGetDeviceCapability(0, static_cast<aclDeviceInfo>(3), &value),
                   ACL_ERROR_INVALID_PARAM, "deviceInfo 3 is not an aclDeviceInfo");
  EXPECT_ACL_ERROR(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, nullptr),
                   ACL_ERROR_INVALID_PARAM, "value is null");
}

TEST(AclBaseRt, SocNameBeforeAndAfterInit) {
  const char* before = aclrtGetSocName();
  ASSERT_NE(before, nullptr);
  EXPECT_STREQ(before, "Ascend910B4");
  ASSERT_ACL_OK(aclInit(nullptr));
  EXPECT_EQ(aclrtGetSocName(), before);  // the same, stable text
  ASSERT_ACL_OK(aclFinalize());
}

TEST(AclBaseRt, SocNameVariableIsValidated) {
  EXPECT_EQ(Config::parse({}).socName, "Ascend910B4");
  const Config b2 = Config::parse({{"COHORT_SOC_NAME", "Ascend910B2"}});
  EXPECT_TRUE(b2.errors.empty());
  EXPECT_EQ(b2.socName, "Ascend910B2");
  EXPECT_EQ(Config::parse({{"COHORT_SOC_NAME", "Ascend910_9391"}}).socName, "Ascend910_9391");
  EXPECT_EQ(Config::parse({{"COHORT_SOC_NAME", "Ascend910B4-1"}}).socName, "Ascend910B4-1");
  for (const char* bad : {"", "Ascend 910", "Ascend910B4;rm", "\xe6\x98\x87\xe8\x85\xbe"}) {
    const Config config = Config::parse({{"COHORT_SOC_NAME", bad}});
    ASSERT_EQ(config.errors.size(), 1u) << bad;
    EXPECT_NE(config.errors[0].find("COHORT_SOC_NAME"), std::string::npos);
    EXPECT_EQ(config.socName, "Ascend910B4");  // the default stands
  }
  EXPECT_FALSE(Config::parse({{"COHORT_SOC_NAME", std::string(64, 'A')}}).errors.empty());
  EXPECT_TRUE(Config::parse({{"COHORT_SOC_NAME", std::string(63, 'A')}}).errors.empty());
  EXPECT_NE(Config::parse({}).describe().find("COHORT_SOC_NAME=Ascend910B4\n"), std::string::npos);
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AclBaseRt, AppLogWritesIntoCohortsLog) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("cohort_acl_applog_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  log::configure(Config::parse({{"COHORT_LOG_DIR", dir.string()}, {"COHORT_LOG_LEVEL", "info"}}));
  const uint32_t modelId = 7;
  ACL_APP_LOG(ACL_INFO, "load model success, modelId is %u", modelId);
  aclAppLog(ACL_WARNING, "fn", "file.cc", 12, "careful: %s", "warned");
  aclAppLog(ACL_ERROR, "fn", "file.cc", 13, "%d errors", 3);
  aclAppLog(ACL_DEBUG, "fn", "file.cc", 14, "below the level");
  aclAppLog(static_cast<aclLogLevel>(9), "fn", "file.cc", 15, "an unknown level");
  aclAppLog(ACL_ERROR, nullptr, "file.cc", 16, "no function");
  aclAppLog(ACL_ERROR, "fn", nullptr, 17, "no file");
  aclAppLog(ACL_ERROR, "fn", "file.cc", 18, nullptr);
  const std::string longText(3000, 'x');
  aclAppLog(ACL_ERROR, "fn", "file.cc", 19, "%s", longText.c_str());
  log::configure(Config::global());  // flushes and closes the file
  const std::string text = readFile(dir / ("cohort_" + std::to_string(::getpid()) + ".log"));
  // The line that holds `needle` (empty if none).
  auto line = [&](const std::string& needle) {
    const std::size_t at = text.find(needle);
    if (at == std::string::npos) return std::string();
    const std::size_t start =
        text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
    return text.substr(start, text.find('\n', at) - start);
  };
  const std::string loaded = line("load model success, modelId is 7");
  EXPECT_NE(loaded.find("[info] "), std::string::npos) << text;
  EXPECT_NE(loaded.find("[acl] TestBody ("), std::string::npos) << loaded;
  EXPECT_NE(loaded.find("acl_base_rt_test.cc:"), std::string::npos) << loaded;
  EXPECT_NE(line("[acl] fn (file.cc:12): careful: warned").find("[warning] "), std::string::npos)
      << text;
  EXPECT_NE(line("[acl] fn (file.cc:13): 3 errors").find("[error] "), std::string::npos) << text;
  EXPECT_EQ(text.find("below the level"), std::string::npos) << text;
  EXPECT_NE(line("[acl] fn (file.cc:15): an unknown level").find("[error] "), std::string::npos)
      << text;
  EXPECT_EQ(text.find("no function"), std::string::npos);
  EXPECT_EQ(text.find("no file"), std::string::npos);
  EXPECT_EQ(text.find("file.cc:18"), std::string::npos);
  // 1023 bytes of text: 1009 of the message and the 14 of the mark.
  const std::string cut = "fn (file.cc:19): " + std::string(1009, 'x') + "...[truncated]";
  EXPECT_NE(line("fn (file.cc:19): ").find(cut), std::string::npos) << line("file.cc:19");
  EXPECT_EQ(line("fn (file.cc:19): ").size(), line("fn (file.cc:19): ").find(cut) + cut.size());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cohort::acltest
