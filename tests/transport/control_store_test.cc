// The TCP store over a real server on 127.0.0.1: every operation, waits that
// block and time out, many clients and threads at once, connect retries.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <thread>
#include <vector>

#include "common/error.h"
#include "test_util.h"
#include "transport/peer_info.h"
#include "transport/store.h"
#include "transport/tcp_store.h"

namespace cohort::transport {
namespace {

using namespace std::chrono_literals;

const JobToken kToken = JobToken::fromText("control-store-test");

std::shared_ptr<TcpStoreServer> startServer(StoreServerOptions options = {}) {
  options.token = kToken;
  std::shared_ptr<TcpStoreServer> server;
  const Status s = TcpStoreServer::start(options, &server);
  EXPECT_TRUE(s.ok()) << s.toString();
  return server;
}

std::shared_ptr<Store> connect(const TcpStoreServer& server, int rank) {
  std::shared_ptr<Store> store;
  const Status s =
      connectTcpStore("127.0.0.1", server.port(), kToken, rank, Deadline::after(5s), &store);
  EXPECT_TRUE(s.ok()) << s.toString();
  return store;
}

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A port nobody listens on right now (a server's ephemeral port, then closed).
int freePort() {
  auto server = startServer();
  return server ? server->port() : 0;
}

TEST(ControlStoreTest, SetGetCheckAddWaitRoundTrip) {
  auto server = startServer();
  ASSERT_TRUE(server);
  auto store = connect(*server, 0);
  ASSERT_TRUE(store);
  Bytes big(1 << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7 + 3);
  ASSERT_OK(store->set("big", big));
  ASSERT_OK(store->set("empty", Bytes()));
  ASSERT_OK(store->set("name", text("alpha")));
  ASSERT_OK(store->set("name", text("beta")));  // overwrite
  Bytes value;
  ASSERT_OK(store->get("big", &value, Deadline::after(2s)));
  EXPECT_EQ(value, big);
  ASSERT_OK(store->get("empty", &value, Deadline::after(2s)));
  EXPECT_TRUE(value.empty());
  ASSERT_OK(store->get("name", &value, Deadline::after(2s)));
  EXPECT_EQ(value, text("beta"));
  bool exists = false;
  ASSERT_OK(store->check("name", &exists));
  EXPECT_TRUE(exists);
  ASSERT_OK(store->check("nothing", &exists));
  EXPECT_FALSE(exists);
  std::int64_t sum = 0;
  ASSERT_OK(store->add("counter", 5, &sum));
  EXPECT_EQ(sum, 5);
  ASSERT_OK(store->add("counter", -7, &sum));
  EXPECT_EQ(sum, -2);
  ASSERT_OK(store->get("counter", &value, Deadline::after(2s)));
  EXPECT_EQ(decodeInt(value), -2);
  ASSERT_OK(store->wait({"big", "empty", "counter"}, Deadline::after(2s)));
  ASSERT_OK(store->wait({}, Deadline::after(2s)));
  EXPECT_EQ(server->refusedCount(), 0);
}

// A communicator offers a standby store only when its store lives in another
// process: a TCP client's, not a memory store's (nor a prefix over one).
TEST(ControlStoreTest, OnlyAMemoryStoreLivesInThisProcess) {
  auto server = startServer();
  auto client = connect(*server, 0);
  auto memory = std::make_shared<MemoryStore>();
  EXPECT_FALSE(client->inProcess());
  EXPECT_FALSE(PrefixStore(client, "p").inProcess());
  EXPECT_TRUE(memory->inProcess());
  EXPECT_TRUE(PrefixStore(memory, "p").inProcess());
}

// The standby store's port travels with the peer info; a peer info without it (a
// rank of an older version) still decodes, with none, so its version is named.
TEST(ControlStoreTest, PeerInfoCarriesTheStandbyPortAndMayLackIt) {
  PeerInfo in;
  in.rank = 3;
  in.hostId = "host/boot/net:1";
  in.pid = 4321;
  in.address = "10.0.0.7";
  in.libraryVersion = 7;
  in.protocolVersion = 9;
  in.standbyPort = 40123;
  PeerInfo out;
  ASSERT_OK(PeerInfo::decode(in.encode(), &out));
  EXPECT_EQ(out.standbyPort, 40123);
  EXPECT_EQ(out.address, "10.0.0.7");
  EXPECT_EQ(out.pid, 4321);
  Bytes older = in.encode();
  older.resize(older.size() - 8);
  ASSERT_OK(PeerInfo::decode(older, &out));
  EXPECT_EQ(out.standbyPort, 0);
  EXPECT_EQ(out.protocolVersion, 9u);
  older.resize(older.size() - 1);
  EXPECT_FALSE(PeerInfo::decode(older, &out).ok());
}

TEST(ControlStoreTest, GetWaitsForALaterSet) {
  auto server = startServer();
  ASSERT_TRUE(server);
  auto reader = connect(*server, 1);
  auto writer = connect(*server, 0);
  ASSERT_TRUE(reader && writer);
  const auto start = Clock::now();
  std::thread late([&] {
    std::this_thread::sleep_for(200ms);
    EXPECT_OK(writer->set("late", text("here")));
  });
  Bytes value;
  EXPECT_OK(reader->get("late", &value, Deadline::after(10s)));
  late.join();
  EXPECT_EQ(value, text("here"));
  EXPECT_GE(secondsSince(start), 0.19);
  EXPECT_LT(secondsSince(start), 5.0);
}

TEST(ControlStoreTest, WaitTimesOutNamingTheMissingKey) {
  auto server = startServer();
  ASSERT_TRUE(server);
  auto store = connect(*server, 3);
  ASSERT_TRUE(store);
  ASSERT_OK(store->set("present", text("x")));
  auto start = Clock::now();
  const Status s = store->wait({"present", "absent/7"}, Deadline::after(300ms));
  EXPECT_ERROR(s, kTimeout, "absent/7");
  EXPECT_NE(s.message().find("key(s) absent/7"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(std::to_string(server->port())), std::string::npos) << s.message();
  EXPECT_GE(secondsSince(start), 0.29);
  EXPECT_LT(secondsSince(start), 3.0);
  Bytes value;
  start = Clock::now();
  EXPECT_ERROR(store->get("never", &value, Deadline::after(200ms)), kTimeout, "never");
  EXPECT_LT(secondsSince(start), 3.0);
  EXPECT_ERROR(store->get("never", &value, Deadline::afterMs(0)), kTimeout, "never");
  // The connection is still good after timeouts.
  ASSERT_OK(store->set("after", text("ok")));
  ASSERT_OK(store->get("after", &value, Deadline::after(2s)));
  EXPECT_EQ(value, text("ok"));
}

// peek answers at once: the value of a key that exists, kTimeout for one that
// does not, however long the caller would wait for the reply (a failure note).
TEST(ControlStoreTest, PeekAnswersAtOnceWithoutWaitingForTheKey) {
  auto server = startServer();
  ASSERT_TRUE(server);
  auto store = connect(*server, 2);
  ASSERT_TRUE(store);
  ASSERT_OK(store->set("note", text("why")));
  Bytes value;
  ASSERT_OK(store->peek("note", &value, Deadline::after(10s)));
  EXPECT_EQ(value, text("why"));
  const auto start = Clock::now();
  EXPECT_ERROR(store->peek("missing", &value, Deadline::after(10s)), kTimeout, "missing");
  EXPECT_LT(secondsSince(start), 5.0);
  MemoryStore memory;
  ASSERT_OK(memory.set("note", text("why")));
  ASSERT_OK(memory.peek("note", &value, Deadline::after(10s)));
  EXPECT_EQ(value, text("why"));
  EXPECT_ERROR(memory.peek("missing", &value, Deadline::after(10s)), kTimeout, "missing");
  EXPECT_LT(secondsSince(start), 5.0);
}

// A relay between clients and a real server on 127.0.0.1 that can fall silent:
// it then keeps every socket open and passes nothing on, as a store whose host
// vanished (no reset ever comes) would look to its clients.
class SilenceableRelay {
 public:
  explicit SilenceableRelay(int serverPort) : serverPort_(serverPort) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listener_, 16), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~SilenceableRelay() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) ::close(fd);
    ::close(listener_);
  }
  int port() const { return port_; }
  void fallSilent() { silent_ = true; }

 private:
  void run() {
    std::vector<std::pair<int, int>> pairs;  // client, server
    while (!stop_) {
      std::vector<pollfd> p{{listener_, POLLIN, 0}};
      for (auto& [c, sv] : pairs) {
        p.push_back({c, POLLIN, 0});
        p.push_back({sv, POLLIN, 0});
      }
      if (::poll(p.data(), p.size(), 20) <= 0 || silent_) continue;
      const std::size_t polled = pairs.size();  // a pair accepted now has no pollfd yet
      if (p[0].revents & POLLIN) {
        const int c = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        const int sv = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        to.sin_port = htons(static_cast<std::uint16_t>(serverPort_));
        if (c >= 0 && ::connect(sv, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {
          pairs.push_back({c, sv});
          fds_.insert(fds_.end(), {c, sv});
        }
      }
      for (std::size_t i = 0; i < polled; ++i) {
        for (int side = 0; side < 2; ++side) {
          if (!(p[1 + 2 * i + side].revents & POLLIN)) continue;
          char buf[65536];
          const int from = side == 0 ? pairs[i].first : pairs[i].second;
          const int to = side == 0 ? pairs[i].second : pairs[i].first;
          const ssize_t k = ::recv(from, buf, sizeof(buf), 0);
          if (k > 0) (void)::send(to, buf, static_cast<std::size_t>(k), MSG_NOSIGNAL);
        }
      }
    }
  }

  const int serverPort_;
  int listener_ = -1;
  int port_ = 0;
  std::vector<int> fds_;
  std::atomic<bool> silent_{false}, stop_{false};
  std::thread thread_;
};

// A store that falls silent (its host gone: no reset, no answer) is told from an
// absent key: a peek or a bounded set then fails with kUnavailable by its reply
// deadline, also when it has to reconnect first, so the shrink's agreement moves
// to a standby store instead of waiting for a key that will never come.
TEST(ControlStoreTest, AStoreThatFallsSilentIsUnavailableNotAnAbsentKey) {
  auto server = startServer();
  ASSERT_TRUE(server);
  SilenceableRelay relay(server->port());
  std::shared_ptr<Store> store;
  ASSERT_OK(connectTcpStore("127.0.0.1", relay.port(), kToken, 3, Deadline::after(5s), &store));
  Bytes value;
  EXPECT_ERROR(store->peek("absent", &value, Deadline::after(5s)), kTimeout, "absent");
  ASSERT_OK(store->setBefore("note", text("x"), Deadline::after(5s)));
  relay.fallSilent();
  for (int i = 0; i < 2; ++i) {  // the second call reconnects to the silent relay
    auto start = Clock::now();
    EXPECT_ERROR(store->peek("note", &value, Deadline::after(300ms)), kUnavailable, "'note'");
    EXPECT_LT(secondsSince(start), 2.0);
    start = Clock::now();
    EXPECT_ERROR(store->setBefore("late", text("y"), Deadline::after(300ms)), kUnavailable,
                 "'late'");
    EXPECT_LT(secondsSince(start), 2.0);
  }
}

TEST(ControlStoreTest, ConcurrentAddFromEightClientsGivesTheExactSum) {
  auto server = startServer();
  ASSERT_TRUE(server);
  constexpr int kClients = 8;
  constexpr int kAdds = 150;
  std::vector<std::vector<std::int64_t>> seen(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto store = connect(*server, c);
      ASSERT_TRUE(store);
      for (int i = 0; i < kAdds; ++i) {
        std::int64_t now = 0;
        ASSERT_OK(store->add("sum", c + 1, &now));
        seen[c].push_back(now);
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::int64_t expected = kAdds * kClients * (kClients + 1) / 2;
  auto store = connect(*server, 99);
  ASSERT_TRUE(store);
  std::int64_t total = 0;
  ASSERT_OK(store->add("sum", 0, &total));
  EXPECT_EQ(total, expected);
  std::set<std::int64_t> distinct;
  for (const auto& v : seen) distinct.insert(v.begin(), v.end());
  EXPECT_EQ(distinct.size(),
            static_cast<std::size_t>(kClients * kAdds));  // each add saw its own value
  EXPECT_EQ(*distinct.rbegin(), expected);
}

TEST(ControlStoreTest, OneClientSharedByManyThreadsAndManyWaitersOnOneKey) {
  auto server = startServer();
  ASSERT_TRUE(server);
  auto shared = connect(*server, 0);
  ASSERT_TRUE(shared);
  std::vector<std::thread> threads;
  std::atomic<int> released{0};
  for (int w = 0; w < 6; ++w) {
    threads.emplace_back([&, w] {
      auto mine = connect(*server, 10 + w);
      ASSERT_TRUE(mine);
      Bytes go;
      EXPECT_OK(mine->get("go", &go, Deadline::after(10s)));
      EXPECT_EQ(go, text("now"));
      released.fetch_add(1);
    });
  }
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const std::string key = "t" + std::to_string(t) + "/" + std::to_string(i);
        ASSERT_OK(shared->set(key, text(key)));
        Bytes value;
        ASSERT_OK(shared->get(key, &value, Deadline::after(5s)));
        EXPECT_EQ(value, text(key));
      }
    });
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(released.load(), 0);
  ASSERT_OK(shared->set("go", text("now")));
  for (auto& t : threads) t.join();
  EXPECT_EQ(released.load(), 6);
}

TEST(ControlStoreTest, ConnectRetriesUntilTheServerAppears) {
  const int port = freePort();
  ASSERT_GT(port, 0);
  std::shared_ptr<TcpStoreServer> server;
  std::thread later([&] {
    std::this_thread::sleep_for(300ms);
    StoreServerOptions options;
    options.port = port;
    server = startServer(options);
  });
  std::shared_ptr<Store> store;
  const Status s = connectTcpStore("127.0.0.1", port, kToken, 1, Deadline::after(10s), &store);
  later.join();
  ASSERT_OK(s);
  ASSERT_OK(store->set("k", text("v")));
}

TEST(ControlStoreTest, ConnectErrorNamesTheAddressAndHowLongItTried) {
  const int port = freePort();
  ASSERT_GT(port, 0);
  std::shared_ptr<Store> store;
  const auto start = Clock::now();
  const Status s = connectTcpStore("127.0.0.1", port, kToken, 4, Deadline::after(500ms), &store);
  EXPECT_ERROR(s, kTimeout, "127.0.0.1:" + std::to_string(port));
  // The time is measured (0.5 s, more when the machine is slow to notice the deadline).
  std::smatch m;
  const std::string message = s.message();
  ASSERT_TRUE(std::regex_search(message, m, std::regex(R"(tried for (\d+\.\d) s)"))) << message;
  EXPECT_GE(std::stod(m[1]), 0.1) << message;
  EXPECT_LT(std::stod(m[1]), 3.0) << message;
  EXPECT_NE(s.message().find("rank 4"), std::string::npos) << s.message();
  EXPECT_GE(secondsSince(start), 0.4);
  EXPECT_LT(secondsSince(start), 3.0);
}

TEST(ControlStoreTest, KeysAndValuesOutsideTheLimitsAreRejectedByTheClient) {
  StoreServerOptions options;
  options.maxValueBytes = 1000;
  auto server = startServer(options);
  ASSERT_TRUE(server);
  auto store = connect(*server, 0);
  ASSERT_TRUE(store);
  EXPECT_ERROR(store->set("", text("x")), kInvalidArgument, "key of 0 bytes");
  EXPECT_ERROR(store->set(std::string(4097, 'k'), text("x")), kInvalidArgument, "4097");
  ASSERT_OK(store->set(std::string(4096, 'k'), text("x")));
  EXPECT_ERROR(store->set("v", Bytes(1001)), kInvalidArgument, "limit of 1000 bytes");
  ASSERT_OK(store->set("v", Bytes(1000, 9)));
  Bytes value;
  ASSERT_OK(store->get("v", &value, Deadline::after(2s)));
  EXPECT_EQ(value, Bytes(1000, 9));
  EXPECT_EQ(server->refusedCount(), 0);
}

TEST(ControlStoreTest, ServerShutdownFailsAPendingGetPromptly) {
  auto server = startServer();
  ASSERT_TRUE(server);
  auto store = connect(*server, 2);
  ASSERT_TRUE(store);
  Status s;
  const auto start = Clock::now();
  std::thread waiter([&] {
    Bytes value;
    s = store->get("never-set", &value, Deadline::after(20s));
  });
  std::this_thread::sleep_for(200ms);
  server.reset();
  waiter.join();
  EXPECT_ERROR(s, kConnectionError, "never-set");
  EXPECT_LT(secondsSince(start), 5.0);
}

TEST(ControlStoreTest, AfterALostConnectionTheNextCallReconnects) {
  auto server = startServer();
  ASSERT_TRUE(server);
  const int port = server->port();
  auto store = connect(*server, 6);
  ASSERT_TRUE(store);
  ASSERT_OK(store->set("before", text("1")));
  server.reset();  // the connection is gone
  StoreServerOptions options;
  options.port = port;
  server = startServer(options);
  ASSERT_TRUE(server);
  // The first call finds the old connection dead (or already reconnects).
  const Status first = store->set("after", text("2"));
  if (!first.ok()) EXPECT_ERROR(first, kConnectionError, "127.0.0.1:" + std::to_string(port));
  ASSERT_OK(store->set("after", text("2")));
  Bytes value;
  ASSERT_OK(store->get("after", &value, Deadline::after(2s)));
  EXPECT_EQ(value, text("2"));
  bool exists = true;
  ASSERT_OK(store->check("before", &exists));
  EXPECT_FALSE(exists) << "a new server starts empty";
}

// The listening socket is bound to the requested address, not to every address:
// /proc/net/tcp shows it as 0100007F (127.0.0.1) in state 0A (LISTEN).
TEST(ControlStoreTest, ListensOnTheRequestedAddressOnly) {
  auto server = startServer();
  ASSERT_TRUE(server);
  EXPECT_EQ(server->address(), "127.0.0.1");
  std::ifstream in("/proc/net/tcp");
  std::string line;
  const std::string local = fmt::format("0100007F:{:04X}", server->port());
  const std::string any = fmt::format("00000000:{:04X}", server->port());
  bool loopback = false;
  bool wildcard = false;
  while (std::getline(in, line)) {
    if (line.find(" 0A ") == std::string::npos) continue;
    loopback = loopback || line.find(local) != std::string::npos;
    wildcard = wildcard || line.find(any) != std::string::npos;
  }
  EXPECT_TRUE(loopback) << local;
  EXPECT_FALSE(wildcard);
}

TEST(ControlStoreTest, StartErrorsNameTheAddress) {
  auto first = startServer();
  ASSERT_TRUE(first);
  StoreServerOptions options;
  options.token = kToken;
  options.port = first->port();
  std::shared_ptr<TcpStoreServer> second;
  EXPECT_ERROR(TcpStoreServer::start(options, &second), kUnavailable,
               "127.0.0.1:" + std::to_string(first->port()));
  options.bindAddress = "not-an-address";
  EXPECT_ERROR(TcpStoreServer::start(options, &second), kInvalidArgument, "not-an-address");
}

}  // namespace
}  // namespace cohort::transport
