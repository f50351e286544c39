// Tuning of the TCP transport. Production code takes fromConfig(); tests and the
// benchmark build their own (several socket counts in one process).
#pragma once

#include <cstddef>
#include <string>

namespace cohort::transport::tcp {

/// Channels a peer may open to us (a bound on what a handshake may claim).
constexpr int kMaxSocketsPerPeer = 64;

struct TcpOptions {
  /// Sockets per peer (COHORT_NSOCKS_PERPEER); messages larger than one chunk
  /// are split across them, chunk j on socket j % socketsPerPeer.
  int socketsPerPeer = 2;
  /// TCP_CONGESTION per socket (COHORT_TCP_CONGESTION); "" keeps the system's.
  std::string congestion = "cubic";
  /// SO_SNDBUF / SO_RCVBUF of every socket; 0 keeps the kernel's autotuning.
  /// Measured on this machine (transport_bench_tcp, 16 and 64 MiB one-way,
  /// medians of 4 shuffled runs): a 1 MiB send buffer with an autotuned receive
  /// buffer (which grows to net.ipv4.tcp_rmem's maximum, 32 MiB here) moved a GB
  /// for 336 CPU-ms and ran 1.36-1.48x a plain socket; 4 MiB send buffers took
  /// 454-534 CPU-ms per GB and ran 0.93x. Less data in flight stays in cache
  /// between the sender's copy into the socket and the receiver's copy out.
  int sendBufferBytes = 1 << 20;
  int recvBufferBytes = 0;
  /// Chunk of the split (and of the reduce-on-receive bounce buffer).
  std::size_t chunkBytes = 512 << 10;
  /// With HCCL_OP_RETRY_ENABLE: a socket whose data stays unacknowledged this
  /// long (TCP_USER_TIMEOUT; idle, its keep-alive probes, one a second) counts
  /// as broken and is replaced. Shorter than a typical outage, so that the
  /// link comes back by a new connection rather than by TCP's backed-off
  /// retransmissions; a false alarm only costs a reconnection.
  int retrySilenceMs = 1000;

  /// COHORT_NSOCKS_PERPEER and COHORT_TCP_CONGESTION from Config::global().
  static TcpOptions fromConfig();
};

}  // namespace cohort::transport::tcp
