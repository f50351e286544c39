// The TCP rendezvous store (Boost.Asio): a server (rank 0) that keeps a
// MemoryStore and serves set/get/wait/add/check to clients that present the job
// token. Hostile input (bad magic or token, truncated frames, absurd lengths,
// random bytes, silent clients) is refused and logged; the server keeps serving
// everyone else.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "transport/handshake.h"
#include "transport/store.h"

namespace cohort::transport {

struct StoreServerOptions {
  std::string bindAddress = "127.0.0.1";  // listen here only, unless "0.0.0.0"/"::"
  int port = 0;                           // 0 = ephemeral
  JobToken token;
  std::size_t maxValueBytes = 64 << 20;   // larger frames are refused
  int idleTimeoutS = 0;                   // 0 = COHORT_CONNECT_TIMEOUT for the handshake
};

/// Thread-safe; runs its own I/O thread. Destruction stops it and closes clients.
class TcpStoreServer {
 public:
  static Status start(const StoreServerOptions& options, std::shared_ptr<TcpStoreServer>* out);
  virtual ~TcpStoreServer() = default;
  virtual int port() const = 0;
  virtual std::string address() const = 0;
  /// Connections refused so far (bad token/version/frames), for tests and logs.
  virtual int refusedCount() const = 0;
};

/// A Store whose every call is a request to a TcpStoreServer. Thread-safe.
/// Connects with retries until `deadline`; the error names the address.
Status connectTcpStore(const std::string& host, int port, const JobToken& token, int rank,
                       Deadline deadline, std::shared_ptr<Store>* out);

}  // namespace cohort::transport
