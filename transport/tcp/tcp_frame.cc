#include "transport/tcp/tcp_frame.h"

#include "common/error.h"
#include "transport/little_endian.h"

namespace cohort::transport::tcp {

namespace {

template <typename T>
void put(std::uint8_t* p, T v) {
  storeLe(p, v, sizeof(T));
}

template <typename T>
T get(const std::uint8_t* p) {
  return static_cast<T>(loadLe(p, sizeof(T)));
}

}  // namespace

void FrameHeader::encode(std::uint8_t out[kWireSize]) const {
  put<std::uint32_t>(out, kMagic);
  put<std::uint16_t>(out + 4, static_cast<std::uint16_t>(type));
  put<std::uint16_t>(out + 6, code);
  put<std::uint64_t>(out + 8, seq);
  put<std::uint64_t>(out + 16, bytes);
}

Status FrameHeader::decode(const std::uint8_t in[kWireSize], FrameHeader* out) {
  const auto magic = get<std::uint32_t>(in);
  if (magic != kMagic) {
    return makeError(ErrorCode::kConnectionError,
                     "corrupt stream: frame magic 0x{:08x} where 0x{:08x} was expected", magic,
                     kMagic);
  }
  const auto type = get<std::uint16_t>(in + 4);
  if (type != static_cast<std::uint16_t>(FrameType::kData) &&
      type != static_cast<std::uint16_t>(FrameType::kError)) {
    return makeError(ErrorCode::kConnectionError, "corrupt stream: unknown frame type {}", type);
  }
  out->type = static_cast<FrameType>(type);
  out->code = get<std::uint16_t>(in + 6);
  out->seq = get<std::uint64_t>(in + 8);
  out->bytes = get<std::uint64_t>(in + 16);
  return Status::Ok();
}

std::vector<Chunk> planChunks(std::size_t bytes, std::size_t chunkBytes, int sockets) {
  std::vector<Chunk> chunks;
  forEachChunk(bytes, chunkBytes, sockets, [&](const Chunk& c) { chunks.push_back(c); });
  return chunks;
}

}  // namespace cohort::transport::tcp
