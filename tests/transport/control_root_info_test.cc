// Root info blob and text: round trips, and every blob or text that is not one.
#include <gtest/gtest.h>

#include <cstring>

#include "cohort/version.h"
#include "test_util.h"
#include "transport/root_info.h"

namespace cohort::transport {
namespace {

RootInfo sample(const std::string& host = "10.1.2.3") {
  RootInfo info;
  info.host = host;
  info.port = 60007;
  info.token = JobToken::random();
  info.protocolVersion = COHORT_PROTOCOL_VERSION;
  return info;
}

void expectSame(const RootInfo& a, const RootInfo& b) {
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.port, b.port);
  EXPECT_EQ(a.token, b.token);
  EXPECT_EQ(a.protocolVersion, b.protocolVersion);
}

TEST(ControlRootInfoTest, BytesRoundTripAndLayout) {
  static_assert(RootInfo::kSize == 4108, "HcclRootInfo size");
  for (const std::string host : {"10.1.2.3", "127.0.0.1", "fd00::17", "node-7.cluster"}) {
    const RootInfo info = sample(host);
    std::uint8_t blob[RootInfo::kSize];
    std::memset(blob, 0xee, sizeof(blob));
    info.toBytes(blob);
    RootInfo back;
    ASSERT_OK(RootInfo::fromBytes(blob, &back));
    expectSame(info, back);
    for (std::size_t i = 28 + host.size(); i < RootInfo::kSize; ++i) {
      ASSERT_EQ(blob[i], 0) << "padding at " << i;
    }
  }
}

TEST(ControlRootInfoTest, BlobsThatAreNotRootInfoAreRejected) {
  std::uint8_t blob[RootInfo::kSize] = {};
  RootInfo out;
  EXPECT_ERROR(RootInfo::fromBytes(blob, &out), kInvalidArgument, "not a Cohort root info");
  sample().toBytes(blob);
  blob[1000] = 1;
  EXPECT_ERROR(RootInfo::fromBytes(blob, &out), kInvalidArgument, "offset 1000");
  sample().toBytes(blob);
  blob[26] = 0;  // host length 0
  blob[27] = 0;
  EXPECT_ERROR(RootInfo::fromBytes(blob, &out), kInvalidArgument, "host length 0");
  sample().toBytes(blob);
  blob[28] = '/';
  EXPECT_ERROR(RootInfo::fromBytes(blob, &out), kInvalidArgument, "bad address");
  RootInfo noPort = sample();
  noPort.port = 0;
  noPort.toBytes(blob);
  EXPECT_ERROR(RootInfo::fromBytes(blob, &out), kInvalidArgument, "port 0");
}

TEST(ControlRootInfoTest, OtherProtocolVersionsAreNamed) {
  RootInfo info = sample();
  info.protocolVersion = 999;
  std::uint8_t blob[RootInfo::kSize];
  info.toBytes(blob);
  RootInfo out;
  const Status s = RootInfo::fromBytes(blob, &out);
  EXPECT_ERROR(s, kVersionMismatch, "protocol version 999");
  EXPECT_NE(s.message().find("protocol version " + std::to_string(COHORT_PROTOCOL_VERSION)),
            std::string::npos)
      << s.message();
  EXPECT_ERROR(RootInfo::fromText(info.toText(), &out), kVersionMismatch, "protocol version 999");
  EXPECT_EQ(info.toText().rfind("cohort999:", 0), 0u);
}

TEST(ControlRootInfoTest, TextRoundTrip) {
  for (const std::string host : {"10.1.2.3", "fd00::17"}) {
    const RootInfo info = sample(host);
    const std::string text = info.toText();
    EXPECT_EQ(text, "cohort" + std::to_string(COHORT_PROTOCOL_VERSION) + ":" + info.token.hex() +
                        "@" + (host == "fd00::17" ? "[fd00::17]" : host) + ":60007");
    RootInfo back;
    ASSERT_OK(RootInfo::fromText(text, &back));
    expectSame(info, back);
  }
}

TEST(ControlRootInfoTest, TextsThatAreNotRootInfoAreRejected) {
  const std::string hex(32, 'a');
  const std::string v = "cohort" + std::to_string(COHORT_PROTOCOL_VERSION) + ":";
  RootInfo out;
  EXPECT_ERROR(RootInfo::fromText("", &out), kInvalidArgument, "does not start with 'cohort'");
  EXPECT_ERROR(RootInfo::fromText("cohort:" + hex + "@h:1", &out), kInvalidArgument,
               "no protocol version");
  EXPECT_ERROR(RootInfo::fromText(v + "abc@h:1", &out), kInvalidArgument, "32-hex-digit token");
  EXPECT_ERROR(RootInfo::fromText(v + std::string(31, 'a') + "g@h:1", &out), kInvalidArgument,
               "not hexadecimal");
  EXPECT_ERROR(RootInfo::fromText(v + hex + "@10.0.0.1", &out), kInvalidArgument, "no ':<port>'");
  EXPECT_ERROR(RootInfo::fromText(v + hex + "@10.0.0.1:0", &out), kInvalidArgument, "bad port");
  EXPECT_ERROR(RootInfo::fromText(v + hex + "@10.0.0.1:65536", &out), kInvalidArgument, "bad port");
  EXPECT_ERROR(RootInfo::fromText(v + hex + "@:80", &out), kInvalidArgument, "bad host");
  EXPECT_ERROR(RootInfo::fromText(v + hex + "@a b:80", &out), kInvalidArgument, "bad host");
  // The token is a secret: errors never echo it.
  const Status s = RootInfo::fromText(v + hex + "@10.0.0.1:99999", &out);
  EXPECT_ERROR(s, kInvalidArgument, "'...@10.0.0.1:99999'");
  EXPECT_EQ(s.message().find(hex), std::string::npos) << s.message();
  RootInfo other = sample();
  other.protocolVersion = 3;
  const Status v3 = RootInfo::fromText(other.toText(), &out);
  EXPECT_EQ(v3.message().find(other.token.hex()), std::string::npos) << v3.message();
}

TEST(ControlRootInfoTest, ConnectStoreChecksTheRootInfo) {
  RootInfo info = sample();
  info.protocolVersion = 5;
  std::shared_ptr<Store> store;
  EXPECT_ERROR(connectStore(info, 1, Deadline::afterMs(100), &store), kVersionMismatch,
               "protocol version 5");
  info = sample();
  info.port = 0;
  EXPECT_ERROR(connectStore(info, 1, Deadline::afterMs(100), &store), kInvalidArgument,
               "10.1.2.3:0");
}

}  // namespace
}  // namespace cohort::transport
