// Peer death, with real processes: rank 1 (conformance_peer) streams 64 MiB
// messages to or from this process, is killed with SIGKILL mid-transfer, and
// the survivor's pending operations must fail, naming the peer, within 5 s.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "conformance_util.h"
#include "test_util.h"
#include "transport/tcp_store.h"

extern char** environ;

namespace cohort::transport::testing {
namespace {

constexpr std::size_t kBytes = 64 << 20;
const char kToken[] = "conformance-death";

class ConformanceDeath : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string reason = unavailableReason(GetParam());
    if (!reason.empty()) GTEST_SKIP() << reason;
    StoreServerOptions options;
    options.token = JobToken::fromText(kToken);
    ASSERT_OK(TcpStoreServer::start(options, &server_));
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Starts rank 1 with `role` and connects to it as rank 0.
  void startPeer(const std::string& role) {
    const std::string port = std::to_string(server_->port());
    const std::string kind = GetParam();
    const char* argv[] = {
        COHORT_CONFORMANCE_PEER, kind.c_str(), port.c_str(), kToken, role.c_str(), nullptr};
    ASSERT_EQ(::posix_spawn(&pid_, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ),
              0);
    ASSERT_OK(connectTcpStore("127.0.0.1", server_->port(), JobToken::fromText(kToken), 0,
                              Deadline::afterMs(10000), &store_));
    ASSERT_OK(connectEnd(GetParam(), store_, 0, 0, &end_));
  }

  // Keeps two messages in flight until the peer says the stream has started.
  void streamUntilStarted(bool sending, Buffer& buffer) {
    Connection& c = *end_.conn;
    const Deadline deadline = Deadline::afterMs(20000);
    bool started = false;
    for (int i = 0; !started; ++i) {
      ASSERT_FALSE(deadline.expired()) << "the peer never started streaming";
      while ((sending ? c.sendsPosted() - c.sendsCompleted()
                      : c.recvsPosted() - c.recvsCompleted()) < 2) {
        ASSERT_OK(sending ? c.postSend(buffer.data(), kBytes) : c.postRecv(buffer.data(), kBytes));
      }
      ASSERT_OK(c.progress());
      if (i % 256 == 0) ASSERT_OK(store_->check("started", &started));
    }
  }

  // Kills the peer mid-transfer and checks the survivor's error.
  void killAndExpectError() {
    ASSERT_FALSE(end_.conn->idle()) << "nothing in flight when the peer was killed";
    ASSERT_EQ(::kill(pid_, SIGKILL), 0);
    const auto t0 = std::chrono::steady_clock::now();
    int status = 0;
    ASSERT_EQ(::waitpid(pid_, &status, 0), pid_);  // as a launcher would reap it
    pid_ = -1;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "peer status " << status;
    const Status s = drain(*end_.conn, 30000, "streaming 64 MiB");
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(took, std::chrono::seconds(5))
        << std::chrono::duration<double>(took).count() << " s: " << s.toString();
    EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
    EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.toString();
  }

  std::shared_ptr<TcpStoreServer> server_;
  std::shared_ptr<Store> store_;
  End end_;
  pid_t pid_ = -1;
};

TEST_P(ConformanceDeath, KilledReceiverIsAnErrorOnTheSenderWithinFiveSeconds) {
  startPeer("recv");
  ASSERT_FALSE(HasFatalFailure());
  Buffer buffer(0, kBytes);
  ASSERT_OK(buffer.status());
  streamUntilStarted(/*sending=*/true, buffer);
  ASSERT_FALSE(HasFatalFailure());
  killAndExpectError();
}

TEST_P(ConformanceDeath, KilledSenderIsAnErrorOnTheReceiverWithinFiveSeconds) {
  startPeer("send");
  ASSERT_FALSE(HasFatalFailure());
  Buffer buffer(0, kBytes);
  ASSERT_OK(buffer.status());
  streamUntilStarted(/*sending=*/false, buffer);
  ASSERT_FALSE(HasFatalFailure());
  killAndExpectError();
}

INSTANTIATE_TEST_SUITE_P(Transports, ConformanceDeath, ::testing::Values("shm", "tcp", "rdma"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace cohort::transport::testing
