#include "transport/rdma/rdma_setup_blob.h"

#include <set>

#include "common/error.h"
#include "transport/little_endian.h"
#include "transport/rdma/rdma_wire.h"

namespace cohort::transport::rdma {

namespace {

// Fixed part after the handshake: magic, version, entry size, GID, GID index,
// LID, port, MTU, link layer, device name length.
constexpr std::size_t kFixedBytes = 4 + 2 + 2 + 16 + 4 + 2 + 1 + 1 + 1 + 1;

class Reader {
 public:
  explicit Reader(const Bytes& b) : b_(b), pos_(Handshake::kWireSize) {}
  std::uint64_t get(int bytes) {
    const std::uint64_t v = loadLe(b_.data() + pos_, bytes);
    pos_ += bytes;
    return v;
  }
  void copy(std::uint8_t* dst, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) dst[i] = b_[pos_ + i];
    pos_ += n;
  }
  std::size_t left() const { return b_.size() - pos_; }

 private:
  const Bytes& b_;
  std::size_t pos_;
};

Status blobError(const std::string& what) {
  return makeError(ErrorCode::kConnectionError, "rdma setup blob: {}", what);
}

Status checkEndpoint(const RdmaEndpoint& e) {
  if (e.mtu < 1 || e.mtu > 5) return blobError(fmt::format("MTU code {} not in 1..5", e.mtu));
  if (e.linkLayer != kLinkLayerEthernet && e.linkLayer != kLinkLayerInfiniBand) {
    return blobError(fmt::format("unknown link layer {}", e.linkLayer));
  }
  if (e.port == 0) return blobError("port 0");
  return Status::Ok();
}

Status readEntry(Reader& r, int worldSize, std::set<int>* seen, RdmaQpEntry* e) {
  e->peerRank = static_cast<std::int32_t>(r.get(4));
  e->qpn = static_cast<std::uint32_t>(r.get(4));
  e->psn = static_cast<std::uint32_t>(r.get(4));
  e->ringAddr = r.get(8);
  e->ringRkey = static_cast<std::uint32_t>(r.get(4));
  e->ringSlots = static_cast<std::uint32_t>(r.get(4));
  e->slotBytes = static_cast<std::uint32_t>(r.get(4));
  e->hubPort = static_cast<std::uint32_t>(r.get(4));
  if (e->peerRank < 0 || e->peerRank >= worldSize) {
    return blobError(fmt::format("entry for rank {} outside [0, {})", e->peerRank, worldSize));
  }
  if (!seen->insert(e->peerRank).second) {
    return blobError(fmt::format("two entries for rank {}", e->peerRank));
  }
  if (e->qpn > kMax24 || e->psn > kMax24) {
    return blobError(fmt::format("rank {} entry: qpn 0x{:x} / psn 0x{:x} exceed 24 bits",
                                 e->peerRank, e->qpn, e->psn));
  }
  if (e->hubPort > 65535) {
    return blobError(
        fmt::format("rank {} entry: reconnect port {} beyond 65535", e->peerRank, e->hubPort));
  }
  if (e->ringSlots == 0 || e->ringAddr == 0) {
    return blobError(fmt::format("rank {} entry: empty ring ({} slots at 0x{:x})", e->peerRank,
                                 e->ringSlots, e->ringAddr));
  }
  return Status::Ok();
}

}  // namespace

bool RdmaQpEntry::operator==(const RdmaQpEntry& o) const {
  return peerRank == o.peerRank && qpn == o.qpn && psn == o.psn && ringAddr == o.ringAddr &&
         ringRkey == o.ringRkey && ringSlots == o.ringSlots && slotBytes == o.slotBytes &&
         hubPort == o.hubPort;
}

Bytes RdmaSetupBlob::encode() const {
  Bytes out(Handshake::kWireSize);
  handshake.encode(out.data());
  appendLe(out, kMagic, 4);
  appendLe(out, kVersion, 2);
  appendLe(out, kEntryBytes, 2);
  out.insert(out.end(), endpoint.gid.begin(), endpoint.gid.end());
  appendLe(out, endpoint.gidIndex, 4);
  appendLe(out, endpoint.lid, 2);
  appendLe(out, endpoint.port, 1);
  appendLe(out, endpoint.mtu, 1);
  appendLe(out, endpoint.linkLayer, 1);
  const std::size_t nameBytes = std::min(endpoint.device.size(), kMaxDeviceName);
  appendLe(out, nameBytes, 1);
  out.insert(out.end(), endpoint.device.begin(), endpoint.device.begin() + nameBytes);
  appendLe(out, entries.size(), 4);
  for (const RdmaQpEntry& e : entries) {
    appendLe(out, static_cast<std::uint32_t>(e.peerRank), 4);
    appendLe(out, e.qpn, 4);
    appendLe(out, e.psn, 4);
    appendLe(out, e.ringAddr, 8);
    appendLe(out, e.ringRkey, 4);
    appendLe(out, e.ringSlots, 4);
    appendLe(out, e.slotBytes, 4);
    appendLe(out, e.hubPort, 4);
  }
  return out;
}

Status RdmaSetupBlob::decode(const Bytes& bytes, RdmaSetupBlob* out) {
  if (bytes.size() < Handshake::kWireSize + kFixedBytes) {
    return blobError(fmt::format("truncated: {} bytes, at least {} needed", bytes.size(),
                                 Handshake::kWireSize + kFixedBytes));
  }
  RdmaSetupBlob blob;
  COHORT_RETURN_IF_ERROR(Handshake::decode(bytes.data(), &blob.handshake));
  Reader r(bytes);
  const auto magic = static_cast<std::uint32_t>(r.get(4));
  if (magic != kMagic)
    return blobError(fmt::format("bad magic 0x{:08x} (not an rdma blob)", magic));
  const auto version = r.get(2);
  const auto entryBytes = r.get(2);
  if (version != kVersion || entryBytes != kEntryBytes) {
    return blobError(fmt::format("version {} with {}-byte entries, expected version {} with {}",
                                 version, entryBytes, kVersion, kEntryBytes));
  }
  RdmaEndpoint& e = blob.endpoint;
  r.copy(e.gid.data(), e.gid.size());
  e.gidIndex = static_cast<std::uint32_t>(r.get(4));
  e.lid = static_cast<std::uint16_t>(r.get(2));
  e.port = static_cast<std::uint8_t>(r.get(1));
  e.mtu = static_cast<std::uint8_t>(r.get(1));
  e.linkLayer = static_cast<std::uint8_t>(r.get(1));
  const std::size_t nameBytes = r.get(1);
  COHORT_RETURN_IF_ERROR(checkEndpoint(e));
  if (nameBytes > kMaxDeviceName || r.left() < nameBytes + 4) {
    return blobError(fmt::format("truncated after the endpoint ({} bytes left, name of {})",
                                 r.left(), nameBytes));
  }
  e.device.resize(nameBytes);
  r.copy(reinterpret_cast<std::uint8_t*>(e.device.data()), nameBytes);
  const std::uint64_t count = r.get(4);
  const int worldSize = blob.handshake.worldSize;
  if (worldSize <= 0 || count > static_cast<std::uint64_t>(worldSize) ||
      r.left() != count * kEntryBytes) {
    return blobError(fmt::format("{} entries for world size {} do not match the {} bytes left",
                                 count, worldSize, r.left()));
  }
  std::set<int> seen;
  blob.entries.resize(count);
  for (RdmaQpEntry& entry : blob.entries) {
    COHORT_RETURN_IF_ERROR(readEntry(r, worldSize, &seen, &entry));
  }
  *out = std::move(blob);
  return Status::Ok();
}

const RdmaQpEntry* RdmaSetupBlob::entryFor(int rank) const {
  for (const RdmaQpEntry& e : entries) {
    if (e.peerRank == rank) return &e;
  }
  return nullptr;
}

}  // namespace cohort::transport::rdma
