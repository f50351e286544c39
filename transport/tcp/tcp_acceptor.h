// The accepting side of the TCP transport: one listener per communicator rank,
// on which lower ranks dial in. Each accepted socket must send a valid data
// handshake (token, target rank, world size) within a few seconds; a valid one
// is answered with this rank's handshake and kept until connect() claims it, an
// invalid one is logged, remembered and dropped while the others carry on.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "transport/handshake.h"
#include "transport/tcp/tcp_options.h"

namespace cohort::transport::tcp {

/// Driven by the owner's io_context (handlers run only inside its run calls).
/// Not thread-safe. Must be destroyed before that io_context.
class Acceptor {
 public:
  /// `expected`: what a valid peer sends (kind, token, toRank = this rank, worldSize).
  Acceptor(boost::asio::io_context& io, const TcpOptions& options, const Handshake& expected);
  ~Acceptor();

  /// Listens on `address` on an ephemeral port and starts accepting.
  Status listen(const std::string& address, int* port);
  /// Sockets of `peer` with channels 0..channels-1 that completed the handshake.
  int readyCount(int peer, int channels) const;
  /// Hands over those sockets as descriptors (call when readyCount == channels).
  std::vector<int> take(int peer, int channels);
  /// Why connections were refused so far, oldest first.
  const std::vector<std::string>& refusals() const { return refusals_; }

 private:
  struct Pending;
  void acceptNext();
  void readHandshake(const std::shared_ptr<Pending>& p);
  void answer(const std::shared_ptr<Pending>& p);
  std::string refuseReason(const Handshake& h, const std::string& from);
  void refuse(const std::string& reason);  // `reason` names the client's address

  boost::asio::io_context& io_;
  const TcpOptions options_;
  const Handshake expected_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;  // after a failed accept
  std::map<int, std::map<std::uint64_t, boost::asio::ip::tcp::socket>> ready_;
  std::vector<std::string> refusals_;
};

}  // namespace cohort::transport::tcp
