// Helpers of the transport conformance suite: making one transport of a given
// kind, connecting the two ranks of a pair through a Bootstrap on any Store (a
// MemoryStore for threads, a TcpStore for processes), device and host buffers,
// and byte patterns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/connection.h"
#include "transport/store.h"
#include "transport/transport.h"

namespace cohort::transport::testing {

/// Why a transport of `kind` ("shm", "tcp", "rdma") cannot run here; "" if it can.
std::string unavailableReason(const std::string& kind);

/// One end of a two-rank pair. Destroys the connection before the transport,
/// then drops its reference on the device.
struct End {
  std::unique_ptr<Transport> transport;
  std::unique_ptr<Connection> conn;
  int device = -1;  ///< set (runtime::setDevice) by connectEnd
  ~End();
};

/// Rank `rank` (0 or 1) of a pair: its PeerInfo (this node's host id, device
/// `device`, 127.0.0.1) and its transport's blob go through a Bootstrap on
/// `store`, then it connects to the other rank with a transport of `kind`
/// (with `shmRegionBytes` of shared region: TransportContext::shmRegionBytes).
Status connectEnd(const std::string& kind, std::shared_ptr<Store> store, int rank, int device,
                  End* out, long timeoutMs = 10000, std::size_t shmRegionBytes = 0);

/// Drives one connection until idle (waitIdle).
Status drain(Connection& c, long timeoutMs = 20000, const std::string& what = "conformance");

/// A buffer in device memory (runtime::deviceMalloc on `device`) or, with
/// device < 0, in plain host memory. Not copyable.
class Buffer {
 public:
  Buffer(int device, std::size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::uint8_t* data() { return data_; }
  std::size_t size() const { return bytes_; }
  const Status& status() const { return status_; }

 private:
  int device_;
  std::size_t bytes_;
  std::uint8_t* data_ = nullptr;
  std::vector<std::uint8_t> host_;
  Status status_;
};

/// Position- and seed-dependent bytes, so a misplaced or stale chunk shows.
void fillPattern(std::uint8_t* p, std::size_t n, std::uint32_t seed);
/// Index of the first byte that differs from the pattern, or n.
std::size_t firstWrong(const std::uint8_t* p, std::size_t n, std::uint32_t seed);

}  // namespace cohort::transport::testing
