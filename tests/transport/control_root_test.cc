// createRoot + connectStore end to end on loopback. This binary runs with
// COHORT_IF_IP=127.0.0.1 and COHORT_IF_BASE_PORT set (see control.cmake).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "cohort/version.h"
#include "common/config.h"
#include "test_util.h"
#include "transport/root_info.h"
#include "transport/tcp_store.h"

namespace cohort::transport {
namespace {

using namespace std::chrono_literals;

// Holds 127.0.0.1:port open. The base port range lies below the kernel's
// ephemeral range (control.cmake), but another process may still hold a port
// for a moment: the holder retries until it owns the port itself (held() says
// whether it got there within five seconds).
class PortHolder {
 public:
  explicit PortHolder(int port) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!tryHold(port) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
  }
  ~PortHolder() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool held() const { return fd_ >= 0; }

 private:
  bool tryHold(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;  // as the server does: bind past TIME_WAIT left by earlier tests
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        ::listen(fd_, 1) == 0)
      return true;
    ::close(fd_);
    fd_ = -1;
    return false;
  }

  int fd_ = -1;
};

TEST(ControlRootTest, CreateRootThenRanksConnectThroughTheText) {
  RootInfo info;
  std::shared_ptr<TcpStoreServer> server;
  ASSERT_OK(createRoot(&info, &server));
  EXPECT_EQ(info.host, "127.0.0.1");
  EXPECT_EQ(server->address(), "127.0.0.1");
  EXPECT_EQ(info.port, server->port());
  EXPECT_GT(info.port, 0);  // the range is checked below, where nothing else holds it
  EXPECT_EQ(info.protocolVersion, static_cast<std::uint32_t>(COHORT_PROTOCOL_VERSION));
  EXPECT_NE(info.token, JobToken());
  // Handed out of band as text and as the 4108-byte blob.
  const std::string text = info.toText();
  std::uint8_t blob[RootInfo::kSize];
  info.toBytes(blob);
  constexpr int kRanks = 4;
  std::vector<std::thread> ranks;
  std::vector<Bytes> seen(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      RootInfo mine;
      ASSERT_OK(r % 2 == 0 ? RootInfo::fromText(text, &mine) : RootInfo::fromBytes(blob, &mine));
      std::shared_ptr<Store> store;
      ASSERT_OK(connectStore(mine, r, Deadline::after(5s), &store));
      ASSERT_OK(store->set("rank/" + std::to_string(r), Bytes{static_cast<std::uint8_t>(r * 3)}));
      const int next = (r + 1) % kRanks;
      ASSERT_OK(store->get("rank/" + std::to_string(next), &seen[r], Deadline::after(5s)));
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(seen[r], (Bytes{static_cast<std::uint8_t>(((r + 1) % kRanks) * 3)}));
  // A rank holding another job's root info is refused.
  RootInfo forged = info;
  forged.token = JobToken::random();
  std::shared_ptr<Store> store;
  EXPECT_ERROR(connectStore(forged, 9, Deadline::after(5s), &store), kConnectionError,
               "token mismatch");
}

// The port steps share the base port range, so they are one test (ctest may run
// tests in parallel).
TEST(ControlRootTest, TakenBasePortsMoveToTheNextThenToAnEphemeralPort) {
  const int base = Config::global().ifBasePort;
  {
    PortHolder taken(base);
    ASSERT_TRUE(taken.held()) << base;
    RootInfo info;
    std::shared_ptr<TcpStoreServer> server;
    ASSERT_OK(createRoot(&info, &server));
    EXPECT_GT(info.port, base);
    EXPECT_LT(info.port, base + 32);
  }
  std::vector<std::unique_ptr<PortHolder>> taken;
  for (int p = base; p < base + 32; ++p) {
    taken.push_back(std::make_unique<PortHolder>(p));
    ASSERT_TRUE(taken.back()->held()) << p;
  }
  RootInfo info;
  std::shared_ptr<TcpStoreServer> server;
  ASSERT_OK(createRoot(&info, &server));
  EXPECT_TRUE(info.port < base || info.port >= base + 32) << info.port;
  std::shared_ptr<Store> store;
  ASSERT_OK(connectStore(info, 0, Deadline::after(5s), &store));
  std::int64_t v = 0;
  ASSERT_OK(store->add("n", 3, &v));
  EXPECT_EQ(v, 3);
}

}  // namespace
}  // namespace cohort::transport
