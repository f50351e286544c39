// What a rank publishes in phase 1 (Transport::setup) so that every peer can
// connect its queue pair: the Cohort handshake (magic, versions, job token,
// ranks), this port's address (GID, LID, MTU, link layer) and, for every other
// rank, the queue pair reserved for it and the receive ring it may write into.
// Encoding and decoding are pure; decode rejects truncated or garbage bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "transport/handshake.h"
#include "transport/rdma/rdma_gid.h"
#include "transport/store.h"

namespace cohort::transport::rdma {

constexpr std::uint8_t kLinkLayerInfiniBand = 1;  // IBV_LINK_LAYER_INFINIBAND
constexpr std::uint8_t kLinkLayerEthernet = 2;    // IBV_LINK_LAYER_ETHERNET

/// This rank's RDMA port.
struct RdmaEndpoint {
  std::string device;  // "mlx5_0" (at most 64 bytes)
  std::uint8_t port = 1;
  std::uint8_t linkLayer = kLinkLayerEthernet;
  std::uint8_t mtu = 3;  // ibv_mtu code: 1 = 256 ... 5 = 4096
  std::uint16_t lid = 0;
  std::uint32_t gidIndex = 0;
  Gid gid{};
};

/// The queue pair and receive ring one rank reserved for `peerRank`.
struct RdmaQpEntry {
  std::int32_t peerRank = -1;
  std::uint32_t qpn = 0;  // 24 bits
  std::uint32_t psn = 0;  // 24 bits: first packet number this QP sends
  std::uint64_t ringAddr = 0;
  std::uint32_t ringRkey = 0;
  std::uint32_t ringSlots = 0;
  std::uint32_t slotBytes = 0;  // stride: slot header + payload
  /// The rank's reconnect listener (HCCL_OP_RETRY_ENABLE, rdma_rejoin.h); 0:
  /// its links are not retried (and older ranks, which sent 0 here).
  std::uint32_t hubPort = 0;
  bool operator==(const RdmaQpEntry& o) const;
};

struct RdmaSetupBlob {
  static constexpr std::uint32_t kMagic = 0x4d445243;  // "CRDM"
  static constexpr std::uint16_t kVersion = 1;
  static constexpr std::size_t kEntryBytes = 36;
  static constexpr std::size_t kMaxDeviceName = 64;

  Handshake handshake;
  RdmaEndpoint endpoint;
  std::vector<RdmaQpEntry> entries;

  Bytes encode() const;
  /// kConnectionError ("rdma setup blob: ...") for truncated, oversized or
  /// inconsistent bytes; the handshake's own errors for a foreign or
  /// wrong-version peer.
  static Status decode(const Bytes& bytes, RdmaSetupBlob* out);
  /// The entry reserved for `rank`, or null.
  const RdmaQpEntry* entryFor(int rank) const;
};

}  // namespace cohort::transport::rdma
