// The attributes of the RC queue pair state changes (RESET -> INIT -> RTR ->
// RTS), computed by pure functions so that they are tested without a device.
// Traffic class, service level, ACK timeout and retry count come from
// COHORT_RDMA_TC / _SL / _TIMEOUT / _RETRY_CNT (as HCCL_RDMA_* do).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "cohort/status.h"
#include "common/config.h"
#include "transport/rdma/rdma_gid.h"

namespace cohort::transport::rdma {

struct QpSettings {
  int trafficClass = 132;  // GRH traffic class (DSCP 33 << 2 by default)
  int serviceLevel = 4;
  int timeout = 20;    // local ACK timeout: 4.096 us * 2^timeout
  int retryCount = 7;  // transport retries before a RETRY_EXC_ERR completion
  /// From the config; kConfigError naming the variable when a value is out of
  /// range (the ranges Config::parse enforces).
  static Status fromConfig(const Config& config, QpSettings* out);
};

/// Seconds a sender waits for an ACK before retrying, for a timeout exponent.
double ackTimeoutSeconds(int timeout);

/// This end of the link.
struct LocalPort {
  std::uint8_t port = 1;
  int gidIndex = 0;
  ibv_mtu activeMtu = IBV_MTU_1024;
  bool ethernet = true;  // RoCE: every packet carries a GRH
};

/// The peer's queue pair, from its setup blob.
struct RemoteQp {
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  Gid gid{};
  std::uint16_t lid = 0;
  ibv_mtu mtu = IBV_MTU_1024;
};

/// An ibv_modify_qp argument pair.
struct QpTransition {
  ibv_qp_attr attr;
  int mask = 0;
};

/// Access for RDMA WRITE into our ring.
constexpr int kQpAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
/// min_rnr_timer code 12 = 0.64 ms between receiver-not-ready retries.
constexpr std::uint8_t kMinRnrTimer = 12;
/// rnr_retry 7 = retry forever (the receiver reposts receives as it polls).
constexpr std::uint8_t kRnrRetryInfinite = 7;
constexpr std::uint8_t kHopLimit = 255;

QpTransition initTransition(const LocalPort& local);
/// path MTU = the smaller of both ports'; GRH with the settings' traffic class on
/// Ethernet (RoCE), plain LID routing on InfiniBand.
QpTransition rtrTransition(const LocalPort& local, const RemoteQp& remote,
                           const QpSettings& settings);
QpTransition rtsTransition(std::uint32_t localPsn, const QpSettings& settings);

/// 256..4096 for an ibv_mtu; 0 for an invalid code.
int mtuBytes(ibv_mtu mtu);

}  // namespace cohort::transport::rdma
