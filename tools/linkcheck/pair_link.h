// One link of cohort-linkcheck: this rank's connection to one peer, made with
// transports of its own so that a link that fails or hangs until its deadline
// never delays or breaks another link (connectPeers, by contrast, gives up on
// the first failure).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/linkcheck/link_views.h"
#include "transport/connection.h"
#include "transport/transport.h"

namespace cohort::linkcheck {

/// A short cause for a link error ("connection refused", "token mismatch",
/// "timed out after 10 s", ...); `timeoutS` is the deadline the link had.
std::string shortCause(const Status& status, double timeoutS);

/// Whether an error means the peer could not be reached (silence: a timeout, no
/// route) rather than a definite refusal or mismatch.
bool silentFailure(const Status& status);

/// Not thread-safe: one thread at a time (connect() may run on a thread of its
/// own while nobody else touches the object). Owns its transports and its
/// connection; the connection is destroyed first.
class PairLink {
 public:
  /// `context` names this rank (self.localIndex as this pair needs it) and the
  /// link's connect deadline; `peer` is the other end (localIndex set likewise).
  PairLink(const transport::TransportContext& context, const transport::PeerInfo& peer,
           double timeoutS);
  ~PairLink();

  int peer() const { return peer_.rank; }
  /// Makes the transports that accept the peer and returns the blob the peer
  /// needs; a failure is recorded and travels in the blob, so the peer knows why.
  transport::Bytes setup();
  /// Connects through the first transport both ends have; records any failure.
  void connect(const transport::Bytes& peerBlob);
  /// Waits until the peer reaches this probe too (a word each way), for as long
  /// as `peerAlive` says it lives and `until` allows, so that a peer which is
  /// only late is not taken for dead. False (recorded as unreachable) when the
  /// peer stopped living or the time ran out.
  bool meet(Clock::time_point until, const std::function<bool()>& peerAlive);
  /// One sample: pings (and, with bandwidthBytes > 0, a bandwidth probe) on the
  /// connection. A probe that fails fails the link; `checkEnds`: the deadline is
  /// the end of the check's probing, so a timeout says so rather than blaming
  /// the peer.
  /// `record`: keep the sample (a warm-up probe does not), marked as taken in
  /// `pass` of `round` (0: the first passes, 1, 2, ...: the retry rounds).
  void probe(int pings, std::size_t bandwidthBytes, Deadline deadline, bool checkEnds,
             bool record = true, int round = 0, int pass = 0);
  /// Records a failure, unless an earlier one is recorded already; unreachable
  /// when silentFailure(status), unless told.
  void fail(Stage stage, const Status& status, const std::string& cause);
  void fail(Stage stage, const Status& status, const std::string& cause, bool unreachable);
  /// Drops the connection (the peer sees it closed).
  void close();

  bool connected() const { return conn_ != nullptr && !failed(); }
  bool failed() const { return view_.stage != Stage::kNone; }
  const LinkView& view() const { return view_; }

 private:
  transport::TransportContext context_;
  transport::PeerInfo peer_;
  double timeoutS_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;  // after setup()
  std::string rejections_;  // "; shm: peer is on another node ..."
  std::unique_ptr<transport::Connection> conn_;
  LinkView view_;
};

}  // namespace cohort::linkcheck
