// The TCP transport (Boost.Asio for listening, dialing and handshakes; plain
// non-blocking syscalls for data). setup() listens on the interface chosen by
// selectInterface() on an ephemeral port; for each pair the lower rank dials
// the higher one, with COHORT_NSOCKS_PERPEER sockets per peer.
#pragma once

#include <memory>

#include "transport/tcp/tcp_options.h"
#include "transport/transport.h"

namespace cohort::transport {

/// The transport with the global configuration (COHORT_NSOCKS_PERPEER,
/// COHORT_TCP_CONGESTION).
std::unique_ptr<Transport> makeTcpTransport(const TransportContext& context);
/// The same with explicit options (tests, benchmarks). For each pair, the
/// dialing (lower) rank's socket count and chunk size apply.
std::unique_ptr<Transport> makeTcpTransport(const TransportContext& context,
                                            const tcp::TcpOptions& options);

}  // namespace cohort::transport
