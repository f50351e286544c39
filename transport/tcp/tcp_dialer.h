// The dialing side of the TCP transport: the lower rank of a pair opens every
// socket to the higher rank's listener, retrying refused connects (the peer may
// not be listening yet) until the deadline, sends its handshake on each and
// checks the answer (which proves the peer holds the job token too).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "transport/handshake.h"
#include "transport/tcp/tcp_options.h"

namespace cohort::transport::tcp {

/// Runs on the owner's io_context; the owner drives it until finished() or its
/// deadline. Not thread-safe. Destruction abandons unfinished sockets safely
/// (their handlers may still run later and do nothing).
class Dialer {
 public:
  /// `hello`: this rank's handshake (token, fromRank, toRank, worldSize); the
  /// channel is filled per socket (channelBase + its index). `where` names both
  /// ends for errors.
  Dialer(boost::asio::io_context& io, const TcpOptions& options, const Handshake& hello,
         const boost::asio::ip::tcp::endpoint& target, int channels, std::string where,
         std::uint64_t channelBase = 0);
  ~Dialer();

  void start();
  /// Every socket is ready, or one failed for good.
  bool finished() const;
  /// The failure that ended the dial (ok while none).
  Status error() const;
  /// Why the dial has not finished by now: refused, timed out, or the last error.
  Status expired(double seconds) const;
  /// Every socket not yet connected was refused at its last try (nothing listens).
  bool refused() const;
  /// The peer accepted a socket, then closed it unanswered during the handshake:
  /// it refused this rank (its listener checks the handshake).
  bool turnedAway() const;
  /// The connected sockets in channel order (call when finished() and error() is ok).
  std::vector<int> take();

  struct State;  // shared with the asynchronous handlers, which may outlive the Dialer

 private:
  std::shared_ptr<State> state_;
};

}  // namespace cohort::transport::tcp
