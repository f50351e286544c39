// Socket options and address text shared by the dialing and accepting sides of
// the TCP transport (Boost.Asio sockets).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>

#include "transport/tcp/tcp_options.h"

namespace cohort::transport::tcp {

/// SO_SNDBUF / SO_RCVBUF from the options, 0 = autotuned (before connect or
/// listen, so the window scales to them).
void setBufferSizes(boost::asio::ip::tcp::socket& socket, const TcpOptions& options);
void setBufferSizes(boost::asio::ip::tcp::acceptor& acceptor, const TcpOptions& options);

/// On a connected socket: TCP_NODELAY, TCP_CONGESTION (a refusal is logged once
/// at info and the system default kept), and keep-alive probes so that a peer
/// that vanished without a FIN is noticed.
void tuneConnected(boost::asio::ip::tcp::socket& socket, const TcpOptions& options);

/// "10.0.0.2:60001", "[fe80::1]:60001".
std::string hostPort(const std::string& host, int port);
std::string endpointText(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace cohort::transport::tcp
