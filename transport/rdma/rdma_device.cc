#include "transport/rdma/rdma_device.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "transport/rdma/rdma_wire.h"

namespace cohort::transport::rdma {

namespace {

GidType gidTypeOf(std::uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_ROCE_V2:
      return GidType::kRoceV2;
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    default:
      return GidType::kIb;
  }
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

Status RdmaDevice::open(const std::string& preferredIpv4, std::shared_ptr<RdmaDevice>* out) {
  int count = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr || count == 0) {
    const int err = errno;
    if (list) ibv_free_device_list(list);
    if (list == nullptr && err != 0) {
      return makeError(ErrorCode::kUnavailable, "{} ({})", kNoRdmaDevice, std::strerror(err));
    }
    return Status(ErrorCode::kUnavailable, kNoRdmaDevice);
  }
  std::vector<std::string> reasons;
  for (int i = 0; i < count && !*out; ++i) {
    Status s = tryDevice(list[i], preferredIpv4, out);
    if (!s.ok()) reasons.push_back(s.message());
  }
  ibv_free_device_list(list);
  if (!*out) {
    return makeError(ErrorCode::kUnavailable, "no usable RDMA port among {} device(s): {}", count,
                     joined(reasons));
  }
  COHORT_LOG(kInfo, "transport", "rdma: using {}", (*out)->describe());
  return Status::Ok();
}

Status RdmaDevice::tryDevice(ibv_device* device, const std::string& preferredIpv4,
                             std::shared_ptr<RdmaDevice>* out) {
  const std::string name = ibv_get_device_name(device);
  std::shared_ptr<RdmaDevice> d(new RdmaDevice());
  d->context_ = ibv_open_device(device);
  if (!d->context_) return systemError(errno, fmt::format("{}: ibv_open_device", name));
  ibv_device_attr attr;
  if (int rc = ibv_query_device(d->context_, &attr)) {
    return systemError(rc, fmt::format("{}: ibv_query_device", name));
  }
  d->endpoint_.device = name;
  std::vector<std::string> reasons;
  for (int port = 1; port <= attr.phys_port_cnt; ++port) {
    Status s = d->tryPort(static_cast<std::uint8_t>(port), preferredIpv4);
    if (s.ok()) {
      d->pd_ = ibv_alloc_pd(d->context_);
      if (!d->pd_) return systemError(errno, fmt::format("{}: ibv_alloc_pd", name));
      *out = std::move(d);
      return Status::Ok();
    }
    reasons.push_back(s.message());
  }
  return makeError(ErrorCode::kUnavailable, "{}: {}", name,
                   reasons.empty() ? std::string("no ports") : joined(reasons));
}

Status RdmaDevice::tryPort(std::uint8_t port, const std::string& preferredIpv4) {
  ibv_port_attr attr;
  if (int rc = ibv_query_port(context_, port, &attr)) {
    return systemError(rc, fmt::format("port {}: ibv_query_port", port));
  }
  if (attr.state != IBV_PORT_ACTIVE) {
    return makeError(ErrorCode::kUnavailable, "port {} is {}", port,
                     ibv_port_state_str(attr.state));
  }
  std::vector<GidEntry> table;
  for (int index = 0; index < attr.gid_tbl_len; ++index) {
    ibv_gid_entry entry;
    if (ibv_query_gid_ex(context_, port, static_cast<std::uint32_t>(index), &entry, 0) != 0) {
      continue;  // an empty slot (ENODATA)
    }
    GidEntry e;
    e.index = index;
    std::memcpy(e.gid.data(), entry.gid.raw, e.gid.size());
    e.type = gidTypeOf(entry.gid_type);
    table.push_back(e);
  }
  GidEntry chosen;
  Status s = chooseGid(table, preferredIpv4, &chosen);
  if (!s.ok()) return makeError(s.code(), "port {}: {}", port, s.message());
  endpoint_.port = port;
  endpoint_.linkLayer =
      attr.link_layer == IBV_LINK_LAYER_INFINIBAND ? kLinkLayerInfiniBand : kLinkLayerEthernet;
  endpoint_.mtu = static_cast<std::uint8_t>(attr.active_mtu);
  endpoint_.lid = attr.lid;
  endpoint_.gidIndex = static_cast<std::uint32_t>(chosen.index);
  endpoint_.gid = chosen.gid;
  gidType_ = chosen.type;
  return Status::Ok();
}

RdmaDevice::~RdmaDevice() {
  if (pd_) ibv_dealloc_pd(pd_);
  if (context_) ibv_close_device(context_);
}

LocalPort RdmaDevice::localPort() const {
  LocalPort p;
  p.port = endpoint_.port;
  p.gidIndex = static_cast<int>(endpoint_.gidIndex);
  p.activeMtu = static_cast<ibv_mtu>(endpoint_.mtu);
  p.ethernet = endpoint_.linkLayer == kLinkLayerEthernet;
  return p;
}

std::string RdmaDevice::describe() const {
  return fmt::format("{}:{} gid {} ({}, index {})", endpoint_.device, endpoint_.port,
                     gidToString(endpoint_.gid), gidTypeName(gidType_), endpoint_.gidIndex);
}

Status VerbsRegistrar::registerMemory(void* addr, std::size_t length, int access,
                                      MemoryRegion* out) {
  ibv_mr* mr = ibv_reg_mr(device_->pd(), addr, length, access);
  if (!mr) {
    return systemError(errno, fmt::format("ibv_reg_mr of {} bytes at {} on {} (memlock limit, "
                                          "ulimit -l, too low?)",
                                          length, addr, device_->endpoint().device));
  }
  *out = MemoryRegion{addr, length, mr->lkey, mr->rkey, mr};
  return Status::Ok();
}

void VerbsRegistrar::deregister(const MemoryRegion& region) {
  if (region.handle) ibv_dereg_mr(static_cast<ibv_mr*>(region.handle));
}

Status VerbsQueuePair::create(std::shared_ptr<RdmaDevice> device,
                              std::unique_ptr<VerbsQueuePair>* out) {
  std::unique_ptr<VerbsQueuePair> q(new VerbsQueuePair(device));
  ibv_context* ctx = device->context();
  q->channel_ = ibv_create_comp_channel(ctx);
  if (!q->channel_) return systemError(errno, "ibv_create_comp_channel");
  const int flags = fcntl(q->channel_->fd, F_GETFL);
  if (fcntl(q->channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return systemError(errno, "fcntl(O_NONBLOCK) on the completion channel");
  }
  q->cq_ = ibv_create_cq(ctx, kCqDepth, nullptr, q->channel_, 0);
  if (!q->cq_) return systemError(errno, fmt::format("ibv_create_cq of {} entries", kCqDepth));
  ibv_qp_init_attr init;
  std::memset(&init, 0, sizeof(init));
  init.send_cq = q->cq_;
  init.recv_cq = q->cq_;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = kSendQueueDepth;
  init.cap.max_recv_wr = kRecvDepth;
  init.cap.max_send_sge = 2;
  init.cap.max_recv_sge = 1;
  q->qp_ = ibv_create_qp(device->pd(), &init);
  if (!q->qp_) return systemError(errno, "ibv_create_qp (RC)");
  COHORT_RETURN_IF_ERROR(q->modify(initTransition(device->localPort()), "INIT"));
  *out = std::move(q);
  return Status::Ok();
}

VerbsQueuePair::~VerbsQueuePair() {
  if (qp_) ibv_destroy_qp(qp_);
  if (cq_) {
    drainNotify();
    ibv_ack_cq_events(cq_, unackedEvents_);
    ibv_destroy_cq(cq_);
  }
  if (channel_) ibv_destroy_comp_channel(channel_);
}

Status VerbsQueuePair::modify(const QpTransition& transition, const char* what) {
  QpTransition t = transition;
  if (int rc = ibv_modify_qp(qp_, &t.attr, t.mask)) {
    return systemError(rc, fmt::format("ibv_modify_qp of qpn 0x{:x} to {} on {}", qp_->qp_num, what,
                                       device_->describe()));
  }
  return Status::Ok();
}

void VerbsQueuePair::toError() {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  if (int rc = ibv_modify_qp(qp_, &attr, IBV_QP_STATE)) {
    COHORT_LOG(kWarn, "transport", "ibv_modify_qp of qpn 0x{:x} to ERR on {}: {}", qp_->qp_num,
               device_->describe(), std::strerror(rc));
  }
}

int VerbsQueuePair::postSend(ibv_send_wr* wr) {
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp_, wr, &bad);
}

int VerbsQueuePair::postRecv(ibv_recv_wr* wr) {
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp_, wr, &bad);
}

int VerbsQueuePair::poll(int max, ibv_wc* wc) { return ibv_poll_cq(cq_, max, wc); }

int VerbsQueuePair::armNotify() {
  if (ibv_req_notify_cq(cq_, 0) != 0) return -1;
  return channel_->fd;
}

void VerbsQueuePair::drainNotify() {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(channel_, &cq, &context) == 0) ++unackedEvents_;
  if (unackedEvents_ >= 64) {
    ibv_ack_cq_events(cq_, unackedEvents_);
    unackedEvents_ = 0;
  }
}

}  // namespace cohort::transport::rdma
