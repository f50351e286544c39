// The rdma setup blob: round trip, and rejection of truncated, oversized,
// inconsistent and random bytes (never a crash).
#include "transport/rdma/rdma_setup_blob.h"

#include <random>

#include "test_util.h"

namespace cohort::transport::rdma {
namespace {

RdmaSetupBlob sampleBlob() {
  RdmaSetupBlob b;
  b.handshake = Handshake::local(ChannelKind::kData, JobToken::fromText("job-7"));
  b.handshake.fromRank = 1;
  b.handshake.worldSize = 4;
  b.handshake.fromDevice = 3;
  b.endpoint.device = "mlx5_0";
  b.endpoint.port = 2;
  b.endpoint.linkLayer = kLinkLayerEthernet;
  b.endpoint.mtu = 5;
  b.endpoint.lid = 0x1234;
  b.endpoint.gidIndex = 3;
  b.endpoint.gid = Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  for (int r : {0, 2, 3}) {
    b.entries.push_back(RdmaQpEntry{r, 0x100u + r, 0xabcdefu - r, 0x7f0000001000ull + r * 4096u,
                                    0xdead0000u + r, 16, 65552, r == 2 ? 0u : 40000u});
  }
  return b;
}

TEST(RdmaSetupBlobTest, RoundTripKeepsEveryField) {
  const RdmaSetupBlob in = sampleBlob();
  RdmaSetupBlob out;
  ASSERT_OK(RdmaSetupBlob::decode(in.encode(), &out));
  EXPECT_EQ(out.handshake.fromRank, 1);
  EXPECT_EQ(out.handshake.worldSize, 4);
  EXPECT_EQ(out.handshake.fromDevice, 3);
  EXPECT_EQ(out.handshake.token, JobToken::fromText("job-7"));
  EXPECT_EQ(out.endpoint.device, "mlx5_0");
  EXPECT_EQ(out.endpoint.port, 2);
  EXPECT_EQ(out.endpoint.mtu, 5);
  EXPECT_EQ(out.endpoint.lid, 0x1234);
  EXPECT_EQ(out.endpoint.gidIndex, 3u);
  EXPECT_EQ(out.endpoint.gid, in.endpoint.gid);
  ASSERT_EQ(out.entries.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(out.entries[i] == in.entries[i]) << i;
  ASSERT_NE(out.entryFor(2), nullptr);
  EXPECT_EQ(out.entryFor(2)->qpn, 0x102u);
  EXPECT_EQ(out.entryFor(2)->hubPort, 0u);  // an older rank's: no retry
  EXPECT_EQ(out.entryFor(3)->hubPort, 40000u);
  EXPECT_EQ(out.entryFor(1), nullptr);  // no queue pair to itself
}

TEST(RdmaSetupBlobTest, EveryTruncationIsRejected) {
  const Bytes full = sampleBlob().encode();
  for (std::size_t n = 0; n < full.size(); ++n) {
    RdmaSetupBlob out;
    const Status s = RdmaSetupBlob::decode(Bytes(full.begin(), full.begin() + n), &out);
    EXPECT_EQ(s.code(), ErrorCode::kConnectionError) << n << ": " << s.toString();
  }
  RdmaSetupBlob out;
  EXPECT_ERROR(RdmaSetupBlob::decode(Bytes(full.begin(), full.begin() + 10), &out),
               kConnectionError, "truncated: 10 bytes");
}

TEST(RdmaSetupBlobTest, TrailingBytesAreRejected) {
  Bytes b = sampleBlob().encode();
  b.push_back(0);
  RdmaSetupBlob out;
  EXPECT_ERROR(RdmaSetupBlob::decode(b, &out), kConnectionError, "3 entries for world size 4");
}

TEST(RdmaSetupBlobTest, RandomGarbageIsRejected) {
  std::mt19937 rng(42);
  for (int i = 0; i < 2000; ++i) {
    Bytes b(rng() % 400);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    RdmaSetupBlob out;
    EXPECT_FALSE(RdmaSetupBlob::decode(b, &out).ok()) << i;
  }
}

TEST(RdmaSetupBlobTest, ForeignHandshakeIsRejected) {
  Bytes b = sampleBlob().encode();
  b[0] ^= 0xff;  // handshake magic
  RdmaSetupBlob out;
  EXPECT_ERROR(RdmaSetupBlob::decode(b, &out), kConnectionError, "bad magic");
  b = sampleBlob().encode();
  b[4] += 1;  // protocol version
  EXPECT_ERROR(RdmaSetupBlob::decode(b, &out), kVersionMismatch, "protocol");
  b = sampleBlob().encode();
  b[Handshake::kWireSize] ^= 0xff;  // rdma magic
  EXPECT_ERROR(RdmaSetupBlob::decode(b, &out), kConnectionError, "not an rdma blob");
}

// Re-encodes the sample after `edit` and expects decode to fail naming `needle`.
template <typename Edit>
void expectRejected(Edit edit, const char* needle) {
  RdmaSetupBlob b = sampleBlob();
  edit(b);
  RdmaSetupBlob out;
  EXPECT_ERROR(RdmaSetupBlob::decode(b.encode(), &out), kConnectionError, needle);
}

TEST(RdmaSetupBlobTest, InconsistentFieldsAreRejected) {
  expectRejected([](RdmaSetupBlob& b) { b.entries[1].peerRank = 0; }, "two entries for rank 0");
  expectRejected([](RdmaSetupBlob& b) { b.entries[0].peerRank = 4; }, "rank 4 outside [0, 4)");
  expectRejected([](RdmaSetupBlob& b) { b.entries[0].peerRank = -1; }, "rank -1 outside");
  expectRejected([](RdmaSetupBlob& b) { b.entries[2].qpn = 0x1000000; }, "exceed 24 bits");
  expectRejected([](RdmaSetupBlob& b) { b.entries[2].psn = 0x1000000; }, "exceed 24 bits");
  expectRejected([](RdmaSetupBlob& b) { b.entries[0].ringSlots = 0; }, "empty ring");
  expectRejected([](RdmaSetupBlob& b) { b.entries[0].hubPort = 65536; }, "reconnect port 65536");
  expectRejected([](RdmaSetupBlob& b) { b.endpoint.mtu = 6; }, "MTU code 6");
  expectRejected([](RdmaSetupBlob& b) { b.endpoint.linkLayer = 9; }, "unknown link layer 9");
  expectRejected([](RdmaSetupBlob& b) { b.endpoint.port = 0; }, "port 0");
  expectRejected([](RdmaSetupBlob& b) { b.handshake.worldSize = 2; }, "3 entries for world size 2");
}

TEST(RdmaSetupBlobTest, LongDeviceNamesAreCut) {
  RdmaSetupBlob b = sampleBlob();
  b.endpoint.device = std::string(200, 'x');
  RdmaSetupBlob out;
  ASSERT_OK(RdmaSetupBlob::decode(b.encode(), &out));
  EXPECT_EQ(out.endpoint.device, std::string(RdmaSetupBlob::kMaxDeviceName, 'x'));
}

}  // namespace
}  // namespace cohort::transport::rdma
