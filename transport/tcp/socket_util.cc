#include "transport/tcp/socket_util.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <atomic>

#include "common/log.h"

namespace cohort::transport::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Asio's SettableSocketOption for options it has no class for.
template <int Level, int Name>
class IntOption {
 public:
  explicit IntOption(int value) : value_(value) {}
  template <typename P>
  int level(const P&) const {
    return Level;
  }
  template <typename P>
  int name(const P&) const {
    return Name;
  }
  template <typename P>
  const void* data(const P&) const {
    return &value_;
  }
  template <typename P>
  std::size_t size(const P&) const {
    return sizeof(value_);
  }

 private:
  int value_;
};

class CongestionOption {
 public:
  explicit CongestionOption(const std::string& name) : name_(name) {}
  template <typename P>
  int level(const P&) const {
    return IPPROTO_TCP;
  }
  template <typename P>
  int name(const P&) const {
    return TCP_CONGESTION;
  }
  template <typename P>
  const void* data(const P&) const {
    return name_.data();
  }
  template <typename P>
  std::size_t size(const P&) const {
    return name_.size();
  }

 private:
  std::string name_;
};

// Keep-alive: first probe after 10 s idle, then every 5 s, give up after 3.
constexpr int kKeepIdleS = 10;
constexpr int kKeepIntervalS = 5;
constexpr int kKeepCount = 3;

template <typename Socket>
void setBuffers(Socket& socket, const TcpOptions& options) {
  boost::system::error_code ec;
  if (options.sendBufferBytes > 0) {
    socket.set_option(asio::socket_base::send_buffer_size(options.sendBufferBytes), ec);
  }
  if (options.recvBufferBytes > 0) {
    socket.set_option(asio::socket_base::receive_buffer_size(options.recvBufferBytes), ec);
  }
}

}  // namespace

void setBufferSizes(tcp::socket& socket, const TcpOptions& options) { setBuffers(socket, options); }

void setBufferSizes(tcp::acceptor& acceptor, const TcpOptions& options) {
  setBuffers(acceptor, options);
}

void tuneConnected(tcp::socket& socket, const TcpOptions& options) {
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  socket.set_option(IntOption<IPPROTO_TCP, TCP_KEEPIDLE>(kKeepIdleS), ec);
  socket.set_option(IntOption<IPPROTO_TCP, TCP_KEEPINTVL>(kKeepIntervalS), ec);
  socket.set_option(IntOption<IPPROTO_TCP, TCP_KEEPCNT>(kKeepCount), ec);
  if (options.congestion.empty()) return;
  socket.set_option(CongestionOption(options.congestion), ec);
  static std::atomic<bool> reported{false};
  if (ec && !reported.exchange(true)) {
    COHORT_LOG(kInfo, "transport",
               "TCP_CONGESTION={} refused ({}); data sockets keep the system default "
               "(net.ipv4.tcp_congestion_control)",
               options.congestion, ec.message());
  }
}

std::string hostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

std::string endpointText(const tcp::endpoint& endpoint) {
  return hostPort(endpoint.address().to_string(), endpoint.port());
}

}  // namespace cohort::transport::tcp
