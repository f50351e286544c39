// The root info blob (like HCCL's 4108-byte HcclRootInfo): where rank 0's store
// listens, the job token and the protocol version. Rank 0 makes it and hands it
// to the others out of band (argument, file, environment, MPI broadcast).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "transport/handshake.h"
#include "transport/store.h"

namespace cohort::transport {

class TcpStoreServer;

struct RootInfo {
  static constexpr std::size_t kSize = 4108;

  std::string host;  // address the store listens on
  std::uint16_t port = 0;
  JobToken token;
  std::uint32_t protocolVersion = 0;

  /// Exactly kSize bytes: magic, protocol version, token, port, host, zero padding.
  void toBytes(std::uint8_t out[kSize]) const;
  /// kInvalidArgument for a blob that is not a root info; kVersionMismatch for one
  /// of another protocol version (naming both).
  static Status fromBytes(const std::uint8_t in[kSize], RootInfo* out);
  /// Printable form for COHORT_ROOT_INFO: "cohort1:<token hex>@<host>:<port>".
  std::string toText() const;
  static Status fromText(const std::string& text, RootInfo* out);
};

/// Rank 0: starts the store server on the selected interface (base port, else
/// an ephemeral port) with a fresh token and returns the root info naming it.
/// The server lives as long as the returned pointer.
Status createRoot(RootInfo* info, std::shared_ptr<TcpStoreServer>* server);

/// Any rank: a store client connected to the root info's server (retrying until
/// the connect deadline), presenting the token.
Status connectStore(const RootInfo& info, int rank, Deadline deadline,
                    std::shared_ptr<Store>* store);

}  // namespace cohort::transport
