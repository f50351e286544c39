// Peer death, with real processes: rank 1 (conformance_peer) streams 64 MiB
// messages to or from this process, is killed with SIGKILL mid-transfer, and
// the survivor's pending operations must fail, naming the peer, within 5 s.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>

#include "common/error.h"
#include "conformance_util.h"
#include "test_util.h"
#include "transport/tcp_store.h"

extern char** environ;

namespace cohort::transport::testing {
namespace {

constexpr std::size_t kBytes = 16 << 20;
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

  // Keeps two messages in flight, progressing, until stop() (polled every 256
  // rounds), an error, or the deadline (kTimeout).
  Status stream(bool sending, Buffer& buffer, const std::function<bool()>& stop, long timeoutMs) {
    Connection& c = *end_.conn;
    const Deadline deadline = Deadline::afterMs(timeoutMs);
    for (std::uint64_t i = 0;; ++i) {
      while ((sending ? c.sendsPosted() - c.sendsCompleted()
                      : c.recvsPosted() - c.recvsCompleted()) < 2) {
        COHORT_RETURN_IF_ERROR(sending ? c.postSend(buffer.data(), kBytes)
                                       : c.postRecv(buffer.data(), kBytes));
      }
      COHORT_RETURN_IF_ERROR(c.progress());
      if (i % 256 != 0) continue;
      if (stop()) return Status::Ok();
      if (deadline.expired()) return Status(ErrorCode::kTimeout, "still streaming");
    }
  }

  // Streams until the peer has started, kills it, and checks that streaming on
  // fails within 5 s, naming the peer.
  void killMidTransfer(bool sending) {
    Buffer buffer(0, kBytes);
    ASSERT_OK(buffer.status());
    bool started = false;
    ASSERT_OK(stream(
        sending, buffer, [&] { return store_->check("started", &started).ok() && started; },
        20000));
    ASSERT_EQ(::kill(pid_, SIGKILL), 0);
    const auto t0 = std::chrono::steady_clock::now();
    int status = 0;
    ASSERT_EQ(::waitpid(pid_, &status, 0), pid_);  // as a launcher would reap it
    pid_ = -1;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "peer status " << status;
    const Status s = stream(
        sending, buffer, [] { return false; }, 30000);
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
  killMidTransfer(/*sending=*/true);
}

TEST_P(ConformanceDeath, KilledSenderIsAnErrorOnTheReceiverWithinFiveSeconds) {
  startPeer("send");
  ASSERT_FALSE(HasFatalFailure());
  killMidTransfer(/*sending=*/false);
}

INSTANTIATE_TEST_SUITE_P(Transports, ConformanceDeath, ::testing::Values("shm", "tcp", "rdma"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace cohort::transport::testing
