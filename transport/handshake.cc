#include "transport/handshake.h"

#include <fmt/format.h>

#include <cstring>
#include <random>

#include "cohort/version.h"
#include "common/error.h"
#include "common/hash.h"
#include "transport/little_endian.h"

namespace cohort::transport {

namespace {

void put32(std::uint8_t* p, std::uint32_t v) { storeLe(p, v, 4); }
std::uint32_t get32(const std::uint8_t* p) { return static_cast<std::uint32_t>(loadLe(p, 4)); }
void put64(std::uint8_t* p, std::uint64_t v) { storeLe(p, v, 8); }
std::uint64_t get64(const std::uint8_t* p) { return loadLe(p, 8); }

constexpr std::uint32_t kLibraryVersion =
    COHORT_VERSION_MAJOR * 10000 + COHORT_VERSION_MINOR * 100 + COHORT_VERSION_PATCH;

}  // namespace

JobToken JobToken::random() {
  std::random_device rd;
  JobToken t;
  for (auto& b : t.bytes) b = static_cast<std::uint8_t>(rd());
  return t;
}

JobToken JobToken::fromText(const std::string& text) {
  JobToken t;
  bool hex = text.size() == 32;
  for (std::size_t i = 0; hex && i < 16; ++i) {
    unsigned v = 0;
    hex = std::sscanf(text.substr(2 * i, 2).c_str(), "%2x", &v) == 1 &&
          std::isxdigit(static_cast<unsigned char>(text[2 * i])) &&
          std::isxdigit(static_cast<unsigned char>(text[2 * i + 1]));
    t.bytes[i] = static_cast<std::uint8_t>(v);
  }
  if (hex) return t;
  put64(t.bytes.data(), fnv1a(text));
  put64(t.bytes.data() + 8, fnv1a(text, 0x84222325cbf29ce4ull));
  return t;
}

std::string JobToken::hex() const {
  std::string out;
  for (auto b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

std::string libraryVersionString(std::uint32_t v) {
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

Handshake Handshake::local(ChannelKind kind, const JobToken& token) {
  Handshake h;
  h.protocolVersion = COHORT_PROTOCOL_VERSION;
  h.libraryVersion = kLibraryVersion;
  h.kind = kind;
  h.token = token;
  return h;
}

void Handshake::encode(std::uint8_t out[kWireSize]) const {
  std::memset(out, 0, kWireSize);
  put32(out, magic);
  put32(out + 4, protocolVersion);
  put32(out + 8, libraryVersion);
  out[12] = static_cast<std::uint8_t>(kind);
  std::memcpy(out + 16, token.bytes.data(), 16);
  put32(out + 32, static_cast<std::uint32_t>(fromRank));
  put32(out + 36, static_cast<std::uint32_t>(toRank));
  put32(out + 40, static_cast<std::uint32_t>(worldSize));
  put32(out + 44, static_cast<std::uint32_t>(fromDevice));
  put64(out + 48, channel);
}

Status Handshake::decode(const std::uint8_t in[kWireSize], Handshake* out) {
  Handshake h;
  h.magic = get32(in);
  if (h.magic != kMagic) {
    return makeError(ErrorCode::kConnectionError,
                     "handshake: bad magic 0x{:08x} (not a Cohort peer)", h.magic);
  }
  h.protocolVersion = get32(in + 4);
  h.libraryVersion = get32(in + 8);
  if (h.protocolVersion != COHORT_PROTOCOL_VERSION) {
    return makeError(ErrorCode::kVersionMismatch,
                     "handshake: peer speaks protocol {} (Cohort {}), this rank speaks protocol "
                     "{} (Cohort {})", h.protocolVersion, libraryVersionString(h.libraryVersion),
                     COHORT_PROTOCOL_VERSION, libraryVersionString(kLibraryVersion));
  }
  h.kind = static_cast<ChannelKind>(in[12]);
  std::memcpy(h.token.bytes.data(), in + 16, 16);
  h.fromRank = static_cast<std::int32_t>(get32(in + 32));
  h.toRank = static_cast<std::int32_t>(get32(in + 36));
  h.worldSize = static_cast<std::int32_t>(get32(in + 40));
  h.fromDevice = static_cast<std::int32_t>(get32(in + 44));
  h.channel = get64(in + 48);
  *out = h;
  return Status::Ok();
}

Status Handshake::verify(const Handshake& expected, const std::string& where) const {
  if (kind != expected.kind) {
    return makeError(ErrorCode::kConnectionError, "handshake from {}: channel kind {} where {} "
                     "was expected", where, static_cast<int>(kind), static_cast<int>(expected.kind));
  }
  if (token != expected.token) {
    return makeError(ErrorCode::kConnectionError,
                     "handshake from {} (rank {}): token mismatch: the peer belongs to another "
                     "job (COHORT_JOB_TOKEN / root info differ)", where, fromRank);
  }
  if (expected.worldSize > 0 && worldSize != expected.worldSize) {
    return makeError(ErrorCode::kMismatch, "handshake from {} (rank {}): world size {} vs {}",
                     where, fromRank, worldSize, expected.worldSize);
  }
  if (expected.toRank >= 0 && toRank != expected.toRank) {
    return makeError(ErrorCode::kConnectionError,
                     "handshake from {} (rank {}): addressed to rank {}, this is rank {}", where,
                     fromRank, toRank, expected.toRank);
  }
  return Status::Ok();
}

}  // namespace cohort::transport
