// The store protocol parsed from byte buffers, without sockets: what the
// server accepts and every way it refuses.
#include <gtest/gtest.h>

#include "cohort/version.h"
#include "test_util.h"
#include "transport/control/store_protocol.h"

namespace cohort::transport::control {
namespace {

const JobToken kToken = JobToken::fromText("0123456789abcdef0123456789abcdef");

Bytes handshake(const JobToken& token, std::uint32_t protocol = COHORT_PROTOCOL_VERSION,
                ChannelKind kind = ChannelKind::kStore) {
  Handshake h = Handshake::local(kind, token);
  h.protocolVersion = protocol;
  h.fromRank = 2;
  Bytes out(Handshake::kWireSize);
  h.encode(out.data());
  return out;
}

Request request(Op op, std::string key, Bytes value = {}, std::int64_t arg = 0) {
  Request r;
  r.op = op;
  r.key = std::move(key);
  r.value = std::move(value);
  r.arg = arg;
  return r;
}

void append(Bytes* out, const Bytes& more) { out->insert(out->end(), more.begin(), more.end()); }

Status parse(const Bytes& stream, std::vector<Request>* out, std::size_t maxValue = 1024) {
  return parseServerStream(stream.data(), stream.size(), kToken, maxValue, out);
}

TEST(ControlProtocolTest, AStreamOfEveryRequestParsesBack) {
  Bytes stream = handshake(kToken);
  Request wait = request(Op::kWait, "");
  wait.keys = {"a", "bb", std::string(kMaxKeyBytes, 'c')};
  wait.arg = 250;
  wait.seq = 9;
  append(&stream, encodeRequest(request(Op::kSet, "k", Bytes{1, 2, 3})));
  append(&stream, encodeRequest(request(Op::kGet, "k", {}, -1)));
  append(&stream, encodeRequest(wait));
  append(&stream, encodeRequest(request(Op::kAdd, "n", {}, -42)));
  append(&stream, encodeRequest(request(Op::kCheck, "n")));
  std::vector<Request> got;
  ASSERT_OK(parse(stream, &got, 8192));
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].op, Op::kSet);
  EXPECT_EQ(got[0].value, (Bytes{1, 2, 3}));
  EXPECT_EQ(got[1].keys, std::vector<std::string>{"k"});
  EXPECT_EQ(got[1].arg, -1);
  EXPECT_EQ(got[2].keys, wait.keys);
  EXPECT_EQ(got[2].seq, 9u);
  EXPECT_EQ(got[2].arg, 250);
  EXPECT_EQ(got[3].arg, -42);
  EXPECT_EQ(got[4].key, "n");
}

TEST(ControlProtocolTest, HandshakeRefusals) {
  std::vector<Request> got;
  EXPECT_ERROR(parse(handshake(JobToken::fromText("another job")), &got), kConnectionError,
               "token mismatch");
  const Status version = parse(handshake(kToken, 77), &got);
  EXPECT_ERROR(version, kVersionMismatch, "protocol version");
  EXPECT_NE(version.message().find("protocol 77"), std::string::npos) << version.message();
  EXPECT_NE(version.message().find("protocol " + std::to_string(COHORT_PROTOCOL_VERSION)),
            std::string::npos)
      << version.message();
  EXPECT_ERROR(parse(handshake(kToken, COHORT_PROTOCOL_VERSION, ChannelKind::kData), &got),
               kConnectionError, "channel kind");
  Bytes magic = handshake(kToken);
  magic[0] ^= 0xff;
  EXPECT_ERROR(parse(magic, &got), kConnectionError, "bad magic");
  Bytes shortHello = handshake(kToken);
  shortHello.resize(63);
  EXPECT_ERROR(parse(shortHello, &got), kConnectionError, "truncated handshake: 63 of 64");
  EXPECT_TRUE(got.empty());
}

TEST(ControlProtocolTest, FrameRefusals) {
  const Bytes hello = handshake(kToken);
  auto withFrame = [&](const FrameHeader& h, std::size_t body) {
    Bytes s = hello;
    std::uint8_t wire[kFrameHeaderSize];
    h.encode(wire);
    s.insert(s.end(), wire, wire + kFrameHeaderSize);
    s.resize(s.size() + body, 'x');
    return s;
  };
  std::vector<Request> got;
  FrameHeader h;
  h.op = Op::kSet;
  h.keyLen = 1;
  h.valueLen = 1025;
  EXPECT_ERROR(parse(withFrame(h, 1026), &got), kInvalidArgument, "value of 1025 bytes");
  h.keyLen = kMaxKeyBytes + 1;
  h.valueLen = 0;
  EXPECT_ERROR(parse(withFrame(h, kMaxKeyBytes + 1), &got), kInvalidArgument, "key of 4097");
  h.keyLen = 0;
  EXPECT_ERROR(parse(withFrame(h, 0), &got), kInvalidArgument, "empty key");
  h.keyLen = 4;
  h.valueLen = 10;
  EXPECT_ERROR(parse(withFrame(h, 5), &got), kInvalidArgument, "truncated frame body");
  h.op = Op::kGet;
  EXPECT_ERROR(parse(withFrame(h, 14), &got), kInvalidArgument, "carries a 10-byte value");
  h.valueLen = 0;
  h.arg = -5;
  EXPECT_ERROR(parse(withFrame(h, 4), &got), kInvalidArgument, "timeout -5 ms");
  h.op = Op::kHello;
  EXPECT_ERROR(parse(withFrame(h, 4), &got), kInvalidArgument, "not a request");
  h.op = Op::kWait;
  h.keyLen = 0;
  h.valueLen = 3;
  EXPECT_ERROR(parse(withFrame(h, 3), &got), kInvalidArgument, "key list: 3 stray bytes");
  h.magic = kReplyMagic;
  EXPECT_ERROR(parse(withFrame(h, 0), &got), kInvalidArgument, "bad frame magic");
  Bytes badOp = withFrame(FrameHeader(), 0);
  badOp[Handshake::kWireSize + 4] = 77;
  EXPECT_ERROR(parse(badOp, &got), kInvalidArgument, "unknown op 77");
  Bytes shortHeader = hello;
  shortHeader.resize(hello.size() + 31);
  EXPECT_ERROR(parse(shortHeader, &got), kInvalidArgument, "truncated frame header");
}

TEST(ControlProtocolTest, KeyListRoundTripAndRejections) {
  const std::vector<std::string> keys = {"x", "yy", std::string(300, 'z')};
  const Bytes wire = encodeKeyList(keys);
  std::vector<std::string> back;
  ASSERT_OK(decodeKeyList(wire.data(), wire.size(), &back));
  EXPECT_EQ(back, keys);
  EXPECT_ERROR(decodeKeyList(wire.data(), wire.size() - 1, &back), kInvalidArgument,
               "key 2 has length 300");
  EXPECT_ERROR(decodeKeyList(wire.data(), 0, &back), kInvalidArgument, "no keys");
  const Bytes zero = {0, 0, 0, 0};
  EXPECT_ERROR(decodeKeyList(zero.data(), zero.size(), &back), kInvalidArgument, "length 0");
}

TEST(ControlProtocolTest, RepliesCarryStatusAndValue) {
  const Bytes ok = encodeReply(Op::kAdd, 12, ErrorCode::kSuccess, 77, {});
  FrameHeader h;
  ASSERT_OK(FrameHeader::decode(ok.data(), kReplyMagic, 0, &h));
  EXPECT_EQ(h.seq, 12u);
  EXPECT_EQ(h.arg, 77);
  EXPECT_OK(replyStatus(h, {}));
  const std::string text = "timed out waiting for key(s) q";
  const Bytes bad =
      encodeReply(Op::kGet, 3, ErrorCode::kTimeout, 0, Bytes(text.begin(), text.end()));
  ASSERT_OK(FrameHeader::decode(bad.data(), kReplyMagic, 1024, &h));
  EXPECT_ERROR(replyStatus(h, Bytes(bad.begin() + kFrameHeaderSize, bad.end())), kTimeout,
               "key(s) q");
  EXPECT_ERROR(FrameHeader::decode(bad.data(), kRequestMagic, 1024, &h), kInvalidArgument,
               "bad frame magic");
  h.status = 999;
  EXPECT_ERROR(replyStatus(h, Bytes{'x'}), kRemoteError, "error code 999");
}

TEST(ControlProtocolTest, TheGreetingNeverCarriesTheToken) {
  const Bytes greeting = encodeServerGreeting(Status::Ok(), 5000);
  Handshake h;
  ASSERT_OK(Handshake::decode(greeting.data(), &h));
  EXPECT_EQ(h.token, JobToken());
  EXPECT_EQ(h.kind, ChannelKind::kStore);
  FrameHeader reply;
  ASSERT_OK(FrameHeader::decode(greeting.data() + Handshake::kWireSize, kReplyMagic, 0, &reply));
  EXPECT_EQ(reply.op, Op::kHello);
  EXPECT_EQ(reply.arg, 5000);
}

}  // namespace
}  // namespace cohort::transport::control
