// The verbs one connection uses on its queue pair and completion queue. The
// device implementation (VerbsQueuePair, rdma_device.h) forwards to libibverbs;
// tests substitute an in-memory pair that executes the same work requests, so
// the connection's protocol is tested without an RDMA device.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace cohort::transport::rdma {

/// Not thread-safe: one connection drives it.
class QueuePair {
 public:
  virtual ~QueuePair() = default;
  /// ibv_post_send: 0 or an errno value.
  virtual int postSend(ibv_send_wr* wr) = 0;
  /// ibv_post_recv: 0 or an errno value.
  virtual int postRecv(ibv_recv_wr* wr) = 0;
  /// ibv_poll_cq: completions taken (<= max), or < 0 on failure.
  virtual int poll(int max, ibv_wc* wc) = 0;
  /// Requests an event on the next completion; returns a descriptor that becomes
  /// readable then (-1 when there is none). Completions queued before the call
  /// raise no event: poll once more after arming.
  virtual int armNotify() = 0;
  /// Consumes and acknowledges pending events without blocking.
  virtual void drainNotify() = 0;
  virtual std::uint32_t qpNumber() const = 0;
  /// Moves the queue pair to the error state: every request still posted
  /// completes, flushed (how a broken link is drained before it is replaced).
  virtual void toError() = 0;
};

}  // namespace cohort::transport::rdma
