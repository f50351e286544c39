// Re-establishing a broken TCP link (HCCL_OP_RETRY_ENABLE). Each socket of a
// connection is one byte stream that outlives its socket: the writer keeps what
// it wrote until the reader reports having read it (an ack socket carries the
// reports), and after a break the lower rank dials the peer's reconnect listener
// (the hub) for a new set of sockets; both ends then say how much they read and
// each replays the rest. The receiver's state (a message half read, a reduction
// half applied) is untouched: the stream continues at the byte where it broke,
// so no operation is re-run and none has to be safe to re-run.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cohort/status.h"
#include "common/wait.h"
#include "transport/handshake.h"
#include "transport/tcp/tcp_options.h"
#include "transport/transport.h"

namespace cohort::transport::tcp {

/// What HCCL_OP_RETRY_ENABLE and HCCL_OP_RETRY_PARAMS say for one link.
struct RetryPolicy {
  bool enabled = false;
  int maxCnt = 1;  // breaks one operation rides out on the link
  std::chrono::milliseconds hold{5000};      // a broken link may stay unusable this long
  std::chrono::milliseconds interval{1000};  // between two attempts to re-establish it
  /// The policy of a link within a server (L0) or between servers (L1): the
  /// communicator's settings, else Config::global()'s.
  static RetryPolicy forLink(bool sameNode, const std::optional<TransportContext::Retry>& own);
  /// Whether any level is enabled (a rank then runs a hub).
  static bool anyEnabled(const std::optional<TransportContext::Retry>& own);
  /// The error of a link that `rank` retries and `peer` does not (it runs no
  /// hub: its set-up blob says port 0), in every transport that retries links.
  static Status disagreement(int rank, int peer);
  /// When the attempt after one made `now` may start: IntervalTime later, and
  /// never sooner than 50 ms (IntervalTime may be 0).
  Clock::time_point nextAttempt(Clock::time_point now) const;
  /// How long one attempt may take once the link has been broken for `held`:
  /// what is left of HoldTime, at most 1 s (a dial over a silent link waits
  /// that long), at least 1 ms.
  std::chrono::milliseconds attemptLimit(Clock::duration held) const;
};

/// The hub's handshakes: ChannelKind::kReconnect with `channel` = generation << 8
/// | socket index, or kProbeChannel for a probe (is the peer alive, is the link
/// up, and what has its idle end read); the hub answers a probe only while its
/// side of the link has not failed, with the handshake and a ProbeAnswer.
constexpr std::uint64_t kProbeChannel = ~std::uint64_t{0};
inline std::uint64_t reconnectChannel(std::uint32_t generation, int socket) {
  return (std::uint64_t{generation} << 8) | static_cast<std::uint64_t>(socket);
}

/// After a probe's handshake: magic, whether the prober's peer end is idle,
/// the stream count, then (idle) what it read of each stream. An idle end
/// reads nothing until its owner uses it again: the prober may take those as
/// acks (its sends the peer read are complete; a lost ack is not waited for).
struct ProbeAnswer {
  static constexpr std::uint32_t kMagic = 0x4250434b;  // "KCPB"
  bool idle = false;
  std::vector<std::uint64_t> reads;
  std::vector<std::uint8_t> encode() const;
  /// Reads one from a connected blocking-or-not socket within `limit`.
  static Status read(int fd, std::chrono::milliseconds limit, ProbeAnswer* out);
};

/// One per communicator rank that retries links: a listener and a thread that
/// accepts the sockets lower ranks dial to replace broken ones, checks their
/// handshakes and holds them until the connection they belong to takes them.
/// Thread-safe. Lifetime: shared by the transport and its connections; the
/// destructor stops the thread and closes every socket not taken.
class ReconnectHub {
 public:
  ReconnectHub(const TcpOptions& options, const Handshake& expected);
  ~ReconnectHub();
  ReconnectHub(const ReconnectHub&) = delete;
  ReconnectHub& operator=(const ReconnectHub&) = delete;

  /// Listens on `address`, port chosen by the system, and starts the thread.
  Status listen(const std::string& address, int* port);
  /// Sockets arrived for any peer since the caller last looked (cheap).
  std::uint64_t arrivals() const { return arrivals_.load(std::memory_order_acquire); }
  /// The newest complete set of `sockets` sockets from `peer` of a generation
  /// above `after`: true and the descriptors (taken over by the caller).
  bool take(int peer, int sockets, std::uint32_t after, std::uint32_t* generation,
            std::vector<int>* fds);
  /// This rank's side of the link to `peer` failed for good: later dials and
  /// probes from it are refused (closed unanswered).
  void markFailed(int peer);
  /// How a probe from `peer` learns what this rank's idle end read (false:
  /// busy); called on the hub's thread until detach(peer).
  using IdleReads = std::function<bool(std::vector<std::uint64_t>*)>;
  void attach(int peer, IdleReads idleReads);
  void detach(int peer);

 private:
  struct Pending;
  void acceptNext();
  void onHello(const std::shared_ptr<Pending>& p);

  const TcpOptions options_;
  const Handshake expected_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  std::mutex mu_;
  // peer -> generation -> socket index -> socket
  std::map<int, std::map<std::uint32_t, std::map<int, boost::asio::ip::tcp::socket>>> ready_;
  std::set<int> failed_;
  std::map<int, IdleReads> ends_;
  std::atomic<std::uint64_t> arrivals_{0};
};

/// How a peer's hub refused a dial: not at all (the dial may have failed
/// otherwise, or worked), nothing listens there (its process is gone or it
/// destroyed the communicator), or it closed the socket unanswered (its side of
/// the link failed for good: ReconnectHub::markFailed).
enum class HubRefusal { kNone, kNothingListens, kLinkFailedThere };

/// Dials `sockets` sockets to a peer's hub for generation `generation` (or one
/// probe, with kProbeChannel) within `limit`; *refusal says whether and how the
/// peer refused.
Status dialHub(const TcpOptions& options, const Handshake& hello,
               const boost::asio::ip::tcp::endpoint& hub, int sockets, std::uint64_t channelBase,
               std::chrono::milliseconds limit, const std::string& where, HubRefusal* refusal,
               std::vector<int>* fds);

}  // namespace cohort::transport::tcp
