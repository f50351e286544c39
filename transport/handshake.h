// The first bytes on every connection, store and data alike: magic, protocol
// and library versions, the job token, and who is calling whom. A peer with a
// wrong magic, token or version is refused with an error naming both sides.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "cohort/status.h"
#include "transport/store.h"

namespace cohort::transport {

/// A random 128-bit job secret shared by the ranks of one job.
struct JobToken {
  std::array<std::uint8_t, 16> bytes{};
  static JobToken random();
  /// From COHORT_JOB_TOKEN text: 32 hex digits, or any other text hashed to 128 bits.
  static JobToken fromText(const std::string& text);
  std::string hex() const;
  bool operator==(const JobToken& o) const { return bytes == o.bytes; }
  bool operator!=(const JobToken& o) const { return bytes != o.bytes; }
};

enum class ChannelKind : std::uint8_t { kStore = 1, kData = 2, kLinkCheck = 3, kReconnect = 4 };

struct Handshake {
  static constexpr std::uint32_t kMagic = 0x43485254;  // "CHRT"
  static constexpr std::size_t kWireSize = 64;

  std::uint32_t magic = kMagic;
  std::uint32_t protocolVersion = 0;
  std::uint32_t libraryVersion = 0;  // major*10000 + minor*100 + patch
  ChannelKind kind = ChannelKind::kData;
  JobToken token;
  std::int32_t fromRank = -1;
  std::int32_t toRank = -1;
  std::int32_t worldSize = 0;
  std::int32_t fromDevice = -1;
  std::uint64_t channel = 0;  // which connection of a peer pair (several sockets)

  /// This library's versions, everything else zero.
  static Handshake local(ChannelKind kind, const JobToken& token);
  void encode(std::uint8_t out[kWireSize]) const;
  /// kConnectionError for bad magic (not a Cohort peer), kVersionMismatch for a
  /// wrong protocol (naming both versions); the token is checked by verify().
  static Status decode(const std::uint8_t in[kWireSize], Handshake* out);
  /// Checks a decoded peer handshake against what this side expects; `where`
  /// names the address for the error text.
  Status verify(const Handshake& expected, const std::string& where) const;
};

/// "0.1.0" from a libraryVersion number.
std::string libraryVersionString(std::uint32_t v);

}  // namespace cohort::transport
