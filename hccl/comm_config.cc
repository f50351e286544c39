#include "hccl/comm_config.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>

#include "collective/selector.h"
#include "common/config.h"
#include "common/error.h"

namespace cohort::hccl {

namespace {

// The first HCCL_COMM_CONFIG_INFO_BYTES bytes, as HcclCommConfigInit writes them.
struct ConfigHeader {
  std::size_t size;
  std::uint32_t magicWord;
  std::uint32_t version;
  std::uint64_t reserved;
};
static_assert(sizeof(ConfigHeader) == HCCL_COMM_CONFIG_INFO_BYTES, "header layout");

#define HCCL_FIELD_END(field) (offsetof(HcclCommConfig, field) + sizeof(HcclCommConfig::field))

// The oldest layout HCCL shipped holds the buffer size, determinism and name.
constexpr std::size_t kMinConfigSize = HCCL_FIELD_END(hcclCommName);

Outcome checkUnsigned(const char* function, std::uint32_t value, std::uint32_t notSet,
                      std::uint32_t low, std::uint32_t high, const char* parameter) {
  if (value == notSet || (value >= low && value <= high)) return Status::Ok();
  const bool sentinel = notSet < low || notSet > high;  // else "not set" is a value in range
  return invalidParameter(
      function, std::to_string(value), parameter,
      fmt::format("an integer in [{}, {}]{}", low, high,
                  sentinel ? fmt::format(", or {:#x} (not set)", notSet) : std::string()));
}

Outcome checkString(const char* function, const char* text, std::size_t capacity,
                    const char* parameter) {
  if (strnlen(text, capacity) < capacity) return Status::Ok();
  return invalidParameter(function, fmt::format("(a string of {} or more bytes)", capacity),
                          parameter,
                          fmt::format("a NUL-terminated string of at most {} bytes", capacity - 1));
}

Outcome checkHeader(const char* function, const HcclCommConfig* config, ConfigHeader* header) {
  std::memcpy(header, config, sizeof(*header));
  if (header->magicWord != HCCL_COMM_CONFIG_MAGIC_WORD) {
    return invalidParameter(function, fmt::format("{:#x}", header->magicWord),
                            "config (magic word)",
                            "0xf0f0f0f0: initialise the config with HcclCommConfigInit");
  }
  if (header->size < kMinConfigSize) {
    return invalidParameter(function, std::to_string(header->size), "config (size)",
                            fmt::format("at least {} bytes", kMinConfigSize));
  }
  return Status::Ok();
}

// Fields added to the layout later: read only when the program's size covers them.
Outcome readLaterFields(const char* function, const HcclCommConfig* c, std::size_t size,
                        CommSettings* out) {
  if (size >= HCCL_FIELD_END(hcclOpExpansionMode)) {
    HCCL_RETURN_IF_FAILED(
        checkUnsigned(function, c->hcclOpExpansionMode, 0, 0, 6, "config.hcclOpExpansionMode"));
  }
  if (size >= HCCL_FIELD_END(hcclRdmaTrafficClass) && c->hcclRdmaTrafficClass % 4 != 0 &&
      c->hcclRdmaTrafficClass != HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET) {
    return invalidParameter(function, std::to_string(c->hcclRdmaTrafficClass),
                            "config.hcclRdmaTrafficClass", "a multiple of 4 in [0, 255]");
  }
  if (size >= HCCL_FIELD_END(hcclRdmaTrafficClass)) {
    HCCL_RETURN_IF_FAILED(checkUnsigned(function, c->hcclRdmaTrafficClass,
                                        HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET, 0, 255,
                                        "config.hcclRdmaTrafficClass"));
  }
  if (size >= HCCL_FIELD_END(hcclRdmaServiceLevel)) {
    HCCL_RETURN_IF_FAILED(checkUnsigned(function, c->hcclRdmaServiceLevel,
                                        HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET, 0, 7,
                                        "config.hcclRdmaServiceLevel"));
  }
  if (size >= HCCL_FIELD_END(hcclExecTimeOut) && c->hcclExecTimeOut < 0 &&
      c->hcclExecTimeOut != HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET) {
    return invalidParameter(function, std::to_string(c->hcclExecTimeOut), "config.hcclExecTimeOut",
                            "an integer in [0, 2147483647] seconds, or -1 (not set)");
  }
  if (size >= HCCL_FIELD_END(hcclAlgo)) {
    HCCL_RETURN_IF_FAILED(
        checkString(function, c->hcclAlgo, HCCL_COMM_ALGO_MAX_LENGTH, "config.hcclAlgo"));
    if (c->hcclAlgo[0] != '\0') {
      Status s = collective::translateHcclAlgo(c->hcclAlgo, &out->algo);
      if (!s.ok()) {
        return invalidParameter(function, fmt::format("\"{}\"", c->hcclAlgo), "config.hcclAlgo",
                                "HCCL_ALGO's syntax (" + s.message() + ")");
      }
    }
  }
  // The retry strings: the variables' syntax, checked as the variables are.
  const struct {
    std::size_t end;
    const char* text;
    std::size_t capacity;
    const char* variable;
    const char* parameter;
    std::string* into;
  } retry[] = {
      {HCCL_FIELD_END(hcclRetryEnable), c->hcclRetryEnable, HCCL_COMM_RETRY_ENABLE_MAX_LENGTH,
       "HCCL_OP_RETRY_ENABLE", "config.hcclRetryEnable", &out->retryEnable},
      {HCCL_FIELD_END(hcclRetryParams), c->hcclRetryParams, HCCL_COMM_RETRY_PARAMS_MAX_LENGTH,
       "HCCL_OP_RETRY_PARAMS", "config.hcclRetryParams", &out->retryParams},
  };
  for (const auto& field : retry) {
    if (size < field.end) continue;
    HCCL_RETURN_IF_FAILED(checkString(function, field.text, field.capacity, field.parameter));
    if (field.text[0] == '\0') continue;
    const Status valid = Config::parse({{field.variable, field.text}}).status();
    if (!valid.ok()) {
      return invalidParameter(function, fmt::format("\"{}\"", field.text), field.parameter,
                              fmt::format("{}'s syntax ({})", field.variable, valid.message()));
    }
    *field.into = field.text;
  }
  if (size >= HCCL_FIELD_END(hcclQos)) {
    HCCL_RETURN_IF_FAILED(
        checkUnsigned(function, c->hcclQos, HCCL_COMM_QOS_CONFIG_NOT_SET, 0, 7, "config.hcclQos"));
  }
  return Status::Ok();
}

}  // namespace

Outcome readCommConfig(const char* function, const HcclCommConfig* config, CommSettings* out) {
  *out = CommSettings();
  if (config == nullptr) return Status::Ok();
  ConfigHeader header;
  HCCL_RETURN_IF_FAILED(checkHeader(function, config, &header));
  HCCL_RETURN_IF_FAILED(checkUnsigned(function, config->hcclBufferSize,
                                      HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET, 1, 0xfffffffe,
                                      "config.hcclBufferSize"));
  HCCL_RETURN_IF_FAILED(checkUnsigned(function, config->hcclDeterministic,
                                      HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET, 0, 2,
                                      "config.hcclDeterministic"));
  HCCL_RETURN_IF_FAILED(
      checkString(function, config->hcclCommName, COMM_NAME_MAX_LENGTH, "config.hcclCommName"));
  out->name = config->hcclCommName;
  return readLaterFields(function, config, header.size, out);
}

Outcome applyCommSettings(const char* function, const CommSettings& settings, Communicator* comm) {
  if (settings.algo.empty()) return Status::Ok();
  Status s = comm->setAlgorithm(settings.algo);
  if (!s.ok()) {
    return makeError(s.code(), "{}: config.hcclAlgo ({}): {}", function, settings.algo,
                     s.message());
  }
  return Status::Ok();
}

}  // namespace cohort::hccl
