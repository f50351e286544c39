// The TCP wire format: frame headers and how a message is cut over sockets.
#include "transport/tcp/tcp_frame.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace cohort::transport::tcp {
namespace {

TEST(TcpFrame, HeaderRoundTrips) {
  const FrameHeader h{FrameType::kError, 24, 0x0102030405060708ull, (64ull << 30) + 3};
  std::uint8_t wire[FrameHeader::kWireSize];
  h.encode(wire);
  FrameHeader back;
  ASSERT_OK(FrameHeader::decode(wire, &back));
  EXPECT_EQ(back.type, FrameType::kError);
  EXPECT_EQ(back.code, 24);
  EXPECT_EQ(back.seq, h.seq);
  EXPECT_EQ(back.bytes, h.bytes);
}

TEST(TcpFrame, CorruptHeadersAreRefused) {
  std::uint8_t wire[FrameHeader::kWireSize];
  FrameHeader{FrameType::kData, 0, 1, 8}.encode(wire);
  FrameHeader out;
  wire[0] ^= 0xff;
  EXPECT_ERROR(FrameHeader::decode(wire, &out), kConnectionError, "frame magic");
  wire[0] ^= 0xff;
  wire[4] = 9;
  EXPECT_ERROR(FrameHeader::decode(wire, &out), kConnectionError, "unknown frame type 9");
}

TEST(TcpFrame, ChunksRoundRobinOverSockets) {
  EXPECT_TRUE(planChunks(0, 100, 2).empty());
  const auto one = planChunks(99, 100, 4);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].socket, 0);
  EXPECT_EQ(one[0].bytes, 99u);
  const auto c = planChunks(1003, 250, 3);
  ASSERT_EQ(c.size(), 5u);
  const int sockets[] = {0, 1, 2, 0, 1};
  std::size_t covered = 0;
  for (std::size_t j = 0; j < c.size(); ++j) {
    EXPECT_EQ(c[j].offset, covered);
    EXPECT_EQ(c[j].socket, sockets[j]);
    covered += c[j].bytes;
  }
  EXPECT_EQ(covered, 1003u);
  EXPECT_EQ(c.back().bytes, 3u);
}

}  // namespace
}  // namespace cohort::transport::tcp
