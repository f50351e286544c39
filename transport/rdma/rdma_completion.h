// Error completions -> Status. A failed work completion becomes an error that
// names both ends of the queue pair, the operation, ibv_wc_status_str's text and
// the likely cause. Pure apart from ibv_wc_status_str (a table lookup).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "cohort/status.h"

namespace cohort::transport::rdma {

/// The ErrorCode a completion status maps to (kSuccess for IBV_WC_SUCCESS):
/// kRemoteError when the peer failed, vanished or refused us; kConnectionError
/// for a broken or flushed queue pair; kInternal for local protocol bugs (bad
/// length, key or opcode); kSystemError for a device fatal error; kTimeout for a
/// response timeout.
ErrorCode completionErrorCode(ibv_wc_status status);

/// Ok for IBV_WC_SUCCESS, else "rdma <operation> from <local> to <remote>
/// failed: <ibv_wc_status_str> (wc status N, vendor error 0xV): <cause>".
Status completionStatus(ibv_wc_status status, std::uint32_t vendorError,
                        const std::string& operation, const std::string& local,
                        const std::string& remote);

}  // namespace cohort::transport::rdma
