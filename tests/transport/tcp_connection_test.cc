// The TCP data path between two ranks (threads) over 127.0.0.1: exact bytes at
// every size and socket count, many messages in flight, both directions at
// once, reduction on receive, size mismatch and a peer that goes away.
#include "transport/tcp/tcp_connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common/error.h"
#include "tcp_pair.h"
#include "test_util.h"

namespace cohort::transport::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct SizeCase {
  std::size_t bytes;
  int sockets;
  std::size_t chunk;
};

class TcpExactBytes : public ::testing::TestWithParam<SizeCase> {};

TEST_P(TcpExactBytes, ArriveIntact) {
  const SizeCase c = GetParam();
  tcp::TcpOptions options;
  options.socketsPerPeer = c.sockets;
  options.chunkBytes = c.chunk;
  TcpPair pair;
  ASSERT_OK(connectPair(&pair, options));
  EXPECT_EQ(static_cast<tcp::TcpConnection&>(pair.a()).socketCount(), c.sockets);
  EXPECT_EQ(static_cast<tcp::TcpConnection&>(pair.b()).socketCount(), c.sockets);
  std::vector<std::uint8_t> out(c.bytes), in(c.bytes + 1, 0xee);
  fillPattern(out.data(), out.size(), 7);
  const auto st = onBoth([&](int rank) {
    if (rank == 0) {
      COHORT_RETURN_IF_ERROR(pair.a().postSend(out.data(), out.size()));
      return drain(pair.a());
    }
    COHORT_RETURN_IF_ERROR(pair.b().postRecv(in.data(), c.bytes));
    return drain(pair.b());
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  EXPECT_EQ(checkPattern(in.data(), c.bytes, 7), c.bytes) << "first wrong byte";
  EXPECT_EQ(in[c.bytes], 0xee) << "wrote past the receive";
  EXPECT_EQ(pair.a().sendsCompleted(), 1u);
  EXPECT_EQ(pair.b().recvsCompleted(), 1u);
}

constexpr std::size_t kChunk = 512 << 10;
INSTANTIATE_TEST_SUITE_P(
    Sizes, TcpExactBytes,
    ::testing::Values(SizeCase{0, 2, kChunk}, SizeCase{1, 2, kChunk}, SizeCase{4095, 2, kChunk},
                      SizeCase{(1 << 20) + 3, 2, kChunk}, SizeCase{64 << 20, 2, kChunk},
                      SizeCase{1, 1, kChunk}, SizeCase{(1 << 20) + 3, 1, kChunk},
                      SizeCase{64 << 20, 1, kChunk}, SizeCase{0, 4, kChunk},
                      SizeCase{4095, 4, kChunk}, SizeCase{(1 << 20) + 3, 4, kChunk},
                      SizeCase{64 << 20, 4, kChunk}, SizeCase{100003, 3, 4096}));

TEST(TcpConnection, ManyMessagesInFlight) {
  TcpPair pair;
  tcp::TcpOptions options;
  options.chunkBytes = 64 << 10;  // several of the messages span sockets
  ASSERT_OK(connectPair(&pair, options));
  constexpr int kCount = 100;
  auto size = [](int i) { return static_cast<std::size_t>(i % 10 == 9 ? 300000 + i : i * 37); };
  std::vector<std::vector<std::uint8_t>> out(kCount), in(kCount);
  for (int i = 0; i < kCount; ++i) {
    out[i].resize(size(i));
    fillPattern(out[i].data(), out[i].size(), static_cast<std::uint32_t>(i));
    in[i].assign(size(i), 0);
  }
  for (int i = 0; i < kCount; ++i) ASSERT_OK(pair.a().postSend(out[i].data(), out[i].size()));
  EXPECT_EQ(pair.a().sendsPosted(), 100u);
  const auto st = onBoth([&](int rank) {
    if (rank == 0) return drain(pair.a());
    for (int i = 0; i < kCount; ++i)
      COHORT_RETURN_IF_ERROR(pair.b().postRecv(in[i].data(), size(i)));
    return drain(pair.b());
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  EXPECT_EQ(pair.b().recvsCompleted(), 100u);
  for (int i = 0; i < kCount; ++i) {
    EXPECT_EQ(checkPattern(in[i].data(), in[i].size(), static_cast<std::uint32_t>(i)), size(i))
        << "message " << i;
  }
}

TEST(TcpConnection, BothDirectionsAtOnce) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  constexpr std::size_t kBytes = (16 << 20) + 5;
  std::vector<std::vector<std::uint8_t>> out(2, std::vector<std::uint8_t>(kBytes));
  std::vector<std::vector<std::uint8_t>> in(2, std::vector<std::uint8_t>(kBytes));
  fillPattern(out[0].data(), kBytes, 100);
  fillPattern(out[1].data(), kBytes, 200);
  const auto st = onBoth([&](int rank) {
    Connection& c = rank == 0 ? pair.a() : pair.b();
    for (int round = 0; round < 3; ++round) {
      COHORT_RETURN_IF_ERROR(c.postSend(out[rank].data(), kBytes));
      COHORT_RETURN_IF_ERROR(c.postRecv(in[rank].data(), kBytes));
      COHORT_RETURN_IF_ERROR(drain(c));
    }
    return Status::Ok();
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  EXPECT_EQ(checkPattern(in[0].data(), kBytes, 200), kBytes);
  EXPECT_EQ(checkPattern(in[1].data(), kBytes, 100), kBytes);
}

void sumFloats(void* dst, const void* a, const void* b, std::size_t bytes, const void*) {
  auto* d = static_cast<float*>(dst);
  const auto* x = static_cast<const float*>(a);
  const auto* y = static_cast<const float*>(b);
  for (std::size_t i = 0; i < bytes / sizeof(float); ++i) d[i] = x[i] + y[i];
}

// Sums of small integers are exact in float, so every element has one right value.
void reduceCase(std::size_t count, bool inPlace) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  std::vector<float> sent(count), acc(count), dst(count, -1.0f);
  for (std::size_t i = 0; i < count; ++i) {
    sent[i] = static_cast<float>(i % 1000);
    acc[i] = static_cast<float>(3 * (i % 777) + 1);
  }
  if (inPlace) dst = acc;
  const Reduction sum{&sumFloats, nullptr, sizeof(float)};
  const auto st = onBoth([&](int rank) {
    if (rank == 0) {
      COHORT_RETURN_IF_ERROR(pair.a().postSend(sent.data(), count * sizeof(float)));
      return drain(pair.a());
    }
    COHORT_RETURN_IF_ERROR(
        pair.b().postRecv(dst.data(), count * sizeof(float), &sum, inPlace ? nullptr : acc.data()));
    return drain(pair.b());
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const float want = static_cast<float>(i % 1000) + static_cast<float>(3 * (i % 777) + 1);
    if (dst[i] != want && wrong++ < 5)
      ADD_FAILURE() << "element " << i << ": " << dst[i] << " vs " << want;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(TcpConnection, ReduceOnReceiveIntoSeparateOutput) { reduceCase((3 << 20) / 4 + 7, false); }
TEST(TcpConnection, ReduceOnReceiveInPlace) { reduceCase((5 << 20) / 4 + 1, true); }
TEST(TcpConnection, ReduceSmallMessage) { reduceCase(3, false); }

TEST(TcpConnection, NullBuffersAreRefused) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  EXPECT_ERROR(pair.a().postSend(nullptr, 8), kInvalidArgument, "send of 8 bytes from a null");
  EXPECT_ERROR(pair.b().postRecv(nullptr, 8), kInvalidArgument, "receive of 8 bytes into a null");
  EXPECT_EQ(pair.a().sendsPosted(), 0u);
  ASSERT_OK(pair.a().postSend(nullptr, 0));  // an empty message needs no buffer
  ASSERT_OK(pair.b().postRecv(nullptr, 0));
  const auto st = onBoth([&](int r) { return drain(r == 0 ? pair.a() : pair.b()); });
  EXPECT_OK(st[0]);
  EXPECT_OK(st[1]);
  EXPECT_EQ(pair.b().recvsCompleted(), 1u);
}

TEST(TcpConnection, ReductionElementMustDivideSizeAndChunk) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  std::vector<std::uint8_t> buf(12);
  const Reduction odd{&sumFloats, nullptr, 5};
  EXPECT_ERROR(pair.b().postRecv(buf.data(), 10, &odd), kInvalidArgument, "element size 5");
  const Reduction four{&sumFloats, nullptr, 4};
  EXPECT_ERROR(pair.b().postRecv(buf.data(), 10, &four), kInvalidArgument, "10 bytes");
}

TEST(TcpConnection, SizeMismatchFailsBothEnds) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  std::vector<std::uint8_t> out(200, 1), in(200, 0);
  ASSERT_OK(pair.a().postSend(out.data(), 200));
  ASSERT_OK(pair.b().postRecv(in.data(), 100));
  const auto st = onBoth([&](int rank) {
    if (rank == 1) return drain(pair.b());
    // The sender's own send completes; it learns at a later progress().
    COHORT_RETURN_IF_ERROR(pair.a().postRecv(in.data(), 8));
    return drain(pair.a(), 5000);
  });
  EXPECT_ERROR(st[1], kMismatch, "message 1 from rank 0 is 200 bytes");
  EXPECT_ERROR(st[1], kMismatch, "rank 1 posted a receive of 100 bytes");
  EXPECT_ERROR(st[0], kMismatch, "rank 1 reported: size mismatch");
  EXPECT_ERROR(st[0], kMismatch, "200 bytes");
  // Sticky: later calls return the same error.
  EXPECT_ERROR(pair.b().postSend(out.data(), 1), kMismatch, "100 bytes");
  EXPECT_ERROR(pair.a().progress(), kMismatch, "rank 1 reported");
}

TEST(TcpConnection, MismatchNoticedBeforeTheReceiveIsPosted) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  std::vector<std::uint8_t> out(64, 1), in(64, 0);
  ASSERT_OK(pair.a().postSend(out.data(), 64));
  ASSERT_OK(drain(pair.a()));
  // The header waits at rank 1 until a receive exists, then fails the match.
  for (int i = 0; i < 100; ++i) ASSERT_OK(pair.b().progress());
  ASSERT_OK(pair.b().postRecv(in.data(), 32));
  EXPECT_ERROR(drain(pair.b()), kMismatch, "64 bytes, but rank 1 posted a receive of 32 bytes");
}

// Rank 0 sends rank 1 a message far larger than the socket buffers and
// leaves part of it on the wire.
struct MidTransfer {
  static constexpr std::size_t kBytes = 64 << 20;
  std::vector<std::uint8_t> out = std::vector<std::uint8_t>(kBytes, 3);
  std::vector<std::uint8_t> in = std::vector<std::uint8_t>(kBytes);
  void start(TcpPair* pair) {
    ASSERT_OK(connectPair(pair));
    ASSERT_OK(pair->b().postRecv(in.data(), kBytes));
    ASSERT_OK(pair->a().postSend(out.data(), kBytes));
    for (int i = 0; i < 20; ++i) ASSERT_OK(pair->a().progress());
    ASSERT_EQ(pair->a().sendsCompleted(), 0u);
  }
};

TEST(TcpConnection, PeerClosingMidTransferFailsTheReceiver) {
  TcpPair pair;
  MidTransfer transfer;
  ASSERT_NO_FATAL_FAILURE(transfer.start(&pair));
  pair.ranks[0].conns[1].reset();  // rank 0 goes away
  const auto t0 = Clock::now();
  const Status s = drain(pair.b(), 10000);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("connection to rank 0 (127.0.0.1:"), std::string::npos)
      << s.toString();
  EXPECT_TRUE(s.message().find("closed") != std::string::npos ||
              s.message().find("reset") != std::string::npos)
      << s.toString();
}

TEST(TcpConnection, PeerClosingFailsTheBlockedSender) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  constexpr std::size_t kBytes = 64 << 20;  // far more than the socket buffers hold
  std::vector<std::uint8_t> out(kBytes, 3);
  ASSERT_OK(pair.a().postSend(out.data(), kBytes));
  for (int i = 0; i < 20; ++i) ASSERT_OK(pair.a().progress());
  pair.ranks[1].conns[0].reset();  // the receiver goes away, its buffers unread
  const auto t0 = Clock::now();
  const Status s = drain(pair.a(), 10000);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("rank 0: connection to rank 1"), std::string::npos) << s.toString();
}

TEST(TcpConnection, IdleReceiverNoticesAClosedPeer) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  std::uint64_t word = 0;
  ASSERT_OK(pair.b().postRecv(&word, sizeof(word)));
  pair.ranks[0].conns[1].reset();
  EXPECT_ERROR(drain(pair.b(), 5000, "step 3"), kRemoteError,
               "step 3: rank 1: connection to rank 0");
}

// An aborted connection tells the peer why (the store with the failure note may
// be gone with the aborting rank): a timeout stays a timeout, any other cause
// is a remote error to the peer.
TEST(TcpConnection, AbortTellsThePeerWhy) {
  for (const ErrorCode code : {ErrorCode::kTimeout, ErrorCode::kOutOfMemory}) {
    TcpPair pair;
    ASSERT_OK(connectPair(&pair));
    std::uint64_t word = 0;
    ASSERT_OK(pair.b().postRecv(&word, sizeof(word)));
    pair.a().abort(Status(code, "rank 0: allreduce #3: rank 2 died"));
    EXPECT_EQ(pair.a().progress().code(), code);
    const Status s = drain(pair.b(), 5000);
    EXPECT_EQ(s.code(), code == ErrorCode::kTimeout ? code : ErrorCode::kRemoteError)
        << s.toString();
    EXPECT_NE(s.message().find("rank 1: connection to rank 0 ("), std::string::npos)
        << s.toString();
    EXPECT_NE(s.message().find("rank 0 reported: rank 0: allreduce #3: rank 2 died"),
              std::string::npos)
        << s.toString();
  }
}

// Mid-message, no frame can be sent: the peer sees the stream end.
TEST(TcpConnection, AbortMidMessageEndsThePeersReceive) {
  TcpPair pair;
  MidTransfer transfer;
  ASSERT_NO_FATAL_FAILURE(transfer.start(&pair));
  pair.a().abort(Status(ErrorCode::kTimeout, "late"));
  const Status s = drain(pair.b(), 10000);
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("closed by the peer"), std::string::npos) << s.toString();
  EXPECT_EQ(s.message().find("reported"), std::string::npos) << s.toString();
}

TEST(TcpConnection, DescribeNamesThePeerListener) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  EXPECT_EQ(pair.a().kind(), std::string("tcp"));
  EXPECT_EQ(pair.a().peer(), 1);
  EXPECT_EQ(pair.b().peer(), 0);
  EXPECT_EQ(pair.a().describe().rfind("127.0.0.1:", 0), 0u) << pair.a().describe();
  EXPECT_NE(pair.a().describe(), pair.b().describe());
  EXPECT_GE(pair.a().waitHint().fd, 0);
}

}  // namespace
}  // namespace cohort::transport::testing
