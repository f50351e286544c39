// Bringing TCP connections up: who dials, refused and silent peers, hostile
// clients on the listener, timeouts, and ranks connecting in clashing orders.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <thread>

#include "common/error.h"
#include "tcp_pair.h"
#include "test_util.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_transport.h"

namespace cohort::transport::testing {
namespace {

std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }
Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

// A bound (and, if asked, listening) IPv4 loopback socket; its port.
int loopbackSocket(bool listening, int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  if (listening) ::listen(fd, 8);
  *port = ntohs(a.sin_port);
  return fd;
}

TransportContext context(int rank, long timeoutMs, const std::string& token = "tcp-test") {
  TransportContext ctx;
  ctx.rank = rank;
  ctx.size = 2;
  ctx.self.rank = rank;
  ctx.token = JobToken::fromText(token);
  ctx.connectDeadline = Deadline::afterMs(timeoutMs);
  return ctx;
}

PeerInfo peerInfo(int rank) {
  PeerInfo p;
  p.rank = rank;
  p.address = "127.0.0.1";
  return p;
}

TEST(TcpConnect, BlobNamesTheListener) {
  auto t = makeTcpTransport(context(0, 1000));
  EXPECT_STREQ(t->name(), "tcp");
  EXPECT_EQ(t->rejectReason(peerInfo(1)), "");
  Bytes blob;
  ASSERT_OK(t->setup(&blob));
  EXPECT_EQ(text(blob).rfind("tcp1 127.0.0.1 ", 0), 0u) << text(blob);
  Bytes again;
  ASSERT_OK(t->setup(&again));
  EXPECT_EQ(blob, again);
}

// A communicator's own retry settings (HcclCommConfig's hcclRetryEnable) rule its
// links, whatever the environment says (here: nothing): retried links carry an ack
// socket; ranks that disagree are told so at connect time.
TEST(TcpConnect, ACommunicatorsOwnRetrySettingsRuleItsLinks) {
  TransportContext::Retry on;
  on.l0 = true;
  on.maxCnt = 3;
  TcpJob job;
  job.retry = {on, on};
  std::vector<TcpRank> ranks = connectJob(job);
  for (int r = 0; r < 2; ++r) {
    ASSERT_OK(ranks[static_cast<std::size_t>(r)].status);
    const auto& c = static_cast<const tcp::TcpConnection&>(
        *ranks[static_cast<std::size_t>(r)].conns[static_cast<std::size_t>(1 - r)]);
    EXPECT_GE(c.ackSocketFd(), 0) << "rank " << r;
  }
  TcpJob plain;
  std::vector<TcpRank> without = connectJob(plain);
  ASSERT_OK(without[0].status);
  EXPECT_LT(static_cast<const tcp::TcpConnection&>(*without[0].conns[1]).ackSocketFd(), 0);
  TcpJob mixed;
  mixed.retry = {on, std::nullopt};
  mixed.timeoutMs = 1000;  // rank 1 waits for the sockets rank 0 refuses to dial
  std::vector<TcpRank> disagree = connectJob(mixed);
  EXPECT_ERROR(disagree[0].status, kInvalidUsage, "disagree on retrying their link");
}

TEST(TcpConnect, WrongTokenIsRefused) {
  TcpJob job;
  job.tokens = {JobToken::fromText("job-a"), JobToken::fromText("job-b")};
  job.timeoutMs = 1500;
  auto ranks = connectJob(job);
  // The dialer (rank 0) is dropped during the handshake; the acceptor logs why
  // and times out waiting for a valid peer, naming the refusal.
  EXPECT_ERROR(ranks[0].status, kConnectionError, "refused this rank (token mismatch");
  EXPECT_ERROR(ranks[0].status, kConnectionError, "rank 0 (127.0.0.1:");
  EXPECT_ERROR(ranks[1].status, kTimeout, "timed out after");
  EXPECT_ERROR(ranks[1].status, kTimeout, "token mismatch");
  EXPECT_ERROR(ranks[1].status, kTimeout, "rank 1 (127.0.0.1:");
}

TEST(TcpConnect, ConnectionRefusedNamesBothEnds) {
  int port = 0;
  ::close(loopbackSocket(false, &port));  // a port nobody listens on
  auto t = makeTcpTransport(context(0, 800));
  Bytes blob;
  ASSERT_OK(t->setup(&blob));
  std::unique_ptr<Connection> c;
  const Status s =
      t->connect(peerInfo(1), bytes("tcp1 127.0.0.1 " + std::to_string(port) + " 2 524288"), &c);
  EXPECT_ERROR(s, kConnectionError, "connection refused");
  EXPECT_ERROR(s, kConnectionError, "-> rank 1 (127.0.0.1:" + std::to_string(port) + ")");
  EXPECT_ERROR(s, kConnectionError, "rank 0 (127.0.0.1:");
  EXPECT_EQ(c, nullptr);
}

TEST(TcpConnect, UnansweredHandshakeTimesOut) {
  int port = 0;
  const int fd = loopbackSocket(true, &port);  // accepts in the kernel, never answers
  auto t = makeTcpTransport(context(0, 700));
  Bytes blob;
  ASSERT_OK(t->setup(&blob));
  std::unique_ptr<Connection> c;
  const Status s =
      t->connect(peerInfo(1), bytes("tcp1 127.0.0.1 " + std::to_string(port) + " 2 524288"), &c);
  EXPECT_ERROR(s, kTimeout, "rank 1 (127.0.0.1:" + std::to_string(port) + ")");
  // The time is measured (0.7 s, more when the machine is slow to notice the deadline).
  std::smatch m;
  const std::string message = s.message();
  ASSERT_TRUE(std::regex_search(message, m, std::regex(R"(timed out after (\d+\.\d) s)")))
      << message;
  EXPECT_GE(std::stod(m[1]), 0.1) << message;
  EXPECT_LT(std::stod(m[1]), 3.0) << message;
  ::close(fd);
}

TEST(TcpConnect, AbsentDialerTimesOut) {
  auto t = makeTcpTransport(context(1, 500));
  Bytes blob;
  ASSERT_OK(t->setup(&blob));
  std::unique_ptr<Connection> c;
  const Status s = t->connect(peerInfo(0), bytes("tcp1 127.0.0.1 9 2 524288"), &c);
  EXPECT_ERROR(s, kTimeout, "0 of 2 sockets arrived");
  // The time is measured (0.5 s, more when the machine is slow to notice the deadline).
  std::smatch m;
  const std::string message = s.message();
  ASSERT_TRUE(std::regex_search(
      message, m, std::regex(R"(<- rank 0 \(127\.0\.0\.1:9\): timed out after (\d+\.\d) s)")))
      << message;
  EXPECT_GE(std::stod(m[1]), 0.1) << message;
  EXPECT_LT(std::stod(m[1]), 3.0) << message;
}

TEST(TcpConnect, MalformedBlobAndBadPeer) {
  auto t = makeTcpTransport(context(0, 500));
  std::unique_ptr<Connection> c;
  EXPECT_ERROR(t->connect(peerInfo(1), bytes("tcp1 127.0.0.1 80 2 1"), &c), kInvalidUsage,
               "before setup()");
  Bytes blob;
  ASSERT_OK(t->setup(&blob));
  EXPECT_ERROR(t->connect(peerInfo(1), bytes("garbage"), &c), kInvalidArgument,
               "the tcp blob of rank 1 is malformed");
  EXPECT_ERROR(t->connect(peerInfo(1), bytes("tcp1 127.0.0.1 0 2 524288"), &c), kInvalidArgument,
               "malformed");
  EXPECT_ERROR(t->connect(peerInfo(0), blob, &c), kInvalidUsage, "not a valid peer");
}

// Hostile and silent clients on the listener do not stop a real peer.
TEST(TcpConnect, GarbageAndSilentClientsAreDropped) {
  auto t1 = makeTcpTransport(context(1, 5000));
  Bytes blob1;
  ASSERT_OK(t1->setup(&blob1));
  const int port = std::stoi(text(blob1).substr(std::string("tcp1 127.0.0.1 ").size()));
  int unused = 0;
  const int silent = loopbackSocket(false, &unused);
  const int noisy = loopbackSocket(false, &unused);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ASSERT_EQ(::connect(silent, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::connect(noisy, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  const std::string junk(64, 'x');
  ASSERT_EQ(::write(noisy, junk.data(), junk.size()), 64);

  auto t0 = makeTcpTransport(context(0, 5000));
  Bytes blob0;
  ASSERT_OK(t0->setup(&blob0));
  std::unique_ptr<Connection> c0, c1;
  std::thread dialer([&] { ASSERT_OK(t0->connect(peerInfo(1), blob1, &c0)); });
  ASSERT_OK(t1->connect(peerInfo(0), blob0, &c1));
  dialer.join();
  ASSERT_NE(c0, nullptr);
  std::uint32_t ping = 42, got = 0;
  ASSERT_OK(c0->postSend(&ping, 4));
  ASSERT_OK(c1->postRecv(&got, 4));
  ASSERT_OK(drain(*c0));
  ASSERT_OK(drain(*c1));
  EXPECT_EQ(got, 42u);
  ::close(silent);
  ::close(noisy);
}

// The pair uses the dialing (lower) rank's socket count and chunk size.
TEST(TcpConnect, DialerOptionsDecide) {
  TcpJob job;
  job.options.resize(2);
  job.options[0].socketsPerPeer = 4;
  job.options[0].chunkBytes = 8192;
  job.options[1].socketsPerPeer = 1;
  auto ranks = connectJob(job);
  ASSERT_OK(ranks[0].status);
  ASSERT_OK(ranks[1].status);
  auto& a = static_cast<tcp::TcpConnection&>(*ranks[0].conns[1]);
  auto& b = static_cast<tcp::TcpConnection&>(*ranks[1].conns[0]);
  EXPECT_EQ(a.socketCount(), 4);
  EXPECT_EQ(b.socketCount(), 4);
  std::vector<std::uint8_t> out(100000), in(100000);
  fillPattern(out.data(), out.size(), 5);
  ASSERT_OK(b.postSend(out.data(), out.size()));
  ASSERT_OK(a.postRecv(in.data(), in.size()));
  const auto st = onBoth([&](int r) { return drain(r == 0 ? static_cast<Connection&>(a) : b); });
  ASSERT_OK(st[0]);
  ASSERT_OK(st[1]);
  EXPECT_EQ(checkPattern(in.data(), in.size(), 5), in.size());
}

// Four ranks, each connecting its peers in a different order: the listener is
// served while a rank dials, so no order deadlocks.
TEST(TcpConnect, ClashingOrdersDoNotDeadlock) {
  TcpJob job;
  job.size = 4;
  job.timeoutMs = 10000;
  job.order = [](int rank) {
    std::vector<int> peers;
    for (int i = 0; i < 4; ++i) peers.push_back((rank % 2 == 0) ? 3 - i : (rank + i) % 4);
    return peers;
  };
  auto ranks = connectJob(job);
  for (int r = 0; r < 4; ++r) ASSERT_OK(ranks[r].status);
  std::vector<std::thread> threads;
  std::vector<Status> st(4);
  std::vector<std::vector<std::uint32_t>> got(4, std::vector<std::uint32_t>(4, 0));
  std::vector<std::uint32_t> mine(4);
  for (int r = 0; r < 4; ++r) {
    mine[r] = 1000 + r;
    threads.emplace_back([&, r] {
      std::vector<Connection*> conns;
      for (int p = 0; p < 4; ++p) {
        if (p == r) continue;
        Connection* c = ranks[r].conns[p].get();
        conns.push_back(c);
        Status s = c->postSend(&mine[r], 4);
        if (s.ok()) s = c->postRecv(&got[r][p], 4);
        if (!s.ok()) {
          st[r] = s;
          return;
        }
      }
      st[r] = waitIdle(conns.data(), conns.size(), Deadline::afterMs(5000), "all-to-all");
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 4; ++r) {
    ASSERT_OK(st[r]);
    for (int p = 0; p < 4; ++p) {
      if (p != r) {
        EXPECT_EQ(got[r][p], 1000u + p) << "rank " << r << " from " << p;
      }
    }
  }
}

}  // namespace
}  // namespace cohort::transport::testing
