// A message stream to one local peer over shared memory: descriptors of (segment,
// offset, size) go through a ring in the receiver's control block, and the
// receiver copies (or reduces) straight from the sender's mapped buffer. A buffer
// outside every segment is first copied to a pinned bounce buffer.
#pragma once

#include <chrono>
#include <deque>

#include "transport/connection.h"
#include "transport/shm/shm_transport.h"

namespace cohort::transport::shm {

/// Not thread-safe (one driving thread), as every Connection.
class ShmConnection : public Connection {
 public:
  ShmConnection(ShmTransport* transport, const ShmPeer& peer);
  ~ShmConnection() override;

  int peer() const override { return peer_.rank; }
  const char* kind() const override { return "shm"; }
  std::string describe() const override;
  Status postSend(const void* data, std::size_t bytes) override;
  Status postRecv(void* dst, std::size_t bytes, const Reduction* reduce,
                  const void* accumulate) override;
  Status progress() override;
  std::uint64_t sendsPosted() const override { return sendsPosted_; }
  std::uint64_t sendsCompleted() const override { return sendsCompleted_; }
  std::uint64_t recvsPosted() const override { return recvsPosted_; }
  std::uint64_t recvsCompleted() const override { return recvsCompleted_; }
  WaitHint waitHint() override;
  /// Closes this end as the destructor does: a receive the peer waits for
  /// fails at once ("closed its connection") instead of waiting for a rank
  /// that failed and stays alive.
  void abort(const Status& why) override;

 private:
  struct Send {
    MessageDesc desc;
    void* bounce;  // pinned copy of a non-segment buffer, freed when consumed
  };
  struct Recv {
    void* dst;
    std::size_t bytes;
    Reduction reduce;
    bool hasReduce;
    const void* accumulate;
  };
  Status fail(Status s);
  // The rings' errors: a size mismatch either side found, or (peerClosed: the peer's
  // close, read before the counters it precedes) a peer gone with work pending.
  Status checkRings(bool peerClosed = false);
  Status checkAlive();
  void publishSends();
  Status deliver(const MessageDesc& desc, const Recv& r);

  ShmTransport* transport_;
  ShmPeer peer_;
  MessageRing* out_;  // in the peer's block: my messages to it
  MessageRing* in_;   // in my block: its messages to me
  std::deque<Send> sends_;
  std::deque<Recv> recvs_;
  std::uint64_t sendsPosted_ = 0, sendsPublished_ = 0, sendsCompleted_ = 0;
  std::uint64_t recvsPosted_ = 0, recvsCompleted_ = 0;
  Status error_;
  std::chrono::steady_clock::time_point lastAliveCheck_{};
};

}  // namespace cohort::transport::shm
