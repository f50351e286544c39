// The root info blob and its text form (no sockets: the fuzzer links this).
#include "transport/root_info.h"

#include <boost/endian/conversion.hpp>
#include <cctype>
#include <cstring>

#include "cohort/version.h"
#include "common/error.h"

namespace cohort::transport {

namespace {

namespace endian = boost::endian;

constexpr std::uint32_t kRootMagic = 0x49525443;  // "CTRI"
constexpr std::size_t kHostOffset = 28;
constexpr std::size_t kMaxHost = 255;

bool validHost(const std::string& host) {
  if (host.empty() || host.size() > kMaxHost) return false;
  for (unsigned char c : host) {
    if (!std::isalnum(c) && std::strchr(".:-_%", c) == nullptr) return false;
  }
  return true;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The text carries the job token, a secret: errors show only what follows '@'.
std::string redacted(const std::string& text) {
  const std::size_t at = text.rfind('@');
  if (at != std::string::npos) return "..." + text.substr(at);
  return text.size() <= 8 ? text : text.substr(0, 8) + "...";
}

Status textError(const std::string& text, const char* what) {
  return makeError(ErrorCode::kInvalidArgument,
                   "root info text '{}' ({} chars): {} (expected cohort{}:<32 hex digits>@<host>:"
                   "<port>)",
                   redacted(text), text.size(), what, COHORT_PROTOCOL_VERSION);
}

// "<host>:<port>" or "[<ipv6>]:<port>" into r.
Status parseHostPort(const std::string& text, const std::string& where, RootInfo* r) {
  const std::size_t colon = where.rfind(':');
  if (colon == std::string::npos) return textError(text, "no ':<port>' after the host");
  std::string host = where.substr(0, colon);
  const std::string port = where.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (!validHost(host)) return textError(text, "bad host");
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) == 0 ||
      std::stoul(port) > 65535) {
    return textError(text, "bad port (must be 1..65535)");
  }
  r->host = host;
  r->port = static_cast<std::uint16_t>(std::stoul(port));
  return Status::Ok();
}

}  // namespace

void RootInfo::toBytes(std::uint8_t out[kSize]) const {
  COHORT_CHECK(validHost(host));
  std::memset(out, 0, kSize);
  endian::store_little_u32(out, kRootMagic);
  endian::store_little_u32(out + 4, protocolVersion);
  std::memcpy(out + 8, token.bytes.data(), token.bytes.size());
  endian::store_little_u16(out + 24, port);
  endian::store_little_u16(out + 26, static_cast<std::uint16_t>(host.size()));
  std::memcpy(out + kHostOffset, host.data(), host.size());
}

Status RootInfo::fromBytes(const std::uint8_t in[kSize], RootInfo* out) {
  const std::uint32_t magic = endian::load_little_u32(in);
  if (magic != kRootMagic) {
    return makeError(ErrorCode::kInvalidArgument,
                     "root info: bad magic 0x{:08x} (expected 0x{:08x}): not a Cohort root info",
                     magic, kRootMagic);
  }
  RootInfo r;
  r.protocolVersion = endian::load_little_u32(in + 4);
  if (r.protocolVersion != COHORT_PROTOCOL_VERSION) {
    return makeError(ErrorCode::kVersionMismatch,
                     "root info: made with protocol version {}, this library speaks protocol "
                     "version {}",
                     r.protocolVersion, COHORT_PROTOCOL_VERSION);
  }
  std::memcpy(r.token.bytes.data(), in + 8, r.token.bytes.size());
  r.port = endian::load_little_u16(in + 24);
  const std::size_t hostLen = endian::load_little_u16(in + 26);
  if (hostLen == 0 || hostLen > kMaxHost) {
    return makeError(ErrorCode::kInvalidArgument, "root info: host length {} (must be 1..{})",
                     hostLen, kMaxHost);
  }
  r.host.assign(reinterpret_cast<const char*>(in + kHostOffset), hostLen);
  if (!validHost(r.host) || r.port == 0) {
    return makeError(ErrorCode::kInvalidArgument, "root info: bad address (host '{}', port {})",
                     r.host, r.port);
  }
  for (std::size_t i = kHostOffset + hostLen; i < kSize; ++i) {
    if (in[i] != 0) {
      return makeError(ErrorCode::kInvalidArgument,
                       "root info: nonzero byte 0x{:02x} in the padding at offset {}", in[i], i);
    }
  }
  *out = std::move(r);
  return Status::Ok();
}

std::string RootInfo::toText() const {
  const bool v6 = host.find(':') != std::string::npos;
  return fmt::format("cohort{}:{}@{}{}{}:{}", protocolVersion, token.hex(), v6 ? "[" : "", host,
                     v6 ? "]" : "", port);
}

Status RootInfo::fromText(const std::string& text, RootInfo* out) {
  if (text.rfind("cohort", 0) != 0) return textError(text, "does not start with 'cohort'");
  const std::size_t colon = text.find(':');
  const std::string version = text.substr(6, colon == std::string::npos ? 0 : colon - 6);
  if (version.empty() || version.size() > 9 ||
      version.find_first_not_of("0123456789") != std::string::npos) {
    return textError(text, "no protocol version after 'cohort'");
  }
  RootInfo r;
  r.protocolVersion = static_cast<std::uint32_t>(std::stoul(version));
  if (r.protocolVersion != COHORT_PROTOCOL_VERSION) {
    return makeError(ErrorCode::kVersionMismatch,
                     "root info text '{}': made with protocol version {}, this library speaks "
                     "protocol version {}",
                     redacted(text), r.protocolVersion, COHORT_PROTOCOL_VERSION);
  }
  const std::size_t hexAt = colon + 1;
  if (text.size() < hexAt + 33 || text[hexAt + 32] != '@') {
    return textError(text, "no 32-hex-digit token followed by '@'");
  }
  for (std::size_t i = 0; i < 16; ++i) {
    const int hi = hexDigit(text[hexAt + 2 * i]);
    const int lo = hexDigit(text[hexAt + 2 * i + 1]);
    if (hi < 0 || lo < 0) return textError(text, "the token is not hexadecimal");
    r.token.bytes[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  COHORT_RETURN_IF_ERROR(parseHostPort(text, text.substr(hexAt + 33), &r));
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace cohort::transport
