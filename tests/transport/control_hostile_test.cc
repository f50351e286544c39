// Hostile and broken peers against the store server: wrong token, wrong
// protocol version, bad magic, truncated and oversized input, silent clients,
// random garbage. Each is refused and logged, counted, and the server goes on
// serving a good client.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "cohort/version.h"
#include "common/error.h"
#include "common/log.h"
#include "test_util.h"
#include "transport/control/deadline_socket.h"
#include "transport/control/store_protocol.h"
#include "transport/tcp_store.h"

namespace cohort::transport {
namespace {

using namespace std::chrono_literals;
using control::DeadlineSocket;
using control::FrameHeader;

const JobToken kToken = JobToken::fromText("control-hostile-test");

std::shared_ptr<TcpStoreServer> startServer(StoreServerOptions options = {}) {
  options.token = kToken;
  std::shared_ptr<TcpStoreServer> server;
  const Status s = TcpStoreServer::start(options, &server);
  EXPECT_TRUE(s.ok()) << s.toString();
  return server;
}

// A good client still gets full service.
void expectServes(const TcpStoreServer& server) {
  std::shared_ptr<Store> store;
  ASSERT_OK(connectTcpStore("127.0.0.1", server.port(), kToken, 0, Deadline::after(5s), &store));
  ASSERT_OK(store->set("alive", Bytes{1, 2, 3}));
  Bytes value;
  ASSERT_OK(store->get("alive", &value, Deadline::after(2s)));
  EXPECT_EQ(value, (Bytes{1, 2, 3}));
}

bool eventually(const std::function<bool()>& ready, std::chrono::milliseconds limit = 10s) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return ready();
}

Bytes handshakeBytes(const JobToken& token, std::uint32_t protocol = COHORT_PROTOCOL_VERSION) {
  Handshake h = Handshake::local(ChannelKind::kStore, token);
  h.protocolVersion = protocol;
  h.fromRank = 5;
  Bytes out(Handshake::kWireSize);
  h.encode(out.data());
  return out;
}

Status rawConnect(DeadlineSocket* s, const TcpStoreServer& server) {
  return s->connect("127.0.0.1", server.port(), Deadline::after(2s));
}

// Reads the server's greeting: its handshake and the hello verdict.
Status readGreeting(DeadlineSocket& s, Handshake* server) {
  std::uint8_t wire[Handshake::kWireSize];
  COHORT_RETURN_IF_ERROR(s.read(wire, sizeof(wire), Deadline::after(5s)));
  COHORT_RETURN_IF_ERROR(Handshake::decode(wire, server));
  std::uint8_t head[control::kFrameHeaderSize];
  COHORT_RETURN_IF_ERROR(s.read(head, sizeof(head), Deadline::after(5s)));
  FrameHeader h;
  COHORT_RETURN_IF_ERROR(FrameHeader::decode(head, control::kReplyMagic, 1 << 16, &h));
  Bytes text(h.valueLen);
  if (!text.empty()) COHORT_RETURN_IF_ERROR(s.read(text.data(), text.size(), Deadline::after(5s)));
  return control::replyStatus(h, text);
}

// True when the server closes the connection (EOF or reset) before `limit`.
bool closedByServer(DeadlineSocket& s, std::chrono::milliseconds limit) {
  const Deadline deadline = Deadline::after(limit);
  std::uint8_t byte;
  for (;;) {
    const Status st = s.read(&byte, 1, deadline);
    if (!st.ok()) return st.code() == ErrorCode::kConnectionError;
  }
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ControlHostileTest, WrongTokenIsRefusedAndLoggedOnBothSides) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("cohort_control_log_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  log::configure(Config::parse({{"COHORT_LOG_DIR", dir.string()}}));
  auto server = startServer();
  ASSERT_TRUE(server);
  std::shared_ptr<Store> store;
  const Status s = connectTcpStore("127.0.0.1", server->port(), JobToken::fromText("other job"), 3,
                                   Deadline::after(5s), &store);
  EXPECT_ERROR(s, kConnectionError, "token mismatch");
  EXPECT_NE(s.message().find("127.0.0.1:" + std::to_string(server->port())), std::string::npos)
      << s.message();
  EXPECT_FALSE(store);
  EXPECT_TRUE(eventually([&] { return server->refusedCount() == 1; }));
  expectServes(*server);
  EXPECT_EQ(server->refusedCount(), 1);
  log::configure(Config::parse({}));  // flushes and closes the file
  const std::string logged = readFile(dir / ("cohort_" + std::to_string(::getpid()) + ".log"));
  EXPECT_NE(logged.find("refused 127.0.0.1:"), std::string::npos) << logged;
  EXPECT_NE(logged.find("token mismatch"), std::string::npos) << logged;
  std::filesystem::remove_all(dir);
}

TEST(ControlHostileTest, WrongProtocolVersionIsRefusedNamingBothVersions) {
  auto server = startServer();
  ASSERT_TRUE(server);
  DeadlineSocket raw;
  ASSERT_OK(rawConnect(&raw, *server));
  const Bytes hello = handshakeBytes(kToken, 999);
  ASSERT_OK(raw.write(hello.data(), hello.size(), Deadline::after(2s)));
  Handshake theirs;
  const Status verdict = readGreeting(raw, &theirs);
  EXPECT_EQ(theirs.protocolVersion, static_cast<std::uint32_t>(COHORT_PROTOCOL_VERSION));
  EXPECT_EQ(theirs.token, JobToken()) << "the server must not reveal its token";
  EXPECT_ERROR(verdict, kVersionMismatch, "protocol version");
  EXPECT_NE(verdict.message().find("protocol 999"), std::string::npos) << verdict.message();
  EXPECT_NE(verdict.message().find("protocol " + std::to_string(COHORT_PROTOCOL_VERSION)),
            std::string::npos)
      << verdict.message();
  EXPECT_TRUE(closedByServer(raw, 5s));
  EXPECT_TRUE(eventually([&] { return server->refusedCount() == 1; }));
  expectServes(*server);
}

// A "server" of another protocol version: the client names both versions.
TEST(ControlHostileTest, ClientReportsAServerOfAnotherProtocolVersion) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::thread fake([listener] {
    const int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) return;
    std::uint8_t in[Handshake::kWireSize];
    if (::recv(c, in, sizeof(in), MSG_WAITALL) == static_cast<ssize_t>(sizeof(in))) {
      const Bytes reply = handshakeBytes(JobToken(), 7);
      (void)!::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
    }
    ::close(c);
  });
  std::shared_ptr<Store> store;
  const Status s =
      connectTcpStore("127.0.0.1", ntohs(addr.sin_port), kToken, 2, Deadline::after(5s), &store);
  fake.join();
  ::close(listener);
  EXPECT_ERROR(s, kVersionMismatch, "protocol version");
  EXPECT_NE(s.message().find("protocol 7"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("protocol " + std::to_string(COHORT_PROTOCOL_VERSION)),
            std::string::npos)
      << s.message();
}

TEST(ControlHostileTest, BadMagicIsRefused) {
  auto server = startServer();
  ASSERT_TRUE(server);
  DeadlineSocket raw;
  ASSERT_OK(rawConnect(&raw, *server));
  const Bytes junk(Handshake::kWireSize, 'A');
  ASSERT_OK(raw.write(junk.data(), junk.size(), Deadline::after(2s)));
  Handshake theirs;
  EXPECT_ERROR(readGreeting(raw, &theirs), kConnectionError, "bad magic");
  EXPECT_TRUE(eventually([&] { return server->refusedCount() == 1; }));
  expectServes(*server);
}

TEST(ControlHostileTest, TruncatedHandshakeThenCloseIsRefused) {
  auto server = startServer();
  ASSERT_TRUE(server);
  {
    DeadlineSocket raw;
    ASSERT_OK(rawConnect(&raw, *server));
    const Bytes hello = handshakeBytes(kToken);
    ASSERT_OK(raw.write(hello.data(), 20, Deadline::after(2s)));
  }  // closed after 20 of 64 bytes
  EXPECT_TRUE(eventually([&] { return server->refusedCount() == 1; }));
  expectServes(*server);
  EXPECT_EQ(server->refusedCount(), 1);
}

// Valid handshake, then a frame header claiming a huge value or key.
TEST(ControlHostileTest, OversizedFramesAreRefused) {
  StoreServerOptions options;
  options.maxValueBytes = 4096;
  auto server = startServer(options);
  ASSERT_TRUE(server);
  const std::pair<std::uint32_t, std::uint32_t> cases[] = {{3, 1u << 30}, {5000, 0}};
  int refused = 0;
  for (const auto& [keyLen, valueLen] : cases) {
    DeadlineSocket raw;
    ASSERT_OK(rawConnect(&raw, *server));
    const Bytes hello = handshakeBytes(kToken);
    ASSERT_OK(raw.write(hello.data(), hello.size(), Deadline::after(2s)));
    Handshake theirs;
    ASSERT_OK(readGreeting(raw, &theirs));
    FrameHeader h;
    h.op = control::Op::kSet;
    h.keyLen = keyLen;
    h.valueLen = valueLen;
    h.seq = 1;
    std::uint8_t wire[control::kFrameHeaderSize];
    h.encode(wire);
    ASSERT_OK(raw.write(wire, sizeof(wire), Deadline::after(2s)));
    EXPECT_TRUE(closedByServer(raw, 5s)) << "key " << keyLen << " value " << valueLen;
    ++refused;
    EXPECT_TRUE(eventually([&] { return server->refusedCount() == refused; }));
  }
  expectServes(*server);
}

// A frame that starts but never completes is dropped after the timeout.
TEST(ControlHostileTest, StalledFrameIsDroppedAfterTheTimeout) {
  StoreServerOptions options;
  options.idleTimeoutS = 1;
  auto server = startServer(options);
  ASSERT_TRUE(server);
  DeadlineSocket raw;
  ASSERT_OK(rawConnect(&raw, *server));
  const Bytes hello = handshakeBytes(kToken);
  ASSERT_OK(raw.write(hello.data(), hello.size(), Deadline::after(2s)));
  Handshake theirs;
  ASSERT_OK(readGreeting(raw, &theirs));
  const Bytes partial(10, 0x43);
  ASSERT_OK(raw.write(partial.data(), partial.size(), Deadline::after(2s)));
  const auto start = Clock::now();
  EXPECT_TRUE(closedByServer(raw, 5s));
  EXPECT_GE(Clock::now() - start, 900ms);
  EXPECT_EQ(server->refusedCount(), 1);
  expectServes(*server);
}

TEST(ControlHostileTest, SilentClientIsDroppedAfterTheHandshakeTimeout) {
  StoreServerOptions options;
  options.idleTimeoutS = 1;
  auto server = startServer(options);
  ASSERT_TRUE(server);
  DeadlineSocket silent;
  ASSERT_OK(rawConnect(&silent, *server));
  const auto start = Clock::now();
  expectServes(*server);  // others are served while the silent one waits
  Handshake theirs;
  EXPECT_ERROR(readGreeting(silent, &theirs), kTimeout, "no handshake within 1 s");
  EXPECT_TRUE(closedByServer(silent, 5s));
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, 900ms);
  EXPECT_LT(waited, 5s);
  EXPECT_EQ(server->refusedCount(), 1);
}

// 1000 connections of random bytes (and random lengths, including none) while a
// good client keeps adding: every one is refused, the server survives, and the
// good client's sum is exact.
TEST(ControlHostileTest, ThousandGarbageConnectionsWhileServingAGoodClient) {
  log::configure(Config::parse({{"COHORT_LOG_LEVEL", "error"}}));  // 1000 warnings otherwise
  auto server = startServer();
  ASSERT_TRUE(server);
  std::shared_ptr<Store> good;
  ASSERT_OK(connectTcpStore("127.0.0.1", server->port(), kToken, 0, Deadline::after(5s), &good));
  std::atomic<bool> done{false};
  std::int64_t adds = 0;
  std::thread worker([&] {
    while (!done.load()) {
      ASSERT_OK(good->add("sum", 1, nullptr));
      ++adds;
    }
  });
  std::mt19937 rng(12345);
  constexpr int kConnections = 1000;
  for (int i = 0; i < kConnections; ++i) {
    DeadlineSocket raw;
    ASSERT_OK(rawConnect(&raw, *server));
    Bytes junk(rng() % 300);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    if (!junk.empty()) (void)raw.write(junk.data(), junk.size(), Deadline::after(2s));
  }
  EXPECT_TRUE(eventually([&] { return server->refusedCount() == kConnections; }, 30s))
      << server->refusedCount();
  done = true;
  worker.join();
  std::int64_t sum = 0;
  ASSERT_OK(good->add("sum", 0, &sum));
  EXPECT_EQ(sum, adds);
  EXPECT_GT(adds, 0);
  expectServes(*server);
  EXPECT_EQ(server->refusedCount(), kConnections);
  log::configure(Config::parse({}));
}

}  // namespace
}  // namespace cohort::transport
