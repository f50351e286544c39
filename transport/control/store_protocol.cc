#include "transport/control/store_protocol.h"

#include <boost/endian/conversion.hpp>
#include <cstring>

#include "common/error.h"

namespace cohort::transport::control {

namespace endian = boost::endian;

const char* opName(Op op) {
  switch (op) {
    case Op::kHello:
      return "hello";
    case Op::kSet:
      return "set";
    case Op::kGet:
      return "get";
    case Op::kWait:
      return "wait";
    case Op::kAdd:
      return "add";
    case Op::kCheck:
      return "check";
  }
  return "unknown";
}

void FrameHeader::encode(std::uint8_t out[kFrameHeaderSize]) const {
  endian::store_little_u32(out, magic);
  out[4] = static_cast<std::uint8_t>(op);
  out[5] = 0;
  endian::store_little_u16(out + 6, status);
  endian::store_little_u32(out + 8, keyLen);
  endian::store_little_u32(out + 12, valueLen);
  endian::store_little_u64(out + 16, seq);
  endian::store_little_s64(out + 24, arg);
}

Status FrameHeader::decode(const std::uint8_t in[kFrameHeaderSize], std::uint32_t expectedMagic,
                           std::size_t maxValueBytes, FrameHeader* out) {
  FrameHeader h;
  h.magic = endian::load_little_u32(in);
  if (h.magic != expectedMagic) {
    return makeError(ErrorCode::kInvalidArgument, "bad frame magic 0x{:08x} (expected 0x{:08x})",
                     h.magic, expectedMagic);
  }
  if (in[4] > static_cast<std::uint8_t>(Op::kCheck) || in[5] != 0) {
    return makeError(ErrorCode::kInvalidArgument, "unknown op {} (reserved byte {})", in[4], in[5]);
  }
  h.op = static_cast<Op>(in[4]);
  h.status = endian::load_little_u16(in + 6);
  h.keyLen = endian::load_little_u32(in + 8);
  h.valueLen = endian::load_little_u32(in + 12);
  h.seq = endian::load_little_u64(in + 16);
  h.arg = endian::load_little_s64(in + 24);
  if (h.keyLen > kMaxKeyBytes) {
    return makeError(ErrorCode::kInvalidArgument, "{} frame: key of {} bytes exceeds the limit {}",
                     opName(h.op), h.keyLen, kMaxKeyBytes);
  }
  if (h.valueLen > maxValueBytes) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{} frame: value of {} bytes exceeds the limit {}", opName(h.op), h.valueLen,
                     maxValueBytes);
  }
  *out = h;
  return Status::Ok();
}

Status decodeRequest(const FrameHeader& header, const std::uint8_t* body, Request* out) {
  Request r;
  r.op = header.op;
  r.seq = header.seq;
  r.arg = header.arg;
  r.key.assign(reinterpret_cast<const char*>(body), header.keyLen);
  const std::uint8_t* value = body + header.keyLen;
  const char* what = opName(header.op);
  if (header.op == Op::kHello || header.status != 0) {
    return makeError(ErrorCode::kInvalidArgument, "{} request with status {} is not a request",
                     what, header.status);
  }
  if (header.op == Op::kWait) {
    if (header.keyLen != 0) {
      return makeError(ErrorCode::kInvalidArgument,
                       "wait request with a key (keys go in the value)");
    }
    COHORT_RETURN_IF_ERROR(decodeKeyList(value, header.valueLen, &r.keys));
  } else {
    if (r.key.empty()) return makeError(ErrorCode::kInvalidArgument, "{} request: empty key", what);
    if (header.op != Op::kSet && header.valueLen != 0) {
      return makeError(ErrorCode::kInvalidArgument, "{} request carries a {}-byte value", what,
                       header.valueLen);
    }
    r.value.assign(value, value + header.valueLen);
    if (header.op == Op::kGet) r.keys = {r.key};
  }
  if ((header.op == Op::kGet || header.op == Op::kWait) && r.arg < -1) {
    return makeError(ErrorCode::kInvalidArgument, "{} request: timeout {} ms", what, r.arg);
  }
  *out = std::move(r);
  return Status::Ok();
}

namespace {
Bytes encodeFrame(const FrameHeader& header, const std::string& key, const Bytes& value) {
  Bytes out(kFrameHeaderSize + key.size() + value.size());
  header.encode(out.data());
  std::memcpy(out.data() + kFrameHeaderSize, key.data(), key.size());
  if (!value.empty()) {
    std::memcpy(out.data() + kFrameHeaderSize + key.size(), value.data(), value.size());
  }
  return out;
}
}  // namespace

Bytes encodeRequest(const Request& request) {
  FrameHeader h;
  h.op = request.op;
  h.seq = request.seq;
  h.arg = request.arg;
  const Bytes keyList = request.op == Op::kWait ? encodeKeyList(request.keys) : Bytes();
  const Bytes& value = request.op == Op::kWait ? keyList : request.value;
  const std::string key = request.op == Op::kWait ? std::string() : request.key;
  h.keyLen = static_cast<std::uint32_t>(key.size());
  h.valueLen = static_cast<std::uint32_t>(value.size());
  return encodeFrame(h, key, value);
}

Bytes encodeReply(Op op, std::uint64_t seq, ErrorCode status, std::int64_t arg,
                  const Bytes& value) {
  FrameHeader h;
  h.magic = kReplyMagic;
  h.op = op;
  h.status = static_cast<std::uint16_t>(status);
  h.valueLen = static_cast<std::uint32_t>(value.size());
  h.seq = seq;
  h.arg = arg;
  return encodeFrame(h, std::string(), value);
}

Status replyStatus(const FrameHeader& header, const Bytes& value) {
  if (header.status == 0) return Status::Ok();
  const std::string text(value.begin(), value.end());
  if (header.status > static_cast<std::uint16_t>(kLastErrorCode)) {
    return makeError(ErrorCode::kRemoteError, "error code {}: {}", header.status, text);
  }
  return Status(static_cast<ErrorCode>(header.status), text);
}

Bytes encodeKeyList(const std::vector<std::string>& keys) {
  Bytes out;
  for (const auto& k : keys) {
    std::uint8_t len[4];
    endian::store_little_u32(len, static_cast<std::uint32_t>(k.size()));
    out.insert(out.end(), len, len + 4);
    out.insert(out.end(), k.begin(), k.end());
  }
  return out;
}

Status decodeKeyList(const std::uint8_t* data, std::size_t size, std::vector<std::string>* keys) {
  keys->clear();
  std::size_t at = 0;
  while (at < size) {
    if (size - at < 4) {
      return makeError(ErrorCode::kInvalidArgument, "key list: {} stray bytes at offset {}",
                       size - at, at);
    }
    const std::uint32_t len = endian::load_little_u32(data + at);
    at += 4;
    if (len == 0 || len > kMaxKeyBytes || len > size - at) {
      return makeError(ErrorCode::kInvalidArgument,
                       "key list: key {} has length {} (limit {}, {} bytes left)", keys->size(),
                       len, kMaxKeyBytes, size - at);
    }
    keys->emplace_back(reinterpret_cast<const char*>(data + at), len);
    at += len;
  }
  if (keys->empty()) return makeError(ErrorCode::kInvalidArgument, "key list: no keys");
  return Status::Ok();
}

Bytes encodeServerGreeting(const Status& verdict, std::size_t maxValueBytes) {
  // The server's token stays zero: an unauthenticated peer must not learn it.
  const Handshake mine = Handshake::local(ChannelKind::kStore, JobToken());
  Bytes out(Handshake::kWireSize);
  mine.encode(out.data());
  const std::string& text = verdict.message();
  const Bytes reply =
      encodeReply(Op::kHello, 0, verdict.code(), static_cast<std::int64_t>(maxValueBytes),
                  Bytes(text.begin(), text.end()));
  out.insert(out.end(), reply.begin(), reply.end());
  return out;
}

Status checkClientHandshake(const std::uint8_t in[Handshake::kWireSize], const JobToken& token,
                            const std::string& peer, Handshake* out) {
  Handshake theirs;
  Status s = Handshake::decode(in, &theirs);
  if (s.code() == ErrorCode::kVersionMismatch) {
    return makeError(ErrorCode::kVersionMismatch, "protocol version mismatch from {}: {}", peer,
                     s.message());
  }
  if (!s.ok()) return makeError(s.code(), "from {}: {}", peer, s.message());
  COHORT_RETURN_IF_ERROR(theirs.verify(Handshake::local(ChannelKind::kStore, token), peer));
  *out = theirs;
  return Status::Ok();
}

Status parseServerStream(const std::uint8_t* data, std::size_t size, const JobToken& token,
                         std::size_t maxValueBytes, std::vector<Request>* requests) {
  if (size < Handshake::kWireSize) {
    return makeError(ErrorCode::kConnectionError, "truncated handshake: {} of {} bytes", size,
                     Handshake::kWireSize);
  }
  Handshake peer;
  COHORT_RETURN_IF_ERROR(checkClientHandshake(data, token, "stream", &peer));
  std::size_t at = Handshake::kWireSize;
  while (at < size) {
    if (size - at < kFrameHeaderSize) {
      return makeError(ErrorCode::kInvalidArgument, "truncated frame header at offset {}", at);
    }
    FrameHeader h;
    COHORT_RETURN_IF_ERROR(FrameHeader::decode(data + at, kRequestMagic, maxValueBytes, &h));
    at += kFrameHeaderSize;
    if (size - at < h.bodySize()) {
      return makeError(ErrorCode::kInvalidArgument, "truncated frame body at offset {}", at);
    }
    Request r;
    COHORT_RETURN_IF_ERROR(decodeRequest(h, data + at, &r));
    at += h.bodySize();
    requests->push_back(std::move(r));
  }
  return Status::Ok();
}

}  // namespace cohort::transport::control
