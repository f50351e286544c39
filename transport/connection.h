// A connection to one peer: an ordered, reliable, bidirectional stream of
// messages. Operations are posted (non-blocking) and advanced by progress() from
// the thread that drives the collective, so a send and a receive of one step (a
// ring's) move together without a progress thread. Every message carries its
// size: a receive posted for a different size fails with kMismatch on both ends
// rather than corrupting memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "cohort/status.h"
#include "common/wait.h"
#include "kernels/reduce.h"

namespace cohort::transport {

/// The kernel a receive applies to chunks as they arrive (kernels/reduce.h).
using Reduction = kernels::Reduction;

/// What a connection sleeps on when the executor has spun long enough: a socket
/// to poll() for POLLIN (tcp), or a WaitWord to sleep(snapshot) on (shm; the
/// snapshot is taken when the hint is made, before the caller's last check).
struct WaitHint {
  int fd = -1;
  WaitWord* word = nullptr;
  std::uint32_t snapshot = 0;
};

/// Not thread-safe: one thread posts and progresses. Lifetime: owned by the
/// communicator; closing it tells the peer.
class Connection {
 public:
  virtual ~Connection() = default;

  virtual int peer() const = 0;
  /// "shm", "tcp" or "rdma".
  virtual const char* kind() const = 0;
  /// "10.0.0.2:60001" or "same node (pid 1234)", for errors and link reports.
  virtual std::string describe() const = 0;

  /// Queues a message. `data` must stay valid until sendsCompleted() passes it.
  virtual Status postSend(const void* data, std::size_t bytes) = 0;
  /// Queues the receive of the next message, exactly `bytes` long, into dst. With
  /// `reduce`, dst = accumulate (op) message instead (accumulate may equal dst).
  virtual Status postRecv(void* dst, std::size_t bytes, const Reduction* reduce = nullptr,
                          const void* accumulate = nullptr) = 0;
  /// Advances posted operations without blocking. An error (peer closed, reset,
  /// died, size mismatch) is sticky: later calls return it too.
  virtual Status progress() = 0;

  /// Monotonic counts: operation k (from 1) is done when the count reaches k.
  virtual std::uint64_t sendsPosted() const = 0;
  virtual std::uint64_t sendsCompleted() const = 0;
  virtual std::uint64_t recvsPosted() const = 0;
  virtual std::uint64_t recvsCompleted() const = 0;
  bool idle() const {
    return sendsCompleted() == sendsPosted() && recvsCompleted() == recvsPosted();
  }

  /// What to sleep on while waiting for this connection.
  virtual WaitHint waitHint() = 0;

  /// Ends this connection after a failure elsewhere (another peer died, a
  /// timeout), so the peer fails now instead of waiting for messages that will
  /// never come. Later calls here return `why`. Transports whose peers learn
  /// of it otherwise may keep the default.
  virtual void abort(const Status& why) { (void)why; }
};

/// Optional controls of one waitIdle call.
struct WaitControl {
  /// Once it reads true (set by any thread), the wait returns kAborted naming the
  /// peer(s) still pending, within about 50 ms.
  const std::atomic<bool>* abort = nullptr;
  /// Called on the waiting thread when the wait has lasted 200 ms, then every
  /// second, with `what` and the peer(s) still pending (for hang reports).
  std::function<void(const std::string& what, const std::string& pending)> onSlow;
  /// Asked whenever an operation completes: once it returns true, the wait
  /// returns Ok at once with operations still pending (the caller then fails
  /// the step: say, a collective whose peer's arguments arrived and differ).
  std::function<bool()> stopEarly;
  /// Called on the waiting thread when the wait has lasted 200 ms, then every 200
  /// ms: an error ends the wait with it. For failures the awaited connections do
  /// not show (a peer that died while this rank waits for another).
  std::function<Status()> checkPeers;
  /// Whether this machine has more busy ranks than processors (then a waiting
  /// rank yields to let the one it waits for run). When it has not, the wait
  /// stops yielding for a while after a yield gave its processor away for
  /// long: to a process outside the job (YieldCheck). Unknown: true.
  bool crowded = true;
};

/// What a wait is for ("allreduce #3 (ring round 2)"), as its errors and slow-wait
/// reports name it: text, or a callable that makes the text only when one of
/// them needs it (formatting it for every step of every small operation cost
/// more than the step's own bookkeeping). Refers to the text or callable it was
/// made from, so it lives as a call's argument only.
class WaitLabel {
 public:
  WaitLabel(const std::string& text) : text_(&text) {}  // NOLINT(runtime/explicit)
  WaitLabel(const char* text) : chars_(text) {}         // NOLINT(runtime/explicit)
  template <typename Make,
            typename = std::enable_if_t<std::is_invocable_r_v<std::string, const Make&>>>
  WaitLabel(const Make& make)  // NOLINT(runtime/explicit)
      : maker_(&make),
        make_([](const void* m) -> std::string { return (*static_cast<const Make*>(m))(); }) {}

  std::string str() const {
    return text_ != nullptr ? *text_ : chars_ != nullptr ? std::string(chars_) : make_(maker_);
  }

 private:
  const std::string* text_ = nullptr;
  const char* chars_ = nullptr;
  const void* maker_ = nullptr;
  std::string (*make_)(const void*) = nullptr;
};

/// Posts nothing; drives `conns` until all are idle, spinning, then yielding, then
/// sleeping on their wait hints. On the deadline: kTimeout naming the peer(s)
/// still pending and `what` (the operation and step).
Status waitIdle(Connection* const* conns, std::size_t count, Deadline deadline,
                const WaitLabel& what, const WaitControl& control = WaitControl());

}  // namespace cohort::transport
