#include "transport/rdma/rdma_qp_attributes.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"

namespace cohort::transport::rdma {

namespace {

Status checkRange(const char* name, int value, int lo, int hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return makeError(ErrorCode::kConfigError,
                   "{}={} is out of range: expected an integer in [{}, {}]", name, value, lo, hi);
}

QpTransition blank() {
  QpTransition t;
  std::memset(&t.attr, 0, sizeof(t.attr));
  return t;
}

}  // namespace

Status QpSettings::fromConfig(const Config& config, QpSettings* out) {
  COHORT_RETURN_IF_ERROR(checkRange("COHORT_RDMA_TC", config.rdmaTc, 0, 255));
  COHORT_RETURN_IF_ERROR(checkRange("COHORT_RDMA_SL", config.rdmaSl, 0, 7));
  COHORT_RETURN_IF_ERROR(checkRange("COHORT_RDMA_TIMEOUT", config.rdmaTimeout, 5, 24));
  COHORT_RETURN_IF_ERROR(checkRange("COHORT_RDMA_RETRY_CNT", config.rdmaRetryCnt, 1, 7));
  out->trafficClass = config.rdmaTc;
  out->serviceLevel = config.rdmaSl;
  out->timeout = config.rdmaTimeout;
  out->retryCount = config.rdmaRetryCnt;
  return Status::Ok();
}

double ackTimeoutSeconds(int timeout) { return 4.096e-6 * std::ldexp(1.0, timeout); }

int mtuBytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
  }
  return 0;
}

QpTransition initTransition(const LocalPort& local) {
  QpTransition t = blank();
  t.attr.qp_state = IBV_QPS_INIT;
  t.attr.pkey_index = 0;
  t.attr.port_num = local.port;
  t.attr.qp_access_flags = kQpAccess;
  t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  return t;
}

QpTransition rtrTransition(const LocalPort& local, const RemoteQp& remote,
                           const QpSettings& settings) {
  QpTransition t = blank();
  t.attr.qp_state = IBV_QPS_RTR;
  t.attr.path_mtu = std::min(local.activeMtu, remote.mtu);  // the enum grows with the size
  t.attr.dest_qp_num = remote.qpn;
  t.attr.rq_psn = remote.psn;
  t.attr.max_dest_rd_atomic = 1;
  t.attr.min_rnr_timer = kMinRnrTimer;
  ibv_ah_attr& ah = t.attr.ah_attr;
  ah.port_num = local.port;
  ah.sl = static_cast<std::uint8_t>(settings.serviceLevel);
  ah.src_path_bits = 0;
  if (local.ethernet) {
    ah.is_global = 1;
    ah.dlid = 0;
    std::memcpy(ah.grh.dgid.raw, remote.gid.data(), remote.gid.size());
    ah.grh.sgid_index = static_cast<std::uint8_t>(local.gidIndex);
    ah.grh.hop_limit = kHopLimit;
    ah.grh.traffic_class = static_cast<std::uint8_t>(settings.trafficClass);
    ah.grh.flow_label = 0;
  } else {
    ah.is_global = 0;
    ah.dlid = remote.lid;
  }
  t.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  return t;
}

QpTransition rtsTransition(std::uint32_t localPsn, const QpSettings& settings) {
  QpTransition t = blank();
  t.attr.qp_state = IBV_QPS_RTS;
  t.attr.sq_psn = localPsn;
  t.attr.timeout = static_cast<std::uint8_t>(settings.timeout);
  t.attr.retry_cnt = static_cast<std::uint8_t>(settings.retryCount);
  t.attr.rnr_retry = kRnrRetryInfinite;
  t.attr.max_rd_atomic = 1;
  t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
           IBV_QP_MAX_QP_RD_ATOMIC;
  return t;
}

}  // namespace cohort::transport::rdma
