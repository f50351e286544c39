// Retried TCP links (HCCL_OP_RETRY_ENABLE; this test runs with L0 on, MaxCnt 3,
// HoldTime 2000 ms, IntervalTime 100 ms): a link broken mid-message, in either
// direction, with a reduction half applied, continues at the byte where it broke,
// every byte exact; a peer whose process is gone, or whose side of the link
// failed, is named at once instead of waited for; more breaks in one operation
// than MaxCnt fail naming the limit.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "tcp_pair.h"
#include "test_util.h"
#include "transport/tcp/tcp_connection.h"

namespace cohort::transport::testing {
namespace {

using Clock = std::chrono::steady_clock;

tcp::TcpConnection& tcpOf(Connection& c) { return static_cast<tcp::TcpConnection&>(c); }

// Ends every socket of `c` as a reset would: both ends see the stream end.
void breakLink(Connection& c) {
  auto& t = tcpOf(c);
  for (int i = 0; i < t.socketCount(); ++i) ::shutdown(t.socketFd(i), SHUT_RDWR);
  ::shutdown(t.ackSocketFd(), SHUT_RDWR);
}

TEST(TcpRetry, PolicyComesFromTheEnvironment) {
  const Config& c = Config::global();
  EXPECT_TRUE(c.retryL0);
  EXPECT_EQ(c.retryMaxCnt, 3);
  EXPECT_EQ(c.retryHoldMs, 2000);
  EXPECT_EQ(c.retryIntervalMs, 100);
}

// Drives `c` (this thread's end) until idle, ending its sockets once it has
// read `at` bytes: a break at a known point of the transfer.
Status driveBreakingAt(Connection& c, std::uint64_t at) {
  bool broke = at == 0;
  const auto until = Clock::now() + std::chrono::seconds(20);
  while (!c.idle()) {
    COHORT_RETURN_IF_ERROR(c.progress());
    if (!broke && tcpOf(c).bytesRead() >= at) {
      if (c.idle()) break;  // all of it arrived in one progress() call
      breakLink(c);
      broke = true;
    }
    if (Clock::now() > until) {
      return Status(ErrorCode::kTimeout, "the transfer did not finish: " + tcpOf(c).retryState());
    }
  }
  return broke ? Status::Ok() : Status(ErrorCode::kInternal, "ended before the break point");
}

// Both directions at once, three rounds, the link broken while data flows (by
// one end in rounds 0 and 2, the other in round 1; MaxCnt 3 bounds a test
// pair's whole life): every byte arrives exactly once.
TEST(TcpRetry, BreaksMidTransferLoseNothing) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  constexpr std::size_t kBytes = (24 << 20) + 5;
  std::vector<std::vector<std::uint8_t>> out(2, std::vector<std::uint8_t>(kBytes));
  std::vector<std::vector<std::uint8_t>> in(2, std::vector<std::uint8_t>(kBytes));
  fillPattern(out[0].data(), kBytes, 11);
  fillPattern(out[1].data(), kBytes, 22);
  for (int round = 0; round < 3; ++round) {
    std::fill(in[0].begin(), in[0].end(), 0);
    std::fill(in[1].begin(), in[1].end(), 0);
    const auto st = onBoth([&](int rank) {
      Connection& c = rank == 0 ? pair.a() : pair.b();
      const std::uint64_t before = tcpOf(c).bytesRead();
      COHORT_RETURN_IF_ERROR(c.postSend(out[rank].data(), kBytes));
      COHORT_RETURN_IF_ERROR(c.postRecv(in[rank].data(), kBytes));
      const bool breaks = round % 2 == rank;
      return driveBreakingAt(c, breaks ? before + kBytes / (2 + round) : 0);
    });
    ASSERT_TRUE(st[0].ok()) << "round " << round << ": " << st[0].toString();
    ASSERT_TRUE(st[1].ok()) << "round " << round << ": " << st[1].toString();
    EXPECT_EQ(checkPattern(in[0].data(), kBytes, 22), kBytes) << "round " << round;
    EXPECT_EQ(checkPattern(in[1].data(), kBytes, 11), kBytes) << "round " << round;
  }
  EXPECT_EQ(tcpOf(pair.a()).reconnections(), 3u);
  EXPECT_EQ(tcpOf(pair.a()).reconnections(), tcpOf(pair.b()).reconnections());
}

void sumInts(void* dst, const void* a, const void* b, std::size_t bytes, const void*) {
  auto* d = static_cast<std::int32_t*>(dst);
  const auto* x = static_cast<const std::int32_t*>(a);
  const auto* y = static_cast<const std::int32_t*>(b);
  for (std::size_t i = 0; i < bytes / sizeof(std::int32_t); ++i) d[i] = x[i] + y[i];
}

// An in-place reduction is applied once per element, however the link breaks:
// the stream resumes after the last byte read, never before it.
TEST(TcpRetry, InPlaceReductionIsAppliedOnce) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  constexpr std::size_t kCount = (48 << 20) / 4 + 3;
  std::vector<std::int32_t> sent(kCount), acc(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    sent[i] = static_cast<std::int32_t>(i % 1013);
    acc[i] = static_cast<std::int32_t>(7 * (i % 331));
  }
  const Reduction sum{&sumInts, nullptr, sizeof(std::int32_t)};
  const auto st = onBoth([&](int rank) {
    if (rank == 0) {
      COHORT_RETURN_IF_ERROR(pair.a().postSend(sent.data(), kCount * 4));
      return drain(pair.a());
    }
    COHORT_RETURN_IF_ERROR(pair.b().postRecv(acc.data(), kCount * 4, &sum));
    // An odd byte count: the break lands inside an element.
    return driveBreakingAt(pair.b(), tcpOf(pair.b()).bytesRead() + kCount + 1);
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    const auto want = static_cast<std::int32_t>(i % 1013 + 7 * (i % 331));
    if (acc[i] != want && wrong++ < 5) ADD_FAILURE() << "element " << i << ": " << acc[i];
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(tcpOf(pair.a()).reconnections(), 1u);
}

// Many small messages in flight when the link breaks between and inside them.
TEST(TcpRetry, SmallMessagesKeepTheirOrder) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  constexpr int kMessages = 2000;
  std::vector<std::uint32_t> out(kMessages), in(kMessages, 0);
  for (int i = 0; i < kMessages; ++i) out[static_cast<std::size_t>(i)] = 0x9e3779b9u * (i + 1);
  const auto st = onBoth([&](int rank) {
    for (int i = 0; i < kMessages; ++i) {
      if (rank == 0) {
        COHORT_RETURN_IF_ERROR(pair.a().postSend(&out[static_cast<std::size_t>(i)], 4));
        if (i == 700) breakLink(pair.a());
        if (i % 100 == 99) COHORT_RETURN_IF_ERROR(drain(pair.a()));
      } else {
        COHORT_RETURN_IF_ERROR(pair.b().postRecv(&in[static_cast<std::size_t>(i)], 4));
        if (i == 1500) breakLink(pair.b());
        if (i % 100 == 99) COHORT_RETURN_IF_ERROR(drain(pair.b()));
      }
    }
    return drain(rank == 0 ? pair.a() : pair.b());
  });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  EXPECT_EQ(in, out);
  // (The second break may find both ends done: an idle link is mended when next used.)
  EXPECT_GE(tcpOf(pair.a()).reconnections(), 1u);
}

// The peer's process is gone (its listeners closed with it): the break is
// reported at once, naming the peer, not after HoldTime.
TEST(TcpRetry, PeerGoneIsNamedAtOnce) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  pair.ranks[1].conns.clear();
  pair.ranks[1].transport.reset();
  std::vector<std::uint8_t> buf(1 << 20, 1);
  const auto start = Clock::now();
  Status s = pair.a().postSend(buf.data(), buf.size());
  if (s.ok()) s = pair.a().postRecv(buf.data(), 16);
  if (s.ok()) s = drain(pair.a(), 10000);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 1 refuses to re-establish it: nothing listens"),
            std::string::npos)
      << s.toString();
  EXPECT_LT(ms, 1500) << s.toString();
}

// The peer's side failed (an abort): a dial to it is refused, and says so.
TEST(TcpRetry, PeerThatFailedRefusesTheReconnection) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  pair.b().abort(Status(ErrorCode::kAborted, "rank 1 gave up"));
  breakLink(pair.a());  // mid-frame: no error frame reaches rank 0
  std::vector<std::uint8_t> buf(64);
  Status s = pair.a().postRecv(buf.data(), buf.size());
  if (s.ok()) s = drain(pair.a(), 10000);
  EXPECT_FALSE(s.ok());
  const bool named = s.message().find("gave up") != std::string::npos ||
                     s.message().find("its side of the link failed") != std::string::npos;
  EXPECT_TRUE(named) << s.toString();
}

// More breaks in one operation than MaxCnt (3) allows: the fourth fails, naming
// the limit. (A test pair counts its whole life as one operation.)
TEST(TcpRetry, MaxCntBoundsTheBreaksOfAnOperation) {
  TcpPair pair;
  ASSERT_OK(connectPair(&pair));
  std::uint32_t word = 5, got = 0;
  Status s;
  for (int k = 0; k < 4 && s.ok(); ++k) {
    breakLink(pair.a());
    const auto st = onBoth([&](int rank) {
      if (rank == 0) {
        COHORT_RETURN_IF_ERROR(pair.a().postSend(&word, 4));
        return drain(pair.a(), 5000);
      }
      COHORT_RETURN_IF_ERROR(pair.b().postRecv(&got, 4));
      return drain(pair.b(), 5000);
    });
    s = st[0].ok() ? st[1] : st[0];
    if (k < 3) {
      ASSERT_TRUE(s.ok()) << "break " << k + 1 << ": " << s.toString();
    }
  }
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("MaxCnt"), std::string::npos) << s.toString();
}

}  // namespace
}  // namespace cohort::transport::testing
