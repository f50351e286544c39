// Two real processes joined by the TCP transport over 127.0.0.1 (their blobs go
// through pipes): data arrives intact, and killing one process mid-transfer is
// an error on the survivor within 5 s, never a hang.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "common/error.h"
#include "tcp_pair.h"
#include "test_util.h"
#include "transport/tcp/tcp_transport.h"

namespace cohort::transport::testing {
namespace {

struct Ends {
  int read = -1;
  int write = -1;
};

bool writeAll(int fd, const void* p, std::size_t n) {
  return ::write(fd, p, n) == static_cast<ssize_t>(n);
}
bool readAll(int fd, void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t k = ::read(fd, c, n);
    if (k <= 0) return false;
    c += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

// Sets up this process's rank and connects to the other through the pipes.
Status connectRank(int rank, Ends pipes, std::unique_ptr<Transport>* t,
                   std::unique_ptr<Connection>* c) {
  TransportContext ctx;
  ctx.rank = rank;
  ctx.size = 2;
  ctx.token = JobToken::fromText("tcp-multiprocess");
  ctx.connectDeadline = Deadline::afterMs(10000);
  *t = makeTcpTransport(ctx);
  Bytes mine, theirs(256);
  COHORT_RETURN_IF_ERROR((*t)->setup(&mine));
  mine.resize(256, ' ');
  if (!writeAll(pipes.write, mine.data(), mine.size()) ||
      !readAll(pipes.read, theirs.data(), theirs.size())) {
    return Status(ErrorCode::kSystemError, "blob exchange through the pipe failed");
  }
  PeerInfo peer;
  peer.rank = 1 - rank;
  return (*t)->connect(peer, theirs, c);
}

// Forks; the child runs `child` as rank 1 and exits with its result.
pid_t forkRank1(Ends* parentEnds, const std::function<int(Ends)>& child) {
  int down[2], up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(down[1]);
    ::close(up[0]);
    ::_exit(child(Ends{down[0], up[1]}));
  }
  ::close(down[0]);
  ::close(up[1]);
  *parentEnds = Ends{up[0], down[1]};
  return pid;
}

// In a child: reports a failed step on stderr and returns its exit code.
int childFailed(int code, const Status& s) {
  std::fprintf(stderr, "rank 1 (child) failed: %s\n", s.toString().c_str());
  return code;
}

int exitCode(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

constexpr std::size_t kBytes = (1 << 20) + 3;

TEST(TcpTwoProcesses, EchoArrivesIntact) {
  Ends ends;
  const pid_t pid = forkRank1(&ends, [](Ends pipes) {
    std::unique_ptr<Transport> t;
    std::unique_ptr<Connection> c;
    Status s = connectRank(1, pipes, &t, &c);
    if (!s.ok()) return childFailed(2, s);
    std::vector<std::uint8_t> buf(kBytes);
    if (s = c->postRecv(buf.data(), kBytes); s.ok()) s = drain(*c);
    if (!s.ok()) return childFailed(3, s);
    if (s = c->postSend(buf.data(), kBytes); s.ok()) s = drain(*c);
    if (!s.ok()) return childFailed(4, s);
    return 0;
  });
  ASSERT_GT(pid, 0);
  std::unique_ptr<Transport> t;
  std::unique_ptr<Connection> c;
  Status s = connectRank(0, ends, &t, &c);
  std::vector<std::uint8_t> out(kBytes), back(kBytes);
  fillPattern(out.data(), kBytes, 11);
  if (s.ok()) s = c->postSend(out.data(), kBytes);
  if (s.ok()) s = c->postRecv(back.data(), kBytes);
  if (s.ok()) s = drain(*c);
  EXPECT_OK(s);
  EXPECT_EQ(checkPattern(back.data(), kBytes, 11), kBytes);
  EXPECT_EQ(exitCode(pid), 0);  // the child's failures are on stderr
}

TEST(TcpTwoProcesses, KilledPeerIsAnErrorWithinFiveSeconds) {
  constexpr std::size_t kBig = 64 << 20;
  Ends ends;
  const pid_t pid = forkRank1(&ends, [](Ends pipes) {
    std::unique_ptr<Transport> t;
    std::unique_ptr<Connection> c;
    Status s = connectRank(1, pipes, &t, &c);
    if (!s.ok()) return childFailed(2, s);
    std::vector<std::uint8_t> buf(kBig, 9);
    if (s = c->postSend(buf.data(), kBig); !s.ok()) return childFailed(3, s);
    for (int i = 0; i < 10; ++i) (void)c->progress();
    const char started = 1;
    writeAll(pipes.write, &started, 1);
    for (;;) (void)c->progress();  // until killed
  });
  ASSERT_GT(pid, 0);
  std::unique_ptr<Transport> t;
  std::unique_ptr<Connection> c;
  ASSERT_OK(connectRank(0, ends, &t, &c));
  std::vector<std::uint8_t> in(kBig);
  ASSERT_OK(c->postRecv(in.data(), kBig));
  char started = 0;
  ASSERT_TRUE(readAll(ends.read, &started, 1));
  ::kill(pid, SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = drain(*c, 20000, "receiving 64 MiB");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("receiving 64 MiB: rank 0: connection to rank 1 (127.0.0.1:"),
            std::string::npos)
      << s.toString();
  EXPECT_EQ(exitCode(pid), 128 + SIGKILL);
}

}  // namespace
}  // namespace cohort::transport::testing
