// A blocking TCP client socket whose every operation ends by a deadline: Asio
// asynchronous operations driven on a private io_context until they complete
// or the deadline passes (then the socket is closed, since a half-done read or
// write leaves the stream unusable). Asio stays out of this header.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "cohort/status.h"
#include "common/wait.h"

namespace cohort::transport::control {

/// Owns one socket. Not thread-safe: one caller at a time (callers hold a mutex).
class DeadlineSocket {
 public:
  DeadlineSocket();
  ~DeadlineSocket();
  DeadlineSocket(const DeadlineSocket&) = delete;
  DeadlineSocket& operator=(const DeadlineSocket&) = delete;

  /// One attempt: resolves `host` and connects (TCP_NODELAY). Errors are
  /// kConnectionError ("Connection refused"...) or kTimeout, without the address.
  Status connect(const std::string& host, int port, Deadline deadline);
  Status write(const void* data, std::size_t size, Deadline deadline);
  /// Reads exactly `size` bytes; kConnectionError "closed by the peer after N of
  /// M bytes" on EOF, kTimeout on the deadline. `got` (optional) gets the count.
  Status read(void* data, std::size_t size, Deadline deadline, std::size_t* got = nullptr);
  void close();
  bool isOpen() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cohort::transport::control
