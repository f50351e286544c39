#include "conformance_util.h"

#include <unistd.h>

#include <cstring>

#include "cohort/runtime.h"
#include "common/error.h"
#include "transport/bootstrap.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"
#ifdef COHORT_HAVE_RDMA
#include "transport/rdma/rdma_transport.h"
#endif

namespace cohort::transport::testing {

namespace {

Status makeKind(const std::string& kind, const TransportContext& ctx,
                std::unique_ptr<Transport>* out) {
  if (kind == "shm") {
    std::unique_ptr<shm::ShmTransport> t;
    COHORT_RETURN_IF_ERROR(shm::ShmTransport::create(ctx, &t));
    *out = std::move(t);
    return Status::Ok();
  }
  if (kind == "tcp") {
    *out = makeTcpTransport(ctx);
    return Status::Ok();
  }
#ifdef COHORT_HAVE_RDMA
  if (kind == "rdma") return makeRdmaTransport(ctx, out);
#endif
  return makeError(ErrorCode::kUnavailable, "no {} transport in this build", kind);
}

PeerInfo selfInfo(int rank, int device) {
  PeerInfo p;
  p.rank = rank;
  p.hostId = localHostId();
  p.hostname = "localhost";
  p.pid = static_cast<std::int32_t>(::getpid());
  p.device = device;
  p.physicalDevice = device;
  p.address = "127.0.0.1";
  p.localIndex = rank;
  return p;
}

std::uint64_t patternWord(std::size_t word, std::uint32_t seed) {
  std::uint64_t x = (word + 1) * 0x9E3779B97F4A7C15ull ^ (seed + 1) * 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

}  // namespace

std::string unavailableReason(const std::string& kind) {
  if (kind == "shm" || kind == "tcp") return "";
#ifdef COHORT_HAVE_RDMA
  TransportContext ctx;
  ctx.rank = 0;
  ctx.size = 2;
  ctx.self = selfInfo(0, -1);
  std::unique_ptr<Transport> t;
  const Status s = makeKind(kind, ctx, &t);
  return s.ok() ? "" : "rdma cannot run here: " + s.message();
#else
  return kind + ": this Cohort was built without libibverbs";
#endif
}

End::~End() {
  conn.reset();
  transport.reset();
  if (device >= 0) (void)runtime::resetDevice(device);
}

Status connectEnd(const std::string& kind, std::shared_ptr<Store> store, int rank, int device,
                  End* out, long timeoutMs, std::size_t shmRegionBytes) {
  const Deadline deadline = Deadline::afterMs(timeoutMs);
  if (device >= 0) {  // the shm transport maps the device's memory: it must be up
    COHORT_RETURN_IF_ERROR(runtime::setDevice(device));
    out->device = device;
  }
  Bootstrap bootstrap(std::move(store), rank, 2);
  TransportContext ctx;
  ctx.rank = rank;
  ctx.size = 2;
  ctx.self = selfInfo(rank, device);
  ctx.token = JobToken::fromText("transport-conformance");
  ctx.connectDeadline = deadline;
  ctx.shmRegionBytes = shmRegionBytes;
  std::vector<Bytes> infos, blobs;
  COHORT_RETURN_IF_ERROR(bootstrap.allgather(ctx.self.encode(), &infos, deadline));
  PeerInfo peer;
  COHORT_RETURN_IF_ERROR(PeerInfo::decode(infos[static_cast<std::size_t>(1 - rank)], &peer));
  peer.localIndex = 1 - rank;
  COHORT_RETURN_IF_ERROR(makeKind(kind, ctx, &out->transport));
  Bytes blob;
  COHORT_RETURN_IF_ERROR(out->transport->setup(&blob));
  COHORT_RETURN_IF_ERROR(bootstrap.allgather(blob, &blobs, deadline));
  return out->transport->connect(peer, blobs[static_cast<std::size_t>(1 - rank)], &out->conn);
}

Status drain(Connection& c, long timeoutMs, const std::string& what) {
  Connection* one = &c;
  return waitIdle(&one, 1, Deadline::afterMs(timeoutMs), what);
}

Buffer::Buffer(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  if (device < 0) {
    host_.resize(bytes + 1);  // never null, even for 0 bytes
    data_ = host_.data();
    return;
  }
  status_ = runtime::setDevice(device);
  void* p = nullptr;
  if (status_.ok()) status_ = runtime::deviceMalloc(&p, bytes > 0 ? bytes : 1);
  data_ = static_cast<std::uint8_t*>(p);
}

Buffer::~Buffer() {
  if (device_ < 0) return;
  if (data_ != nullptr) (void)runtime::deviceFree(data_);
  (void)runtime::resetDevice(device_);
}

void fillPattern(std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t w = patternWord(i / 8, seed);
    std::memcpy(p + i, &w, 8);
  }
  const std::uint64_t last = patternWord(i / 8, seed);
  std::memcpy(p + i, &last, n - i);
}

std::size_t firstWrong(const std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t w = patternWord(i / 8, seed);
    const std::size_t len = n - i < 8 ? n - i : 8;
    if (std::memcmp(p + i, &w, len) == 0) continue;
    for (std::size_t j = 0; j < len; ++j) {
      if (p[i + j] != reinterpret_cast<const std::uint8_t*>(&w)[j]) return i + j;
    }
  }
  return n;
}

}  // namespace cohort::transport::testing
