// The RDMA device side of the transport: opening a device and choosing its
// port and GID, registering memory with its protection domain, and RC queue
// pairs with their completion queues. Everything here calls libibverbs.
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>

#include "cohort/status.h"
#include "transport/rdma/rdma_qp_attributes.h"
#include "transport/rdma/rdma_queue_pair.h"
#include "transport/rdma/rdma_registration.h"
#include "transport/rdma/rdma_setup_blob.h"

namespace cohort::transport::rdma {

/// The text every "no device" error starts with (selection code shows it).
constexpr const char* kNoRdmaDevice = "no RDMA device: ibv_get_device_list returned none";

/// An opened device, its chosen port and GID, and a protection domain. Shared by
/// the transport, its connections and their memory (the last owner closes it).
/// Thread-safe (verbs calls on a context are).
class RdmaDevice {
 public:
  /// Opens the first device with an active port and a usable GID, preferring the
  /// GID of `preferredIpv4` (the bootstrap interface). kUnavailable starting with
  /// kNoRdmaDevice when there is no device, else listing why each port was unfit.
  static Status open(const std::string& preferredIpv4, std::shared_ptr<RdmaDevice>* out);
  ~RdmaDevice();
  RdmaDevice(const RdmaDevice&) = delete;
  RdmaDevice& operator=(const RdmaDevice&) = delete;

  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  const RdmaEndpoint& endpoint() const { return endpoint_; }
  LocalPort localPort() const;
  GidType gidType() const { return gidType_; }
  /// "mlx5_0:1 gid ::ffff:10.0.0.2 (RoCE v2, index 3)".
  std::string describe() const;

 private:
  RdmaDevice() = default;
  static Status tryDevice(ibv_device* device, const std::string& preferredIpv4,
                          std::shared_ptr<RdmaDevice>* out);
  Status tryPort(std::uint8_t port, const std::string& preferredIpv4);

  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  RdmaEndpoint endpoint_;
  GidType gidType_ = GidType::kRoceV2;
};

/// ibv_reg_mr / ibv_dereg_mr on the device's protection domain.
class VerbsRegistrar : public Registrar {
 public:
  explicit VerbsRegistrar(std::shared_ptr<RdmaDevice> device) : device_(std::move(device)) {}
  Status registerMemory(void* addr, std::size_t length, int access, MemoryRegion* out) override;
  void deregister(const MemoryRegion& region) override;

 private:
  std::shared_ptr<RdmaDevice> device_;
};

/// An RC queue pair with its own completion queue and completion channel. Owns
/// all three; keeps the device open. Not thread-safe.
class VerbsQueuePair : public QueuePair {
 public:
  /// Creates the queue pair (kSendQueueDepth sends, kRecvDepth receives) and
  /// moves it to INIT.
  static Status create(std::shared_ptr<RdmaDevice> device, std::unique_ptr<VerbsQueuePair>* out);
  ~VerbsQueuePair() override;

  /// ibv_modify_qp; `what` ("RTR") names the state in the error.
  Status modify(const QpTransition& transition, const char* what);

  int postSend(ibv_send_wr* wr) override;
  int postRecv(ibv_recv_wr* wr) override;
  int poll(int max, ibv_wc* wc) override;
  int armNotify() override;
  void drainNotify() override;
  std::uint32_t qpNumber() const override { return qp_->qp_num; }
  void toError() override;

 private:
  explicit VerbsQueuePair(std::shared_ptr<RdmaDevice> device) : device_(std::move(device)) {}

  std::shared_ptr<RdmaDevice> device_;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  unsigned int unackedEvents_ = 0;
};

}  // namespace cohort::transport::rdma
