// Little-endian integers, the byte order of every Cohort wire format
// (handshakes, setup blobs, frames, rejoin and ack records, store values).
#pragma once

#include <cstdint>
#include <vector>

namespace cohort::transport {

/// Writes the low `bytes` bytes of `v` at `p`, least significant first.
inline void storeLe(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

/// Appends the low `bytes` bytes of `v` to `out`, least significant first.
inline void appendLe(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// Reads `bytes` bytes at `p`, least significant first.
inline std::uint64_t loadLe(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace cohort::transport
