// The wire format of a TCP data connection. Socket 0 carries a 24-byte frame
// header before every message (and error frames); the payload of a message is
// cut into chunks, chunk j travelling on socket j % sockets, so both ends derive
// the same layout from the byte count alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cohort/status.h"

namespace cohort::transport::tcp {

enum class FrameType : std::uint16_t { kData = 1, kError = 2 };

struct FrameHeader {
  static constexpr std::size_t kWireSize = 24;
  static constexpr std::uint32_t kMagic = 0x50435443;  // "CTCP"
  /// Longest error text an error frame may carry.
  static constexpr std::size_t kMaxErrorText = 1024;

  FrameType type = FrameType::kData;
  std::uint16_t code = 0;   // ErrorCode of an error frame
  std::uint64_t seq = 0;    // message number, from 1 (data frames)
  std::uint64_t bytes = 0;  // payload bytes; text bytes for an error frame

  void encode(std::uint8_t out[kWireSize]) const;
  /// kConnectionError on a bad magic or type (a corrupt stream).
  static Status decode(const std::uint8_t in[kWireSize], FrameHeader* out);
};

/// One piece of a message's payload and the socket it travels on.
struct Chunk {
  std::size_t offset = 0;
  std::size_t bytes = 0;
  int socket = 0;
};

/// Calls f(chunk) for each chunk of a `bytes`-long message over `sockets`
/// sockets, in order (none for 0 bytes). Allocates nothing: it runs per message.
template <typename F>
void forEachChunk(std::size_t bytes, std::size_t chunkBytes, int sockets, F&& f) {
  int socket = 0;
  for (std::size_t offset = 0; offset < bytes; offset += chunkBytes) {
    f(Chunk{offset, bytes - offset < chunkBytes ? bytes - offset : chunkBytes, socket});
    socket = socket + 1 == sockets ? 0 : socket + 1;
  }
}

/// The same as a list (tests, tools).
std::vector<Chunk> planChunks(std::size_t bytes, std::size_t chunkBytes, int sockets);

}  // namespace cohort::transport::tcp
