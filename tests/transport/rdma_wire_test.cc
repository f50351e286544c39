// The rdma wire format: immediates and slot headers.
#include "transport/rdma/rdma_wire.h"

#include "test_util.h"

namespace cohort::transport::rdma {
namespace {

TEST(RdmaWireTest, ImmediatesRoundTrip) {
  for (ImmKind k : {ImmKind::kData, ImmKind::kCredit, ImmKind::kReady, ImmKind::kReadyAck,
                    ImmKind::kMismatch, ImmKind::kClose}) {
    for (std::uint32_t v : {0u, 1u, 12345u, kImmValueMask}) {
      ImmKind kind;
      std::uint32_t value;
      ASSERT_TRUE(decodeImm(encodeImm(k, v), &kind, &value));
      EXPECT_EQ(kind, k);
      EXPECT_EQ(value, v);
    }
  }
  ImmKind kind;
  std::uint32_t value;
  ASSERT_TRUE(decodeImm(encodeImm(ImmKind::kData, 0x1234567), &kind, &value));
  EXPECT_EQ(value, 0x234567u);  // 24 bits kept
  EXPECT_EQ(encodeImm(ImmKind::kCredit, 5), 0x02000005u);
}

TEST(RdmaWireTest, UnknownImmediatesAreRejected) {
  ImmKind kind;
  std::uint32_t value;
  EXPECT_FALSE(decodeImm(0x00000001, &kind, &value));
  EXPECT_FALSE(decodeImm(0x07000000, &kind, &value));
  EXPECT_FALSE(decodeImm(0xff123456, &kind, &value));
  EXPECT_STREQ(immKindName(ImmKind::kReadyAck), "ready-ack");
}

TEST(RdmaWireTest, SlotHeaderRoundTripsLittleEndian) {
  std::uint8_t buf[kSlotHeaderBytes];
  encodeSlotHeader(SlotHeader{0x0102030405060708ull, 0x11223344u, 0xa0b0c0d0u}, buf);
  EXPECT_EQ(buf[0], 0x08);
  EXPECT_EQ(buf[7], 0x01);
  EXPECT_EQ(buf[8], 0x44);
  EXPECT_EQ(buf[15], 0xa0);
  const SlotHeader h = decodeSlotHeader(buf);
  EXPECT_EQ(h.messageBytes, 0x0102030405060708ull);
  EXPECT_EQ(h.chunkBytes, 0x11223344u);
  EXPECT_EQ(h.messageSeq, 0xa0b0c0d0u);
}

TEST(RdmaWireTest, WorkRequestIdsCarryTheirTag) {
  EXPECT_EQ(wrIdTag(makeWrId(WorkTag::kData, 77)), WorkTag::kData);
  EXPECT_EQ(makeWrId(WorkTag::kData, 77) & 0xff, 77u);
  EXPECT_EQ(wrIdTag(makeWrId(WorkTag::kControl, ~0ull)), WorkTag::kControl);
  EXPECT_EQ(wrIdTag(makeWrId(WorkTag::kRecv, 0)), WorkTag::kRecv);
}

TEST(RdmaWireTest, DepthsCoverTheProtocolBounds) {
  // The peer's data (<= its credits = our slots), its credit messages (<= our
  // slots) and the four one-off signals must fit in the posted receives.
  EXPECT_GE(kRecvDepth, 2 * kRingSlots + kReservedSignals);
  EXPECT_GE(kSendQueueDepth, kSendDepth + kReservedSignals);
  EXPECT_EQ(kSlotPayload % 64, 0u);
}

}  // namespace
}  // namespace cohort::transport::rdma
