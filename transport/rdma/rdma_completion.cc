#include "transport/rdma/rdma_completion.h"

#include "common/error.h"

namespace cohort::transport::rdma {

namespace {

struct Meaning {
  ErrorCode code;
  const char* cause;
};

Meaning meaningOf(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return {ErrorCode::kSuccess, "success"};
    case IBV_WC_LOC_LEN_ERR:
      return {ErrorCode::kInternal, "a local length exceeded its buffer"};
    case IBV_WC_LOC_QP_OP_ERR:
      return {ErrorCode::kInternal, "a malformed work request"};
    case IBV_WC_LOC_EEC_OP_ERR:
      return {ErrorCode::kInternal, "a local EE context error"};
    case IBV_WC_LOC_PROT_ERR:
      return {ErrorCode::kInternal, "a local buffer is not covered by its memory region"};
    case IBV_WC_WR_FLUSH_ERR:
      return {ErrorCode::kConnectionError, "the queue pair was already in error; request flushed"};
    case IBV_WC_MW_BIND_ERR:
      return {ErrorCode::kInternal, "a memory window bind failed"};
    case IBV_WC_BAD_RESP_ERR:
      return {ErrorCode::kConnectionError, "the peer sent an unexpected response"};
    case IBV_WC_LOC_ACCESS_ERR:
      return {ErrorCode::kInternal, "a local memory access was refused"};
    case IBV_WC_REM_INV_REQ_ERR:
      return {ErrorCode::kRemoteError, "the peer rejected the request as invalid"};
    case IBV_WC_REM_ACCESS_ERR:
      return {ErrorCode::kRemoteError, "the peer refused the remote key or address (ring gone?)"};
    case IBV_WC_REM_OP_ERR:
      return {ErrorCode::kRemoteError, "the peer failed to execute it"};
    case IBV_WC_RETRY_EXC_ERR:
      return {ErrorCode::kRemoteError,
              "no ACK after COHORT_RDMA_RETRY_CNT retries: peer dead or unreachable"};
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return {ErrorCode::kRemoteError, "the peer posted no receive in time"};
    case IBV_WC_LOC_RDD_VIOL_ERR:
      return {ErrorCode::kInternal, "a reliable datagram violation"};
    case IBV_WC_REM_INV_RD_REQ_ERR:
      return {ErrorCode::kRemoteError, "the peer rejected a read request"};
    case IBV_WC_REM_ABORT_ERR:
      return {ErrorCode::kRemoteError, "the peer aborted the operation"};
    case IBV_WC_INV_EECN_ERR:
      return {ErrorCode::kConnectionError, "an invalid EE context number"};
    case IBV_WC_INV_EEC_STATE_ERR:
      return {ErrorCode::kConnectionError, "an invalid EE context state"};
    case IBV_WC_FATAL_ERR:
      return {ErrorCode::kSystemError, "the RDMA device reported a fatal error"};
    case IBV_WC_RESP_TIMEOUT_ERR:
      return {ErrorCode::kTimeout, "the peer's response timed out"};
    case IBV_WC_GENERAL_ERR:
      return {ErrorCode::kConnectionError, "a general device error"};
    case IBV_WC_TM_ERR:
      return {ErrorCode::kInternal, "a tag matching error"};
    case IBV_WC_TM_RNDV_INCOMPLETE:
      return {ErrorCode::kInternal, "a tag matching rendezvous did not complete"};
  }
  return {ErrorCode::kConnectionError, "an unknown completion status"};
}

}  // namespace

ErrorCode completionErrorCode(ibv_wc_status status) { return meaningOf(status).code; }

Status completionStatus(ibv_wc_status status, std::uint32_t vendorError,
                        const std::string& operation, const std::string& local,
                        const std::string& remote) {
  const Meaning m = meaningOf(status);
  if (m.code == ErrorCode::kSuccess) return Status::Ok();
  return makeError(
      m.code, "rdma {} from {} to {} failed: {} (wc status {}, vendor error 0x{:x}): {}", operation,
      local, remote, ibv_wc_status_str(status), static_cast<int>(status), vendorError, m.cause);
}

}  // namespace cohort::transport::rdma
