#include "transport/shm/shm_transport.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <new>

#include "cohort/runtime.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/shm/shm_connection.h"

namespace cohort::transport::shm {

namespace {

// What a rank tells its local peers (raw addresses are used only by peers in the
// same process, where they are valid as they are).
struct Blob {
  std::int32_t pid;
  std::int32_t rank;
  std::int32_t device;
  std::uint32_t regionBytes;
  runtime::MemHandle block;
  runtime::MemHandle deviceSegment;
  runtime::MemHandle hostSegment;
  std::uint64_t rawDeviceBase;
  std::uint64_t rawHostBase;
};

Status importHandle(const runtime::MemHandle& h, std::vector<void*>* imports, void** out) {
  COHORT_RETURN_IF_ERROR(runtime::memImport(h, out));
  imports->push_back(*out);
  return Status::Ok();
}

}  // namespace

Status ShmTransport::create(const TransportContext& context, std::unique_ptr<ShmTransport>* out) {
  std::unique_ptr<ShmTransport> t(new ShmTransport(context));
  void* mem = nullptr;
  if (context.shmRegionBytes > UINT32_MAX) {
    return makeError(ErrorCode::kInvalidArgument, "shm: a shared region of {} bytes is too large",
                     context.shmRegionBytes);
  }
  // The memory comes zero-filled: the region's layout starts as all zeros.
  COHORT_RETURN_IF_ERROR(
      runtime::sharedAlloc(kRegionOffset + context.shmRegionBytes, &mem, &t->blockHandle_));
  t->block_ = new (mem) ControlBlock();
  t->block_->magic = kBlockMagic;
  t->block_->regionBytes = static_cast<std::uint32_t>(context.shmRegionBytes);
  t->block_->pid = static_cast<std::int32_t>(getpid());
  t->block_->rank = context.rank;
  t->self_.rank = context.rank;
  t->self_.localIndex = context.self.localIndex;
  t->self_.pid = t->block_->pid;
  t->self_.block = t->block_;
  t->self_.region = static_cast<char*>(mem) + kRegionOffset;
  runtime::MemHandle ignored;
  void* base = nullptr;
  COHORT_RETURN_IF_ERROR(runtime::memExportSegment(-1, &ignored, &base));
  t->self_.hostBase = static_cast<char*>(base);
  if (context.self.device >= 0) {
    COHORT_RETURN_IF_ERROR(runtime::memExportSegment(context.self.device, &ignored, &base));
    t->self_.deviceBase = static_cast<char*>(base);
  }
  *out = std::move(t);
  return Status::Ok();
}

ShmTransport::~ShmTransport() {
  for (void* p : imports_) (void)runtime::memClose(p);
  for (void* p : retained_) (void)runtime::sharedFree(p);
  if (block_ != nullptr) {
    block_->~ControlBlock();
    (void)runtime::sharedFree(block_);
  }
}

std::string ShmTransport::rejectReason(const PeerInfo& peer) const {
  if (peer.hostId != context_.self.hostId) {
    return "peer is on another node (host id " + peer.hostId + " vs " + context_.self.hostId + ")";
  }
  if (peer.localIndex < 0 || peer.localIndex >= kMaxLocalRanks) {
    return "more than " + std::to_string(kMaxLocalRanks) + " ranks on one node";
  }
  return "";
}

Status ShmTransport::setup(Bytes* out) {
  Blob b{};
  b.pid = self_.pid;
  b.rank = context_.rank;
  b.device = context_.self.device;
  b.regionBytes = block_->regionBytes;
  b.block = blockHandle_;
  COHORT_RETURN_IF_ERROR(runtime::memExportSegment(-1, &b.hostSegment));
  if (b.device >= 0) COHORT_RETURN_IF_ERROR(runtime::memExportSegment(b.device, &b.deviceSegment));
  b.rawDeviceBase = reinterpret_cast<std::uint64_t>(self_.deviceBase);
  b.rawHostBase = reinterpret_cast<std::uint64_t>(self_.hostBase);
  out->resize(sizeof(b));
  std::memcpy(out->data(), &b, sizeof(b));
  return Status::Ok();
}

Status ShmTransport::mapPeer(const PeerInfo& info, const Bytes& bytes, ShmPeer* peer) {
  if (bytes.size() != sizeof(Blob)) {
    return makeError(ErrorCode::kConnectionError, "shm: rank {} sent a malformed blob ({} bytes)",
                     info.rank, bytes.size());
  }
  Blob b;
  std::memcpy(&b, bytes.data(), sizeof(b));
  if (b.regionBytes != block_->regionBytes) {
    return makeError(ErrorCode::kConnectionError,
                     "shm: rank {} maps a shared region of {} bytes, this rank {} (another build?)",
                     info.rank, b.regionBytes, block_->regionBytes);
  }
  peer->rank = info.rank;
  peer->localIndex = info.localIndex;
  peer->pid = b.pid;
  // The block outlives its owner's communicator, here as in another process: in the
  // same process through a reference of our own (one mapping, at the owner's address).
  void* p = nullptr;
  if (b.pid == self_.pid) {
    COHORT_RETURN_IF_ERROR(runtime::sharedRetain(b.block, &p));
    retained_.push_back(p);
  } else {
    COHORT_RETURN_IF_ERROR(importHandle(b.block, &imports_, &p));
  }
  peer->block = static_cast<ControlBlock*>(p);
  peer->region = static_cast<char*>(p) + kRegionOffset;
  if (b.pid == self_.pid) {  // same process: the segments' addresses are valid as they are
    peer->deviceBase = reinterpret_cast<char*>(b.rawDeviceBase);
    peer->hostBase = reinterpret_cast<char*>(b.rawHostBase);
    return Status::Ok();
  }
  COHORT_RETURN_IF_ERROR(importHandle(b.hostSegment, &imports_, &p));
  peer->hostBase = static_cast<char*>(p);
  if (b.device >= 0) {
    COHORT_RETURN_IF_ERROR(importHandle(b.deviceSegment, &imports_, &p));
    peer->deviceBase = static_cast<char*>(p);
  }
  if (peer->block->magic != kBlockMagic || peer->block->rank != info.rank) {
    return makeError(ErrorCode::kConnectionError,
                     "shm: rank {}'s control block is not valid (magic {:x}, rank {})", info.rank,
                     peer->block->magic, peer->block->rank);
  }
  return Status::Ok();
}

Status ShmTransport::connect(const PeerInfo& info, const Bytes& blob,
                             std::unique_ptr<Connection>* out) {
  ShmPeer peer;
  Status s = mapPeer(info, blob, &peer);
  if (!s.ok()) {
    return makeError(s.code(), "shm link rank {} -> rank {} (pid {}): {}", context_.rank,
                     info.rank, info.pid, s.message());
  }
  peers_[info.rank] = peer;
  out->reset(new ShmConnection(this, peers_[info.rank]));
  COHORT_LOG(kInfo, "transport", "shm link to rank {} (pid {}, local index {})", info.rank,
             peer.pid, peer.localIndex);
  return Status::Ok();
}

const ShmPeer* ShmTransport::peer(int rank) const {
  if (rank == context_.rank) return &self_;
  auto it = peers_.find(rank);
  return it == peers_.end() ? nullptr : &it->second;
}

Status ShmTransport::refOf(const void* p, SegmentRef* ref) const {
  int device = -1;
  std::uint64_t offset = 0;
  COHORT_RETURN_IF_ERROR(runtime::memSegmentOffset(p, &device, &offset));
  if (device >= 0 && device != context_.self.device) {
    return makeError(ErrorCode::kInvalidPointer,
                     "{} is memory of device {}, but this rank's communicator uses device {}", p,
                     device, context_.self.device);
  }
  ref->device = device;
  ref->pad = 0;
  ref->offset = offset;
  return Status::Ok();
}

}  // namespace cohort::transport::shm
