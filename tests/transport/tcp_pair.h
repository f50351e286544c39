// Test harness: ranks of one communicator as threads of this process, joined by
// the TCP transport over 127.0.0.1 (the tests run with COHORT_IF_IP=127.0.0.1),
// their blobs exchanged by a Bootstrap over a MemoryStore.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <vector>

#include "transport/connection.h"
#include "transport/tcp/tcp_options.h"
#include "transport/transport.h"

namespace cohort::transport::testing {

struct TcpRank {
  std::unique_ptr<Transport> transport;
  /// Indexed by peer rank (null for self).
  std::vector<std::unique_ptr<Connection>> conns;
  Status status;  // of set-up and connects
};

struct TcpJob {
  int size = 2;
  std::vector<tcp::TcpOptions> options;  // per rank; empty = defaults with 2 sockets
  std::vector<JobToken> tokens;          // per rank; empty = one shared token
  /// Per rank, the communicator's link retry settings; empty = the environment's.
  std::vector<std::optional<TransportContext::Retry>> retry;
  long timeoutMs = 5000;
  /// Order in which rank r connects its peers (default: ascending).
  std::function<std::vector<int>(int rank)> order;
};

/// Sets up and connects every pair, one thread per rank.
std::vector<TcpRank> connectJob(const TcpJob& job);

/// Connects two ranks and asserts success; (a, b) are rank 0's and rank 1's ends.
struct TcpPair {
  std::vector<TcpRank> ranks;
  Connection& a() { return *ranks[0].conns[1]; }
  Connection& b() { return *ranks[1].conns[0]; }
};
Status connectPair(TcpPair* pair, const tcp::TcpOptions& options = {}, long timeoutMs = 5000);

/// Runs f(0) and f(1) on two threads and returns their statuses.
std::vector<Status> onBoth(const std::function<Status(int rank)>& f);

/// Drives one connection until idle.
Status drain(Connection& c, long timeoutMs = 10000, const std::string& what = "test");

/// Position-dependent bytes, so a misplaced chunk shows.
void fillPattern(std::uint8_t* p, std::size_t n, std::uint32_t seed);
/// Index of the first byte that differs from the pattern, or n.
std::size_t checkPattern(const std::uint8_t* p, std::size_t n, std::uint32_t seed);

}  // namespace cohort::transport::testing
