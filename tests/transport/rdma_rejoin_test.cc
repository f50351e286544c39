// Retrying a broken RDMA link (HCCL_OP_RETRY_ENABLE): two connections over
// in-memory queue pairs whose wire the tests cut, rejoining through real
// reconnect hubs on 127.0.0.1 (the side channel is the real one; only the
// queue pairs are fakes). Every transfer is checked byte for byte.
#include "transport/rdma/rdma_rejoin.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "test_util.h"
#include "transport/rdma_fake_qp.h"

namespace cohort::transport::rdma {
namespace {

using fake::FakePair;
using fake::FakeQpMaker;
using fake::pattern;
using fake::sumInt32;
namespace asio = boost::asio;

Handshake hello(int from, int to) {
  Handshake h = Handshake::local(ChannelKind::kReconnect, JobToken::fromText("rejoin-test"));
  h.fromRank = from;
  h.toRank = to;
  h.worldSize = 2;
  return h;
}

// Two ranks' hubs and the rejoiners of their connections to each other.
struct Retrying {
  tcp::RetryPolicy policy;
  std::shared_ptr<tcp::ReconnectHub> hub[2];
  int port[2] = {0, 0};
  std::atomic<std::uint64_t> operations{0};
  asio::ip::tcp::endpoint peerHub[2];  // where rank i dials: rank 1 - i's hub

  explicit Retrying(int maxCnt = 3, int holdMs = 5000, int intervalMs = 0) {
    policy.enabled = true;
    policy.maxCnt = maxCnt;
    policy.hold = std::chrono::milliseconds(holdMs);
    policy.interval = std::chrono::milliseconds(intervalMs);
    for (int i = 0; i < 2; ++i) {
      hub[i] = std::make_shared<tcp::ReconnectHub>(tcp::TcpOptions::fromConfig(), hello(i, i));
      EXPECT_OK(hub[i]->listen("127.0.0.1", &port[i]));
    }
    for (int i = 0; i < 2; ++i) {
      peerHub[i] = asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(port[1 - i]));
    }
  }

  FakePair::Resilience factory() {
    return [this](int rank, fake::FakeNic* nic) {
      HubRejoiner::Ends ends;
      ends.hub = hub[rank];
      ends.peerHub = peerHub[rank];
      ends.hello = hello(rank, 1 - rank);
      ends.options = tcp::TcpOptions::fromConfig();
      ends.peerRank = 1 - rank;
      ends.dials = rank == 0;
      ends.where = fmt::format("rank {} <-> rank {}", rank, 1 - rank);
      auto r = std::make_unique<RdmaResilience>();
      r->policy = policy;
      r->rejoiner =
          std::make_unique<HubRejoiner>(std::move(ends), std::make_unique<FakeQpMaker>(nic));
      r->operations = &operations;
      return r;
    };
  }
};

// Progresses both ends until both are idle, the first error wins; the side
// channel needs real time, so this gives it up to `seconds`.
Status pumpFor(FakePair& p, double seconds = 10) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    bool idle = true;
    for (auto& c : p.conn) {
      if (!c) continue;
      COHORT_RETURN_IF_ERROR(c->progress());
      idle = idle && c->idle();
    }
    if (idle) return Status::Ok();
  }
  return Status(ErrorCode::kTimeout, "fake pair not idle in time");
}

// Progresses one end until it fails (or `seconds` pass).
Status pumpOneUntilError(RdmaConnection& c, double seconds = 10) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    Status s = c.progress();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

TEST(RdmaRejoinTest, RecordRoundTripAndRefusals) {
  RejoinRecord in{0x123456, 0xabcdef, ResumePoint{1ull << 40, (1ull << 40) - 16}};
  const auto bytes = in.encode();
  ASSERT_EQ(bytes.size(), RejoinRecord::kBytes);
  RejoinRecord out;
  ASSERT_TRUE(RejoinRecord::decode(bytes.data(), &out));
  EXPECT_EQ(out.qpn, in.qpn);
  EXPECT_EQ(out.psn, in.psn);
  EXPECT_EQ(out.at.arrived, in.at.arrived);
  EXPECT_EQ(out.at.consumed, in.at.consumed);
  auto bad = bytes;
  bad[0] ^= 1;
  EXPECT_FALSE(RejoinRecord::decode(bad.data(), &out));  // magic
  bad = RejoinRecord{0x1000000, 1, {}}.encode();
  EXPECT_FALSE(RejoinRecord::decode(bad.data(), &out));  // a qpn beyond 24 bits
}

// The wire is cut while chunks of both directions are in flight (some
// delivered, some not): both ends replace their queue pairs and every byte
// arrives once, including a reduction that was half applied.
TEST(RdmaRejoinTest, ACutMidTransferResumesWhereThePeerStands) {
  Retrying retrying;
  FakePair p(true, retrying.factory());
  const std::size_t n = 3 * (std::size_t{1} << 20) + 12;  // many chunks, more than a ring
  const auto a = pattern(n, 1), b = pattern(n, 2);
  std::vector<std::uint8_t> atB(n, 0xee), atA(n, 0xee);
  constexpr std::size_t kInts = 200003;
  std::vector<std::int32_t> msg(kInts), sum(kInts);
  std::iota(msg.begin(), msg.end(), 5);
  for (std::size_t i = 0; i < kInts; ++i) sum[i] = static_cast<std::int32_t>(3 * i);
  const Reduction add{sumInt32, nullptr, 4};

  p.qp[0]->hold = true;  // rank 0's writes wait for the test
  ASSERT_OK(p.conn[0]->postSend(a.data(), n));
  ASSERT_OK(p.conn[0]->postSend(msg.data(), kInts * 4));
  ASSERT_OK(p.conn[1]->postSend(b.data(), n));
  ASSERT_OK(p.conn[1]->postRecv(atB.data(), n));
  ASSERT_OK(p.conn[1]->postRecv(sum.data(), kInts * 4, &add));
  ASSERT_OK(p.conn[0]->postRecv(atA.data(), n));
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(p.conn[0]->progress());
    ASSERT_OK(p.conn[1]->progress());
    p.qp[0]->deliver(3);  // part of what rank 0 wrote gets through
  }
  p.qp[0]->cut();
  p.qp[0]->deliver(1);  // the next write finds the wire cut
  p.qp[0]->hold = false;

  ASSERT_OK(pumpFor(p));
  EXPECT_TRUE(atB == a);
  EXPECT_TRUE(atA == b);
  for (std::size_t i = 0; i < kInts; ++i) {
    ASSERT_EQ(sum[i], static_cast<std::int32_t>(3 * i + i + 5)) << "element " << i;
  }
  EXPECT_EQ(p.conn[0]->reconnections(), 1);
  EXPECT_EQ(p.conn[1]->reconnections(), 1);
  EXPECT_EQ(p.conn[0]->sendsCompleted(), 2u);
  EXPECT_EQ(p.conn[1]->recvsCompleted(), 2u);
  EXPECT_EQ(p.faults(), "");

  // The new queue pairs carry the next messages as the old ones did.
  const auto c = pattern(70000, 9);
  std::vector<std::uint8_t> atA2(c.size());
  ASSERT_OK(p.conn[1]->postSend(c.data(), c.size()));
  ASSERT_OK(p.conn[0]->postRecv(atA2.data(), atA2.size()));
  ASSERT_OK(pumpFor(p));
  EXPECT_TRUE(atA2 == c);
}

// Only one end writes when the wire is cut, so only it sees the break; the
// other end learns of it from the side channel (a dial from the lower rank,
// a knock from the higher one).
class RdmaRejoinOneSided : public ::testing::TestWithParam<int> {};

TEST_P(RdmaRejoinOneSided, TheEndThatDidNotWriteRejoinsToo) {
  const int writer = GetParam();
  Retrying retrying;
  FakePair p(true, retrying.factory());
  const std::size_t n = 2 * (std::size_t{1} << 20) + 5;
  const auto a = pattern(n, 3);
  std::vector<std::uint8_t> got(n, 0);
  p.qp[writer]->hold = true;
  ASSERT_OK(p.conn[writer]->postSend(a.data(), n));
  ASSERT_OK(p.conn[1 - writer]->postRecv(got.data(), n));
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(p.conn[writer]->progress());
    ASSERT_OK(p.conn[1 - writer]->progress());
    p.qp[writer]->deliver(2);
  }
  p.qp[writer]->cut();
  p.qp[writer]->deliver(1);
  p.qp[writer]->hold = false;
  ASSERT_OK(pumpFor(p));
  EXPECT_TRUE(got == a);
  EXPECT_EQ(p.conn[0]->reconnections(), 1);
  EXPECT_EQ(p.conn[1]->reconnections(), 1);
  EXPECT_EQ(p.faults(), "");
}

INSTANTIATE_TEST_SUITE_P(Writer, RdmaRejoinOneSided, ::testing::Values(0, 1),
                         [](const auto& info) { return info.param == 0 ? "Lower" : "Higher"; });

// MaxCnt breaks in one operation are ridden out; one more fails the link on
// the end that saw it, naming MaxCnt, and the peer's next attempt is refused.
TEST(RdmaRejoinTest, MoreBreaksThanMaxCntInOneOperationFail) {
  Retrying retrying(/*maxCnt=*/1);
  FakePair p(true, retrying.factory());
  const std::size_t n = std::size_t{4} << 20;
  const auto a = pattern(n, 4);
  std::vector<std::uint8_t> got(n, 0);
  p.qp[0]->cut();  // the first write breaks it: one break, allowed
  ASSERT_OK(p.conn[0]->postSend(a.data(), n));
  ASSERT_OK(p.conn[1]->postRecv(got.data(), n));
  for (int i = 0; i < 200 && p.conn[0]->reconnections() == 0; ++i) {
    ASSERT_OK(p.conn[0]->progress());
    ASSERT_OK(p.conn[1]->progress());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(p.conn[0]->reconnections(), 1);
  // Cut the new wire too, within the same operation.
  for (auto& [qpn, qp] : p.nic.qps) qp->cut();
  Status s = pumpFor(p, 5);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("MaxCnt"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("rank 0 fake qpn"), std::string::npos) << s.toString();
}

// A peer whose hub is gone (its process ended) is not waited for: the end
// that saw the break says the peer refuses, at once.
TEST(RdmaRejoinTest, APeerWithoutAHubIsReportedGone) {
  Retrying retrying;
  FakePair p(true, retrying.factory());
  const auto a = pattern(100000, 5);
  // Rank 1's process ends: nothing it says reaches rank 0 (no CLOSE), and its
  // hub goes with it.
  p.qp[0]->cut();
  p.qp[1]->cut();
  p.conn[1].reset();
  retrying.hub[1].reset();
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  const auto start = std::chrono::steady_clock::now();
  Status s = pumpOneUntilError(*p.conn[0], 5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("refuses to re-establish"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("nothing listens"), std::string::npos) << s.toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// A side channel that never answers (a link kept down) fails after HoldTime,
// naming the link and the policy.
TEST(RdmaRejoinTest, ALinkDownLongerThanHoldTimeFails) {
  Retrying retrying(/*maxCnt=*/3, /*holdMs=*/400, /*intervalMs=*/100);
  // Rank 0 dials a listener that accepts but never answers a handshake.
  const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(silent, 8), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &len);
  retrying.peerHub[0] =
      asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), ntohs(addr.sin_port));
  FakePair p(true, retrying.factory());
  const auto a = pattern(100000, 6);
  p.qp[0]->cut();
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  Status s = pumpOneUntilError(*p.conn[0], 5);
  ::close(silent);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kConnectionError) << s.toString();
  EXPECT_NE(s.message().find("HoldTime"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("not re-established within 400 ms"), std::string::npos)
      << s.toString();
}

// Without a retry policy a cut wire fails the operation, as before.
TEST(RdmaRejoinTest, WithoutRetryACutFails) {
  FakePair p;
  const auto a = pattern(100000, 7);
  p.qp[0]->cut();
  Status s = p.conn[0]->postSend(a.data(), a.size());
  if (s.ok()) s = pumpOneUntilError(*p.conn[0], 2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("wc status 12"), std::string::npos) << s.toString();
}

}  // namespace
}  // namespace cohort::transport::rdma
