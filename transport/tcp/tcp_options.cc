#include "transport/tcp/tcp_options.h"

#include <algorithm>

#include "common/config.h"

namespace cohort::transport::tcp {

TcpOptions TcpOptions::fromConfig() {
  const Config& c = Config::global();
  TcpOptions o;
  o.socketsPerPeer = std::max(1, std::min(c.nsocksPerPeer, kMaxSocketsPerPeer));
  o.congestion = c.tcpCongestion;
  return o;
}

}  // namespace cohort::transport::tcp
