// The rdma connection's protocol (chunks, credits, READY, mismatch, close,
// reduction, error completions) over an in-memory queue pair that executes the
// same work requests a NIC would, with RC's guarantees and its refusals (bad
// keys, ranges, missing receives), so it runs without an RDMA device.
#include "transport/rdma/rdma_connection.h"

#include <cstring>
#include <numeric>
#include <vector>

#include "cohort/runtime.h"
#include "test_util.h"
#include "transport/rdma_fake_qp.h"

namespace cohort::transport::rdma {
namespace {

using fake::FakePair;
using fake::pattern;
using fake::sumInt32;

TEST(RdmaConnectionTest, ExactBytesBothDirectionsAtOnce) {
  FakePair p;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, kSlotPayload,
                        kSlotPayload + 1, (std::size_t{1} << 20) + 3, std::size_t{5} << 20}) {
    SCOPED_TRACE(n);
    const auto a = pattern(n, 1), b = pattern(n, 2);
    std::vector<std::uint8_t> atB(n, 0xee), atA(n, 0xee);
    ASSERT_OK(p.conn[0]->postSend(a.data(), n));
    ASSERT_OK(p.conn[1]->postSend(b.data(), n));
    ASSERT_OK(p.conn[1]->postRecv(atB.data(), n));
    ASSERT_OK(p.conn[0]->postRecv(atA.data(), n));
    ASSERT_OK(p.pump());
    EXPECT_TRUE(atB == a);
    EXPECT_TRUE(atA == b);
  }
  EXPECT_EQ(p.conn[0]->sendsCompleted(), 7u);
  EXPECT_EQ(p.conn[1]->recvsCompleted(), 7u);
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, ManyMessagesInFlightArriveInOrder) {
  FakePair p;
  constexpr int kCount = 200;
  std::vector<std::vector<std::uint8_t>> sent, received;
  for (int i = 0; i < kCount; ++i) {
    sent.push_back(
        pattern(static_cast<std::size_t>(i) * 977 % 150000, static_cast<std::uint8_t>(i)));
    received.emplace_back(sent.back().size());
  }
  for (int i = 0; i < kCount; ++i) ASSERT_OK(p.conn[0]->postSend(sent[i].data(), sent[i].size()));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_OK(p.conn[1]->postRecv(received[i].data(), received[i].size()));
  }
  ASSERT_OK(p.pump());
  for (int i = 0; i < kCount; ++i) EXPECT_TRUE(received[i] == sent[i]) << "message " << i;
  EXPECT_EQ(p.conn[0]->sendsCompleted(), std::uint64_t{kCount});
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, CreditsBoundTheWritesIntoThePeersRing) {
  FakePair p;
  const std::size_t n = 64 * kSlotPayload;
  const auto a = pattern(n, 3);
  std::vector<std::uint8_t> atB(n);
  ASSERT_OK(p.conn[0]->postSend(a.data(), n));
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(p.conn[0]->progress());
    ASSERT_OK(p.conn[1]->progress());  // no receive posted: nothing consumed
  }
  EXPECT_EQ(p.qp[0]->dataWrites, static_cast<int>(kRingSlots));
  EXPECT_EQ(p.conn[0]->sendsCompleted(), 0u);
  ASSERT_OK(p.conn[1]->postRecv(atB.data(), n));
  ASSERT_OK(p.pump());
  EXPECT_EQ(p.qp[0]->dataWrites, 64);
  EXPECT_TRUE(atB == a);
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, HeldWritesCompleteInOrder) {
  FakePair p;
  p.qp[0]->hold = true;  // writes stay "on the wire" until delivered
  const auto a = pattern(3 * kSlotPayload + 5, 4), b = pattern(10, 5);
  std::vector<std::uint8_t> ra(a.size()), rb(b.size());
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  ASSERT_OK(p.conn[0]->postSend(b.data(), b.size()));
  ASSERT_OK(p.conn[1]->postRecv(ra.data(), ra.size()));
  ASSERT_OK(p.conn[1]->postRecv(rb.data(), rb.size()));
  ASSERT_OK(p.conn[0]->progress());
  EXPECT_EQ(p.conn[0]->sendsCompleted(), 0u);
  EXPECT_EQ(p.conn[1]->recvsCompleted(), 0u);
  p.qp[0]->deliver();
  p.qp[0]->hold = false;
  ASSERT_OK(p.pump());
  EXPECT_TRUE(ra == a);
  EXPECT_TRUE(rb == b);
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, DataWaitsForTheReadySignal) {
  FakePair p(/*start=*/false);
  const auto a = pattern(100, 6);
  std::vector<std::uint8_t> atB(100);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  ASSERT_OK(p.conn[1]->postRecv(atB.data(), atB.size()));
  for (int i = 0; i < 10; ++i) ASSERT_OK(p.conn[0]->progress());
  EXPECT_EQ(p.qp[0]->dataWrites, 0);  // rank 1 has not said READY
  ASSERT_OK(p.conn[1]->start());
  ASSERT_OK(p.conn[0]->start());
  ASSERT_OK(p.pump());
  EXPECT_TRUE(atB == a);
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, ReductionAccumulatesChunksIntoTheDestination) {
  FakePair p;
  constexpr std::size_t kCount = 300000;  // several chunks
  std::vector<std::int32_t> msg(kCount), acc(kCount), dst(kCount, -1), inPlace(kCount);
  std::iota(msg.begin(), msg.end(), 0);
  for (std::size_t i = 0; i < kCount; ++i) acc[i] = inPlace[i] = static_cast<std::int32_t>(2 * i);
  const Reduction sum{sumInt32, nullptr, 4};
  ASSERT_OK(p.conn[0]->postSend(msg.data(), kCount * 4));
  ASSERT_OK(p.conn[0]->postSend(msg.data(), kCount * 4));
  ASSERT_OK(p.conn[1]->postRecv(dst.data(), kCount * 4, &sum, acc.data()));
  ASSERT_OK(p.conn[1]->postRecv(inPlace.data(), kCount * 4, &sum));
  ASSERT_OK(p.pump());
  for (std::size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(dst[i], static_cast<std::int32_t>(3 * i)) << i;
    ASSERT_EQ(inPlace[i], static_cast<std::int32_t>(3 * i)) << i;
  }
  EXPECT_EQ(acc[7], 14);  // the accumulate input is not written
}

TEST(RdmaConnectionTest, SizeMismatchFailsOnBothEnds) {
  FakePair p;
  std::vector<std::uint8_t> a(100), b(200);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  Status s = p.conn[1]->postRecv(b.data(), b.size());  // may detect it at once
  if (s.ok()) s = p.pump();
  EXPECT_EQ(s.code(), ErrorCode::kMismatch) << s.toString();
  EXPECT_ERROR(p.conn[1]->progress(), kMismatch, "message 0 is 100 bytes but the receive posted");
  EXPECT_ERROR(p.conn[1]->progress(), kMismatch, "200 bytes");  // sticky
  EXPECT_ERROR(p.conn[1]->postRecv(b.data(), 1), kMismatch, "100 bytes");
  EXPECT_ERROR(p.conn[0]->progress(), kMismatch, "its receive was posted for 200 bytes");
  EXPECT_ERROR(p.conn[0]->postSend(a.data(), 1), kMismatch, "rank 1 fake qpn 0x11");
}

TEST(RdmaConnectionTest, ErrorCompletionIsStickyAndNamesBothEnds) {
  FakePair p;
  ASSERT_OK(p.pump());  // READY exchanged
  std::vector<std::uint8_t> a(1000);
  p.qp[0]->failNext = IBV_WC_RETRY_EXC_ERR;
  Status s = p.conn[0]->postSend(a.data(), a.size());
  if (s.ok()) s = p.conn[0]->progress();
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError);
  for (const char* needle : {"rank 0 fake qpn 0x10", "rank 1 fake qpn 0x11",
                             "transport retry counter exceeded", "write of a data chunk"}) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << needle << ": " << s.toString();
  }
  EXPECT_ERROR(p.conn[0]->progress(), kRemoteError, "transport retry counter exceeded");
  EXPECT_ERROR(p.conn[0]->postRecv(a.data(), 1), kRemoteError, "rank 1 fake qpn 0x11");
}

TEST(RdmaConnectionTest, ClosingTellsThePeer) {
  FakePair p;
  ASSERT_OK(p.pump());
  std::vector<std::uint8_t> buf(10);
  ASSERT_OK(p.conn[0]->postRecv(buf.data(), buf.size()));
  p.conn[1].reset();
  p.qp[1] = nullptr;
  EXPECT_ERROR(p.conn[0]->progress(), kRemoteError,
               "the peer closed the connection with 0 send(s) and 1 receive(s)");
  EXPECT_EQ(p.faults(), "");
}

// An end aborted after a failure elsewhere (its process lives on) tells the
// peer as closing does, and keeps the reason for its own later calls.
TEST(RdmaConnectionTest, AbortTellsThePeerAndKeepsItsReason) {
  FakePair p;
  ASSERT_OK(p.pump());
  std::vector<std::uint8_t> buf(10);
  ASSERT_OK(p.conn[0]->postRecv(buf.data(), buf.size()));
  p.conn[1]->abort(Status(ErrorCode::kRemoteError, "rank 7 died"));
  (void)p.pump();
  EXPECT_ERROR(p.conn[0]->progress(), kRemoteError,
               "the peer closed the connection with 0 send(s) and 1 receive(s)");
  EXPECT_ERROR(p.conn[1]->postSend(buf.data(), 1), kRemoteError, "rank 7 died");
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, DataSentBeforeCloseIsStillDelivered) {
  FakePair p;
  const auto a = pattern(5000, 7);
  std::vector<std::uint8_t> atA(a.size());
  ASSERT_OK(p.conn[1]->postSend(a.data(), a.size()));
  ASSERT_OK(p.pump());
  p.conn[1].reset();
  p.qp[1] = nullptr;
  ASSERT_OK(p.conn[0]->postRecv(atA.data(), atA.size()));  // the bytes are in the ring
  ASSERT_OK(p.conn[0]->progress());
  EXPECT_TRUE(atA == a);
  EXPECT_ERROR(p.conn[0]->postSend(a.data(), 1), kRemoteError, "closed");
}

TEST(RdmaConnectionTest, DeviceMemoryIsRegisteredOnceAndSentInPlace) {
  ASSERT_OK(runtime::setDevice(0));
  FakePair p;
  const std::size_t n = (std::size_t{1} << 20) + 3;
  const auto host = pattern(n, 8);
  void* dev = nullptr;
  ASSERT_OK(runtime::deviceMalloc(&dev, n));
  ASSERT_OK(runtime::memcpy(dev, n, host.data(), n, runtime::MemcpyKind::kHostToDevice));
  std::vector<std::uint8_t> r1(n), r2(n), r3(n);
  ASSERT_OK(p.conn[0]->postSend(dev, n));
  ASSERT_OK(p.conn[0]->postSend(static_cast<std::uint8_t*>(dev) + 0, n));
  ASSERT_OK(p.conn[1]->postRecv(r1.data(), n));
  ASSERT_OK(p.conn[1]->postRecv(r2.data(), n));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(r1 == host);
  EXPECT_TRUE(r2 == host);
  EXPECT_EQ(p.cache->registrations(), 1u);
  EXPECT_EQ(p.qp[0]->payloadKeys.size(), 1u);      // every chunk straight from the device buffer
  ASSERT_OK(p.conn[0]->postSend(host.data(), n));  // plain host memory: staged
  ASSERT_OK(p.conn[1]->postRecv(r3.data(), n));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(r3 == host);
  EXPECT_EQ(p.cache->registrations(), 1u);
  EXPECT_EQ(p.qp[0]->payloadKeys.size(), 2u);
  runtime::PointerAttributes attributes;
  ASSERT_OK(runtime::pointerGetAttributes(dev, &attributes));
  EXPECT_ERROR(p.conn[0]->postSend(dev, attributes.allocationSize + 1), kInvalidArgument,
               "outside its allocation");
  EXPECT_EQ(p.faults(), "");
  ASSERT_OK(runtime::deviceFree(dev));
  ASSERT_OK(runtime::resetDevice(0));
}

TEST(RdmaConnectionTest, InvalidArgumentsLeaveTheConnectionUsable) {
  FakePair p;
  std::vector<std::uint8_t> buf(10);
  const Reduction sum{sumInt32, nullptr, 4};
  EXPECT_ERROR(p.conn[0]->postSend(nullptr, 5), kInvalidArgument, "null buffer");
  EXPECT_ERROR(p.conn[1]->postRecv(nullptr, 5), kInvalidArgument, "null buffer");
  EXPECT_ERROR(p.conn[1]->postRecv(buf.data(), 10, &sum), kInvalidArgument,
               "not a whole number of 4-byte elements");
  const auto a = pattern(10, 9);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  ASSERT_OK(p.conn[1]->postRecv(buf.data(), buf.size()));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(buf == a);
}

TEST(RdmaConnectionTest, GarbageSignalsAreProtocolErrors) {
  {
    FakePair p;
    p.qp[1]->inject(0xee000000);
    EXPECT_ERROR(p.conn[0]->progress(), kInternal, "unknown immediate 0xee000000");
  }
  {
    FakePair p;
    p.qp[1]->inject(encodeImm(ImmKind::kData, 5));
    EXPECT_ERROR(p.conn[0]->progress(), kInternal, "chunk 5 arrived where chunk 0 was expected");
  }
  {
    FakePair p;
    p.qp[1]->inject(encodeImm(ImmKind::kCredit, 1));
    EXPECT_ERROR(p.conn[0]->progress(), kInternal, "17 credits for a ring of 16 slots");
  }
}

TEST(RdmaConnectionTest, WaitHintDoesNotSleepOnQueuedCompletions) {
  FakePair p;
  ASSERT_OK(p.pump());
  const auto a = pattern(64, 10);
  std::vector<std::uint8_t> atB(64);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));  // lands in rank 1's queue
  const WaitHint hint = p.conn[1]->waitHint();
  ASSERT_NE(hint.word, nullptr);
  EXPECT_NE(hint.word->snapshot(), hint.snapshot);  // sleep() would return at once
  ASSERT_OK(p.conn[1]->postRecv(atB.data(), atB.size()));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(atB == a);
  const WaitHint idle = p.conn[1]->waitHint();  // nothing queued: the (fake's) fd
  EXPECT_EQ(idle.word, nullptr);
  EXPECT_EQ(idle.fd, -1);
}

}  // namespace
}  // namespace cohort::transport::rdma
