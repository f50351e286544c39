// TCP transport benchmark between two processes on 127.0.0.1: one-way bandwidth
// (64 KiB .. 64 MiB) and 8-byte ping-pong latency, for Cohort's tcp connection
// and, in the same run and interleaved size by size, for a plain single socket
// with the system's defaults (blocking read/write, TCP_NODELAY), as in
// ../shared/peers/tcp_loopback_bench.cc.
//
//   build/bench/transport_bench_tcp [--rounds 3] [--nsocks N] [--congestion cubic]
//
// Each figure is the median of --rounds; GB/s = 1e9 B/s of payload. "cpu ms/GB"
// is the CPU time (user + system) both processes spent per GB moved: unlike
// GB/s it hardly depends on what else the machine is running.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/bench_util.h"
#include "transport/tcp/tcp_transport.h"

namespace ct = cohort::transport;

namespace {

using namespace cohort::bench;  // bench_util.h: the helpers both benchmarks share
using cohort::bench::median;    // beside the overload below

struct Options {
  std::size_t minBytes = 64 << 10;
  std::size_t maxBytes = 64 << 20;
  int rounds = 3;
  int pings = 2000;
  std::size_t budget = std::size_t(1) << 30;  // bytes per measurement (sets the iterations)
  ct::tcp::TcpOptions tcp = ct::tcp::TcpOptions::fromConfig();
};

// Both ends of the measurement, in each process.
struct Link {
  bool sender = false;
  int plain = -1;                            // the plain single socket
  int toPeer = -1, fromPeer = -1;            // pipes for bookkeeping, off both measured paths
  std::unique_ptr<ct::Transport> transport;  // keeps nothing the connection needs
  std::unique_ptr<ct::Connection> conn;
};

// The plain socket: parent listens, child dials (before the fork the listener exists).
int plainSocket(bool parent, int listener, const sockaddr_in& addr) {
  int fd = parent ? ::accept(listener, nullptr, nullptr) : ::socket(AF_INET, SOCK_STREAM, 0);
  if (!parent && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    die("plain connect failed");
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

void connectCohort(Link* link, int rank, int readFd, int writeFd, const Options& o) {
  ct::TransportContext ctx;
  ctx.rank = rank;
  ctx.size = 2;
  ctx.token = ct::JobToken::fromText("transport_bench_tcp");
  ctx.connectDeadline = cohort::Deadline::afterMs(30000);
  link->transport = ct::makeTcpTransport(ctx, o.tcp);
  ct::Bytes mine, theirs(256);
  check(link->transport->setup(&mine));
  mine.resize(256, ' ');
  writeAll(writeFd, mine.data(), mine.size());
  readAll(readFd, theirs.data(), theirs.size());
  ct::PeerInfo peer;
  peer.rank = 1 - rank;
  check(link->transport->connect(peer, theirs, &link->conn));
}

double cpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

struct Sample {
  double gbps = 0;
  double cpuMsPerGB = 0;
};

// Runs one timed stream and adds the child's CPU time (sent after the clock stopped).
template <typename Stream>
Sample measure(Link& l, std::size_t bytes, int iters, Stream&& stream) {
  const double c0 = cpuSeconds();
  const double seconds = stream();
  double cpu = cpuSeconds() - c0, theirs = 0;
  if (l.sender) {
    readAll(l.fromPeer, &theirs, sizeof(theirs));
  } else {
    writeAll(l.toPeer, &cpu, sizeof(cpu));
  }
  const double gb = double(bytes) * iters / 1e9;
  return Sample{gb / seconds, (cpu + theirs) * 1e3 / gb};
}

double plainStream(Link& l, std::vector<std::uint8_t>& buf, std::size_t bytes, int iters) {
  char ack = 0;
  const double t0 = nowSeconds();
  for (int i = 0; i < iters; ++i) {
    if (l.sender)
      writeAll(l.plain, buf.data(), bytes);
    else
      readAll(l.plain, buf.data(), bytes);
  }
  if (l.sender)
    readAll(l.plain, &ack, 1);
  else
    writeAll(l.plain, &ack, 1);
  return nowSeconds() - t0;
}

double cohortStream(Link& l, std::vector<std::uint8_t>& buf, std::size_t bytes, int iters) {
  char ack = 0;
  const double t0 = nowSeconds();
  for (int i = 0; i < iters; ++i) {
    check(l.sender ? l.conn->postSend(buf.data(), bytes) : l.conn->postRecv(buf.data(), bytes));
  }
  check(l.sender ? l.conn->postRecv(&ack, 1) : l.conn->postSend(&ack, 1));
  drain(*l.conn);
  return nowSeconds() - t0;
}

double plainPing(Link& l, int pings) {
  std::uint64_t x = 0;
  const double t0 = nowSeconds();
  for (int i = 0; i < pings; ++i) {
    if (l.sender) writeAll(l.plain, &x, 8);
    readAll(l.plain, &x, 8);
    if (!l.sender) writeAll(l.plain, &x, 8);
  }
  return (nowSeconds() - t0) / pings / 2 * 1e6;
}

double cohortPing(Link& l, int pings) {
  std::uint64_t x = 0, y = 0;
  const double t0 = nowSeconds();
  for (int i = 0; i < pings; ++i) {
    if (l.sender) check(l.conn->postSend(&x, 8));
    check(l.conn->postRecv(&y, 8));
    drain(*l.conn);
    if (!l.sender) check(l.conn->postSend(&y, 8));
  }
  drain(*l.conn);
  return (nowSeconds() - t0) / pings / 2 * 1e6;
}

double median(const std::vector<Sample>& v, double Sample::*field) {
  std::vector<double> x;
  for (const Sample& s : v) x.push_back(s.*field);
  return median(x);
}

void printHeader(const Options& o) {
  std::printf(
      "# transport_bench_tcp: 127.0.0.1, 2 processes; cohort tcp: %d socket(s)/peer, "
      "congestion %s, chunk %zu KiB; plain: 1 blocking socket, system defaults, "
      "TCP_NODELAY; medians of %d rounds\n# %10s %6s %11s %11s %7s %13s %13s\n",
      o.tcp.socketsPerPeer, o.tcp.congestion.empty() ? "(system)" : o.tcp.congestion.c_str(),
      o.tcp.chunkBytes >> 10, o.rounds, "size", "iters", "plain GB/s", "cohort GB/s", "ratio",
      "plain cpu/GB", "cohort cpu/GB");
}

void bandwidth(Link& l, const Options& o, std::vector<std::uint8_t>& buf, std::size_t bytes) {
  const int iters = static_cast<int>(std::clamp<std::size_t>(o.budget / bytes, 4, 2000));
  std::vector<Sample> plain, ours;
  for (int r = 0; r < o.rounds; ++r) {  // interleaved, so host noise hits both
    plain.push_back(measure(l, bytes, iters, [&] { return plainStream(l, buf, bytes, iters); }));
    ours.push_back(measure(l, bytes, iters, [&] { return cohortStream(l, buf, bytes, iters); }));
  }
  if (!l.sender) return;
  const double p = median(plain, &Sample::gbps), c = median(ours, &Sample::gbps);
  std::printf("  %10zu %6d %11.3f %11.3f %7.2f %10.0f ms %10.0f ms\n", bytes, iters, p, c, c / p,
              median(plain, &Sample::cpuMsPerGB), median(ours, &Sample::cpuMsPerGB));
}

void run(Link& l, const Options& o) {
  std::vector<std::uint8_t> buf(o.maxBytes, 1);  // touched: no page faults while timed
  if (l.sender) printHeader(o);
  plainStream(l, buf, o.maxBytes, 2);  // warm both paths up
  cohortStream(l, buf, o.maxBytes, 2);
  for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 4) bandwidth(l, o, buf, bytes);
  std::vector<double> plain, ours;
  for (int r = 0; r < o.rounds; ++r) {
    plainPing(l, o.pings / 10);
    plain.push_back(plainPing(l, o.pings));
    cohortPing(l, o.pings / 10);
    ours.push_back(cohortPing(l, o.pings));
  }
  if (l.sender) {
    std::printf(
        "# latency, 8 B ping-pong, half round trip: plain %.2f us, cohort %.2f us "
        "(ratio %.2f)\n",
        median(plain), median(ours), median(ours) / median(plain));
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  ::setenv("COHORT_IF_IP", "127.0.0.1", 0);  // loopback unless the caller chose otherwise
  Options o;
  CLI::App app{"Cohort tcp transport vs a plain socket, two processes on 127.0.0.1"};
  app.add_option("--min", o.minBytes, "smallest message (bytes)");
  app.add_option("--max", o.maxBytes, "largest message (bytes)");
  app.add_option("--rounds", o.rounds, "rounds per size (median reported)");
  app.add_option("--pings", o.pings, "ping-pong round trips per round");
  app.add_option("--budget", o.budget, "bytes per bandwidth measurement");
  app.add_option("--nsocks", o.tcp.socketsPerPeer, "cohort sockets per peer");
  app.add_option("--congestion", o.tcp.congestion, "cohort TCP_CONGESTION ('' = system)");
  app.add_option("--chunk", o.tcp.chunkBytes, "cohort chunk bytes");
  app.add_option("--sndbuf", o.tcp.sendBufferBytes, "cohort SO_SNDBUF (0 = autotuned)");
  app.add_option("--rcvbuf", o.tcp.recvBufferBytes, "cohort SO_RCVBUF (0 = autotuned)");
  CLI11_PARSE(app, argc, argv);

  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      ::listen(listener, 1) != 0) {
    die("plain listener failed");
  }
  int down[2], up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0) die("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) die("fork failed");
  const bool parent = pid != 0;
  Link link;
  link.sender = parent;
  link.plain = plainSocket(parent, listener, addr);
  link.fromPeer = parent ? up[0] : down[0];
  link.toPeer = parent ? down[1] : up[1];
  ::close(listener);
  connectCohort(&link, parent ? 0 : 1, link.fromPeer, link.toPeer, o);
  run(link, o);
  link.conn.reset();
  ::close(link.plain);
  if (!parent) return 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
