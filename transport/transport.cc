// Transport selection and connection set-up for a communicator: transports in
// priority order, the first that accepts a peer wins, every rejection is kept.
#include "transport/transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/little_endian.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_transport.h"
#ifdef COHORT_HAVE_RDMA
#include "transport/rdma/rdma_transport.h"
#endif

namespace cohort::transport {

namespace {

// The blobs of every transport of one rank, as "name\0" + length + bytes each.
Bytes packBlobs(const std::vector<std::pair<std::string, Bytes>>& blobs) {
  Bytes out;
  for (const auto& [name, blob] : blobs) {
    out.insert(out.end(), name.begin(), name.end());
    out.push_back(0);
    const auto n = static_cast<std::uint32_t>(blob.size());
    appendLe(out, n, 4);
    out.insert(out.end(), blob.begin(), blob.end());
  }
  return out;
}

bool findBlob(const Bytes& packed, const std::string& name, Bytes* blob) {
  std::size_t pos = 0;
  while (pos < packed.size()) {
    const auto end = std::find(packed.begin() + static_cast<long>(pos), packed.end(), 0);
    if (end == packed.end()) return false;
    const std::string n(packed.begin() + static_cast<long>(pos), end);
    pos = static_cast<std::size_t>(end - packed.begin()) + 1;
    if (pos + 4 > packed.size()) return false;
    const auto len = static_cast<std::uint32_t>(loadLe(packed.data() + pos, 4));
    pos += 4;
    if (pos + len > packed.size()) return false;
    if (n == name) {
      blob->assign(packed.begin() + static_cast<long>(pos),
                   packed.begin() + static_cast<long>(pos + len));
      return true;
    }
    pos += len;
  }
  return false;
}

}  // namespace

Status makeTransports(const TransportContext& context, Transports* made) {
  const std::string& forced = Config::global().transport;
  made->all.clear();
  made->shm = nullptr;
  std::vector<std::unique_ptr<Transport>>* out = &made->all;
  if (forced == "auto" || forced == "shm") {
    std::unique_ptr<shm::ShmTransport> shm;
    COHORT_RETURN_IF_ERROR(shm::ShmTransport::create(context, &shm));
    made->shm = shm.get();
    out->push_back(std::move(shm));
  }
#ifdef COHORT_HAVE_RDMA
  if (forced == "auto" || forced == "rdma") {
    std::unique_ptr<Transport> rdma;
    Status s = makeRdmaTransport(context, &rdma);
    if (s.ok()) {
      out->push_back(std::move(rdma));
    } else if (forced == "rdma") {
      return makeError(s.code(), "COHORT_TRANSPORT=rdma, but rdma is unavailable: {}",
                       s.message());
    } else {
      COHORT_LOG(kInfo, "transport", "rdma unavailable ({}); falling back to tcp", s.message());
    }
  }
#else
  if (forced == "rdma") {
    return Status(ErrorCode::kUnavailable,
                  "COHORT_TRANSPORT=rdma, but this Cohort was built without libibverbs");
  }
#endif
  if (forced == "auto" || forced == "tcp") out->push_back(makeTcpTransport(context));
  return Status::Ok();
}

Status connectPeers(const TransportContext& context, Bootstrap& bootstrap,
                    const std::vector<PeerInfo>& everyone, const std::vector<int>& peers,
                    std::vector<std::unique_ptr<Connection>>* out, LinkReport* report,
                    Transports* transports) {
  COHORT_RETURN_IF_ERROR(makeTransports(context, transports));
  std::vector<std::pair<std::string, Bytes>> mine;
  for (auto& t : transports->all) {
    Bytes blob;
    Status s = t->setup(&blob);
    if (!s.ok()) {
      return makeError(s.code(), "rank {}: {} transport set-up failed: {}", context.rank, t->name(),
                       s.message());
    }
    mine.emplace_back(t->name(), std::move(blob));
  }
  std::vector<Bytes> all;
  COHORT_RETURN_IF_ERROR(bootstrap.allgather(packBlobs(mine), &all, context.connectDeadline));
  out->clear();
  out->resize(everyone.size());
  std::vector<int> sorted = peers;
  std::sort(sorted.begin(), sorted.end());
  for (int p : sorted) {
    if (p == context.rank) continue;
    const PeerInfo& peer = everyone[static_cast<std::size_t>(p)];
    std::string reasons;
    for (auto& t : transports->all) {
      Bytes blob;
      std::string why = t->rejectReason(peer);
      if (why.empty() && !findBlob(all[static_cast<std::size_t>(p)], t->name(), &blob)) {
        why = "the peer has no " + std::string(t->name()) + " transport";
      }
      if (!why.empty()) {
        reasons += fmt::format("; {}: {}", t->name(), why);
        continue;
      }
      Status s = t->connect(peer, blob, &(*out)[static_cast<std::size_t>(p)]);
      if (!s.ok()) return s;
      break;
    }
    if ((*out)[static_cast<std::size_t>(p)] == nullptr) {
      return makeError(ErrorCode::kUnavailable, "no transport found for rank {} -> rank {}{}",
                       context.rank, p, reasons);
    }
  }
  return probeAll(context, *out, sorted, report);
}

Status probeAll(const TransportContext& context,
                std::vector<std::unique_ptr<Connection>>& conns, const std::vector<int>& sorted,
                LinkReport* report) {
  const std::string& mode = Config::global().linkCheck;
  for (int p : sorted) {
    Connection* c = conns[static_cast<std::size_t>(p)].get();
    if (c == nullptr) continue;
    LinkResult r;
    r.rank = context.rank;
    r.peer = p;
    r.transport = c->kind();
    r.remote = c->describe();
    r.ok = true;
    if (mode != "off") {
      Status s = probeLink(*c, context.rank < p, mode == "full" ? 5 : 3,
                           mode == "full" ? (4u << 20) : 0, context.connectDeadline, &r);
      if (!s.ok()) {
        return makeError(s.code(), "link check rank {} -> rank {} ({}) failed: {}", context.rank,
                         p, c->describe(), s.message());
      }
    }
    if (report != nullptr) report->links.push_back(r);
  }
  return Status::Ok();
}

TransportContext::Retry TransportContext::Retry::from(const Config& levels, const Config& params) {
  Retry r;
  r.l0 = levels.retryL0;
  r.l1 = levels.retryL1;
  r.maxCnt = params.retryMaxCnt;
  r.holdMs = params.retryHoldMs;
  r.intervalMs = params.retryIntervalMs;
  return r;
}

}  // namespace cohort::transport
