// The store's wire protocol, with no sockets in it, so that the server, the
// client, the tests and the fuzzer all parse bytes with the same code.
//
// A connection opens with the client's 64-byte Handshake; the server answers
// with its own Handshake (token zeroed: it never shows the secret to an
// unauthenticated peer) and a kHello reply frame (ok, or the refusal reason).
// Then the client sends request frames and the server answers each with a reply
// frame echoing its sequence number. Every frame is a 32-byte header
//   magic u32 | op u8 | 0 u8 | status u16 | keyLen u32 | valueLen u32 | seq u64 | arg i64
// (little endian) followed by keyLen key bytes and valueLen value bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "transport/handshake.h"
#include "transport/store.h"

namespace cohort::transport::control {

constexpr std::size_t kFrameHeaderSize = 32;
constexpr std::size_t kMaxKeyBytes = 4096;
constexpr std::uint32_t kRequestMagic = 0x51525443;  // "CTRQ"
constexpr std::uint32_t kReplyMagic = 0x50525443;    // "CTRP"

enum class Op : std::uint8_t { kHello = 0, kSet = 1, kGet = 2, kWait = 3, kAdd = 4, kCheck = 5 };
const char* opName(Op op);

/// One frame header. `arg` is: the delta (add request), the new value (add reply),
/// the timeout in ms, -1 = never (get/wait request), 1 if present (check reply),
/// the server's value limit (hello reply). `status` is an ErrorCode (replies).
struct FrameHeader {
  std::uint32_t magic = kRequestMagic;
  Op op = Op::kHello;
  std::uint16_t status = 0;
  std::uint32_t keyLen = 0;
  std::uint32_t valueLen = 0;
  std::uint64_t seq = 0;
  std::int64_t arg = 0;

  void encode(std::uint8_t out[kFrameHeaderSize]) const;
  /// kInvalidArgument for a header that breaks the protocol (wrong magic, unknown
  /// op, nonzero reserved byte, key > kMaxKeyBytes, value > maxValueBytes).
  static Status decode(const std::uint8_t in[kFrameHeaderSize], std::uint32_t expectedMagic,
                       std::size_t maxValueBytes, FrameHeader* out);
  std::size_t bodySize() const { return std::size_t{keyLen} + valueLen; }
};

/// A decoded request; `keys` is filled for wait (one key for get).
struct Request {
  Op op = Op::kSet;
  std::uint64_t seq = 0;
  std::string key;
  std::vector<std::string> keys;
  Bytes value;
  std::int64_t arg = 0;
};

/// Checks a request body against its header (a wait's key list, empty key where
/// one is required, a value where none belongs) and builds the request.
Status decodeRequest(const FrameHeader& header, const std::uint8_t* body, Request* out);
/// Header + body of a request, ready to send.
Bytes encodeRequest(const Request& request);
/// Header + body of a reply: `value` holds the value (get) or the error message.
Bytes encodeReply(Op op, std::uint64_t seq, ErrorCode status, std::int64_t arg, const Bytes& value);
/// The error a reply carries, or ok; unknown codes become kRemoteError.
Status replyStatus(const FrameHeader& header, const Bytes& value);

/// A wait's keys as one value: per key a u32 length and the bytes.
Bytes encodeKeyList(const std::vector<std::string>& keys);
Status decodeKeyList(const std::uint8_t* data, std::size_t size, std::vector<std::string>* keys);

/// What the server sends before anything else: its handshake (no token) and
/// the hello reply (ok with the value limit, or the refusal reason).
Bytes encodeServerGreeting(const Status& verdict, std::size_t maxValueBytes);

/// Checks a client's handshake bytes as the server does: decode, then verify
/// against a kStore handshake with `token`. `peer` names the address.
Status checkClientHandshake(const std::uint8_t in[Handshake::kWireSize], const JobToken& token,
                            const std::string& peer, Handshake* out);

/// Parses a whole byte stream as the server would read it from one connection
/// (handshake, then frames) and stops at the first error. For the fuzzer and tests.
Status parseServerStream(const std::uint8_t* data, std::size_t size, const JobToken& token,
                         std::size_t maxValueBytes, std::vector<Request>* requests);

}  // namespace cohort::transport::control
