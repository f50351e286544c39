// Transport benchmark between two processes (fork): one-way latency (8-byte
// ping-pong, half the round trip) and one-way bandwidth (64 KiB .. 64 MiB) of
// Cohort's shm and tcp connections, next to the references they are judged by:
// a single-thread memcpy of 16 MiB for shm (one copy per byte is the ideal) and
// a plain blocking socket with TCP_NODELAY for tcp (as transport_bench_tcp and
// ../shared/peers/tcp_loopback_bench.cc), measured in the same run, round by
// round, so that host noise hits both.
//
//   build/bench/transport_bench [--rounds 3] [--min 64K] [--max 64M] [--pings 20000]
//
// Rank r uses device r and, for shm with --pin (the default), CPU r; buffers are
// device memory. Figures are medians of --rounds; GB/s = 1e9 B/s of payload. tcp runs
// over 127.0.0.1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "bench/bench_util.h"
#include "cohort/runtime.h"
#include "common/config.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"

namespace ct = cohort::transport;
namespace rt = cohort::runtime;

namespace {

using namespace cohort::bench;  // bench_util.h: the helpers both benchmarks share

struct Options {
  std::string min = "64K", max = "64M";
  std::size_t minBytes = 0, maxBytes = 0;
  int rounds = 3;
  int pings = 20000;
  bool pin = true;                 // shm: rank r on CPU r (when there are two)
  std::size_t budget = 512 << 20;  // bytes per bandwidth measurement
};

// One process's side: rank 0 (the parent) sends and prints, rank 1 receives.
struct Side {
  int rank = 0;
  int in = -1, out = -1;   // pipes to the other process (set-up blobs)
  int plain = -1;          // the plain socket
  void* buffer = nullptr;  // device memory, maxBytes
  bool sender() const { return rank == 0; }
};

ct::Bytes swapBlobs(Side& side, const ct::Bytes& mine) {
  const auto n = static_cast<std::uint32_t>(mine.size());
  writeAll(side.out, &n, sizeof(n));
  writeAll(side.out, mine.data(), n);
  std::uint32_t m = 0;
  readAll(side.in, &m, sizeof(m));
  ct::Bytes theirs(m);
  readAll(side.in, theirs.data(), m);
  return theirs;
}

struct Link {
  std::unique_ptr<ct::Transport> transport;
  std::unique_ptr<ct::Connection> conn;
  ~Link() { conn.reset(); }
};

// Both processes: PeerInfo and the transport's blob through the pipes, then connect.
void connect(Side& side, const std::string& kind, Link* link) {
  ct::TransportContext ctx;
  ctx.rank = side.rank;
  ctx.size = 2;
  ctx.self.rank = side.rank;
  ctx.self.hostId = ct::localHostId();
  ctx.self.pid = static_cast<std::int32_t>(::getpid());
  ctx.self.device = side.rank;
  ctx.self.address = "127.0.0.1";
  ctx.self.localIndex = side.rank;
  ctx.token = ct::JobToken::fromText("transport_bench");
  ctx.connectDeadline = cohort::Deadline::afterMs(30000);
  ct::PeerInfo peer;
  check(ct::PeerInfo::decode(swapBlobs(side, ctx.self.encode()), &peer));
  peer.localIndex = 1 - side.rank;
  if (kind == "shm") {
    std::unique_ptr<ct::shm::ShmTransport> shm;
    check(ct::shm::ShmTransport::create(ctx, &shm));
    link->transport = std::move(shm);
  } else {
    link->transport = ct::makeTcpTransport(ctx);
  }
  ct::Bytes blob;
  check(link->transport->setup(&blob));
  check(link->transport->connect(peer, swapBlobs(side, blob), &link->conn));
}

// Both sides at the same point: one small round trip.
void sync(Side& s, ct::Connection& c) {
  std::uint64_t x = 0;
  if (s.sender()) check(c.postSend(&x, 8));
  check(c.postRecv(&x, 8));
  drain(c);
  if (!s.sender()) check(c.postSend(&x, 8));
  drain(c);
}

// Half round trips of an 8-byte ping-pong, in microseconds, one per ping (the
// median resists the scheduling noise of a shared machine; the mean does not).
std::vector<double> pingUs(Side& s, ct::Connection& c, int pings) {
  std::uint64_t x = 0, y = 0;
  std::vector<double> halves;
  halves.reserve(static_cast<std::size_t>(pings));
  sync(s, c);
  for (int i = 0; i < pings; ++i) {
    const double t0 = nowSeconds();
    if (s.sender()) check(c.postSend(&x, 8));
    check(c.postRecv(&y, 8));
    drain(c);
    if (!s.sender()) check(c.postSend(&y, 8));
    halves.push_back((nowSeconds() - t0) / 2 * 1e6);
  }
  drain(c);
  return halves;
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// One-way: `iters` messages back to back, then a 1-byte acknowledgement.
double streamGbps(Side& s, ct::Connection& c, std::size_t bytes, int iters) {
  char ack = 0;
  sync(s, c);
  const double t0 = nowSeconds();
  for (int i = 0; i < iters; ++i) {
    check(s.sender() ? c.postSend(s.buffer, bytes) : c.postRecv(s.buffer, bytes));
  }
  check(s.sender() ? c.postRecv(&ack, 1) : c.postSend(&ack, 1));
  drain(c);
  return double(bytes) * iters / (nowSeconds() - t0) / 1e9;
}

double plainGbps(Side& s, std::size_t bytes, int iters) {
  char ack = 0;
  if (s.sender())
    readAll(s.plain, &ack, 1);
  else
    writeAll(s.plain, &ack, 1);  // sync
  const double t0 = nowSeconds();
  for (int i = 0; i < iters; ++i) {
    if (s.sender())
      writeAll(s.plain, s.buffer, bytes);
    else
      readAll(s.plain, s.buffer, bytes);
  }
  if (s.sender())
    readAll(s.plain, &ack, 1);
  else
    writeAll(s.plain, &ack, 1);
  return double(bytes) * iters / (nowSeconds() - t0) / 1e9;
}

// Rank 0 only (rank 1 waits in the next sync): one thread, 16 MiB, touched buffers.
double memcpyGbps(std::size_t bytes, int iters) {
  static std::vector<char> src(bytes, 1), dst(bytes, 2);
  std::memcpy(dst.data(), src.data(), bytes);
  const double t0 = nowSeconds();
  for (int i = 0; i < iters; ++i) std::memcpy(dst.data(), src.data(), bytes);
  return double(bytes) * iters / (nowSeconds() - t0) / 1e9;
}

int itersFor(const Options& o, std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>(o.budget / bytes, 4, 1000));
}

// Per size: the median over rounds; references at 16 MiB (memcpy) and 64 MiB (plain).
struct Figures {
  std::map<std::string, std::map<std::size_t, std::vector<double>>> gbps;  // kind -> size
  std::map<std::string, std::vector<double>> latencyUs, latencyMeanUs;     // per round
  std::vector<double> memcpy16, plain64;
};

void measure(Side& s, const Options& o, const std::string& kind, ct::Connection& c, Figures* f) {
  for (int r = 0; r < o.rounds; ++r) {
    pingUs(s, c, o.pings / 10);  // warm-up
    const std::vector<double> halves = pingUs(s, c, o.pings);
    f->latencyUs[kind].push_back(median(halves));
    f->latencyMeanUs[kind].push_back(mean(halves));
    for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 4) {
      if (kind == "shm" && bytes == (16u << 20) && s.sender()) {
        f->memcpy16.push_back(memcpyGbps(bytes, itersFor(o, bytes)));
      }
      if (kind == "tcp" && bytes == (64u << 20)) {
        f->plain64.push_back(plainGbps(s, bytes, itersFor(o, bytes)));
      }
      f->gbps[kind][bytes].push_back(streamGbps(s, c, bytes, itersFor(o, bytes)));
    }
  }
}

void report(const Options& o, const Figures& f) {
  std::printf(
      "# transport_bench: 2 processes (fork), rank r on device r (shm: and CPU r), device memory; "
      "medians of %d rounds; GB/s = 1e9 B/s\n# %10s %8s %10s %10s\n",
      o.rounds, "size", "iters", "shm GB/s", "tcp GB/s");
  for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= 4) {
    std::printf("  %10zu %8d %10.3f %10.3f\n", bytes, itersFor(o, bytes),
                median(f.gbps.at("shm").at(bytes)), median(f.gbps.at("tcp").at(bytes)));
  }
  const double shmLat = median(f.latencyUs.at("shm")), tcpLat = median(f.latencyUs.at("tcp"));
  std::printf(
      "# one-way latency, 8 B (half round trip), median (mean) of %d pings: shm %.2f us "
      "(%.2f), tcp %.2f us (%.2f)\n",
      o.pings, shmLat, median(f.latencyMeanUs.at("shm")), tcpLat,
      median(f.latencyMeanUs.at("tcp")));
  if (!f.memcpy16.empty() && f.gbps.at("shm").count(16u << 20)) {
    const double m = median(f.memcpy16), shm = median(f.gbps.at("shm").at(16u << 20));
    std::printf("# shm 16 MiB %.3f GB/s vs memcpy 1 thread %.3f GB/s: %.0f%% (floor 70%%) %s\n",
                shm, m, 100 * shm / m, shm >= 0.7 * m ? "PASS" : "FAIL");
  }
  std::printf("# shm 8-byte one-way latency %.2f us (floor 2 us) %s\n", shmLat,
              shmLat <= 2 ? "PASS" : "FAIL");
  if (!f.plain64.empty() && f.gbps.at("tcp").count(64u << 20)) {
    const double p = median(f.plain64), tcp = median(f.gbps.at("tcp").at(64u << 20));
    std::printf("# tcp 64 MiB %.3f GB/s vs plain socket %.3f GB/s: %.2fx (floor 1.5x) %s\n", tcp, p,
                tcp / p, tcp >= 1.5 * p ? "PASS" : "FAIL");
  }
  std::fflush(stdout);
}

// Rank r on CPU r, or (cpu < 0) on every CPU.
void pinTo(int cpu) {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (long c = 0; c < n && c < CPU_SETSIZE; ++c) {
    if (cpu < 0 || c == cpu) CPU_SET(static_cast<int>(c), &cpus);
  }
  if (::sched_setaffinity(0, sizeof(cpus), &cpus) != 0) die("sched_setaffinity failed");
}

void run(Side& s, const Options& o) {
  check(rt::setDevice(s.rank));
  check(rt::deviceMalloc(&s.buffer, o.maxBytes));
  std::memset(s.buffer, 1, o.maxBytes);  // touched: no page faults while timed
  Figures f;
  for (const std::string kind : {"shm", "tcp"}) {
    // shm: the ranks never share a core (a ping-pong then costs context
    // switches); tcp: unpinned, as the plain-socket reference (the kernel's
    // share of the work runs on both cores).
    const bool pin = o.pin && kind == "shm" && ::sysconf(_SC_NPROCESSORS_ONLN) >= 2;
    pinTo(pin ? s.rank : -1);
    Link link;
    connect(s, kind, &link);
    measure(s, o, kind, *link.conn, &f);
    // Close only when both ends are idle (a shm peer that closes right after
    // consuming the last message fails its sender's completion).
    swapBlobs(s, ct::Bytes{1});
  }
  if (s.sender()) report(o, f);
  check(rt::deviceFree(s.buffer));
}

// The plain socket: the parent listens before the fork, the child dials.
int plainSocket(bool parent, int listener, const sockaddr_in& addr) {
  int fd = parent ? ::accept(listener, nullptr, nullptr) : ::socket(AF_INET, SOCK_STREAM, 0);
  if (!parent && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    die("plain connect failed");
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  ::setenv("COHORT_IF_IP", "127.0.0.1", 1);  // loopback only, before the config is read
  Options o;
  CLI::App app{"Cohort shm and tcp transports between two processes, with references"};
  app.add_option("--min", o.min, "smallest message (e.g. 64K)");
  app.add_option("--max", o.max, "largest message (e.g. 64M)");
  app.add_option("--rounds", o.rounds, "rounds (medians are reported)")->check(CLI::PositiveNumber);
  app.add_option("--pings", o.pings, "ping-pongs per latency round")->check(CLI::PositiveNumber);
  app.add_option("--pin", o.pin, "for shm, pin rank r to CPU r (1/0)");
  CLI11_PARSE(app, argc, argv);
  std::uint64_t lo = 0, hi = 0;
  if (!cohort::parseByteSize(o.min, &lo) || !cohort::parseByteSize(o.max, &hi) || lo == 0 ||
      hi < lo) {
    die("--min/--max: expected sizes such as 64K and 64M, min <= max");
  }
  o.minBytes = lo;
  o.maxBytes = hi;
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
  const pid_t pid = ::fork();  // before anything initialises the runtime
  if (pid < 0) die("fork failed");
  Side side;
  side.rank = pid != 0 ? 0 : 1;
  side.in = side.sender() ? up[0] : down[0];
  side.out = side.sender() ? down[1] : up[1];
  ::close(side.sender() ? up[1] : down[1]);  // so that a dead peer reads as end of file
  ::close(side.sender() ? down[0] : up[0]);
  side.plain = plainSocket(side.sender(), listener, addr);
  ::close(listener);
  run(side, o);
  ::close(side.plain);
  if (!side.sender()) return 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
