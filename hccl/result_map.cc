// The one table from cohort::ErrorCode to HcclResult. Choices, and why:
//
//   Cohort code        HcclResult           why
//   kSuccess           HCCL_SUCCESS
//   kInvalidArgument   HCCL_E_PARA          a value out of range
//   kNotInitialized    HCCL_E_RUNTIME       only the runtime reports it (used before set-up)
//   kInvalidDevice     HCCL_E_RUNTIME       HCCL's own device query is a runtime call
//   kOutOfMemory       HCCL_E_OOM           device memory exhausted
//   kInvalidPointer    HCCL_E_PARA          a buffer that is not device memory is a parameter
//   kDoubleFree        HCCL_E_MEMORY        a freed buffer: "memory error"
//   kInvalidMemcpyKind HCCL_E_RUNTIME       a copy the runtime refused
//   kSizeOverflow      HCCL_E_PARA          a buffer smaller than count elements
//   kTimeout           HCCL_E_TIMEOUT       link setup (HCCL_CONNECT_TIMEOUT) or execution
//   kTaskFailed        HCCL_E_RUNTIME       a task on the stream failed
//   kInvalidHandle     HCCL_E_RUNTIME       a destroyed stream: the runtime refused it (a
//                                           destroyed communicator is HCCL_E_PARA, checked
//                                           by this layer before anything runs)
//   kNotReady          HCCL_E_AGAIN         work still pending: try again
//   kVersionMismatch   HCCL_E_PARA          ranks (or a root info) of another Cohort version:
//                                           inconsistent arguments between ranks, as EI0005
//   kSystemError       HCCL_E_SYSCALL       an OS call failed
//   kInternal          HCCL_E_INTERNAL
//   kAborted           HCCL_E_INTERNAL      HCCL has no "aborted" number. The C API never
//                                           aborts; only C++ code holding the same
//                                           communicator can. HCCL_E_SUSPENDING would tell
//                                           the caller HcclCommResume helps, which it cannot.
//   kRemoteError       HCCL_E_REMOTE        a peer failed (HCCL: error CQE from the peer)
//   kInvalidUsage      HCCL_E_PARA          a call out of order (HcclGroupEnd without Start)
//   kConfigError       HCCL_E_PARA          an invalid environment variable (EI0001)
//   kParseError        HCCL_E_PARA          a rank table that does not parse (EI0004)
//   kValidationError   HCCL_E_PARA          a rank table breaking a rule (EI0014)
//   kUnavailable       HCCL_E_UNAVAIL       no transport, interface or port
//   kConnectionError   HCCL_E_TCP_CONNECT   connect or handshake failed
//   kMismatch          HCCL_E_PARA          ranks called with different arguments (EI0005)
//   kNotSupported      HCCL_E_NOT_SUPPORT
//   kCaptured          HCCL_E_NOT_SUPPORT   a call a captured stream cannot record
//   kKernelFault       HCCL_E_RUNTIME       a kernel on the stream trapped (a runtime failure)
#include "hccl/result_map.h"

namespace cohort::hccl {

HcclResult toHcclResult(ErrorCode code) {
  switch (code) {
    case ErrorCode::kSuccess:
      return HCCL_SUCCESS;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidPointer:
    case ErrorCode::kSizeOverflow:
    case ErrorCode::kVersionMismatch:
    case ErrorCode::kInvalidUsage:
    case ErrorCode::kConfigError:
    case ErrorCode::kParseError:
    case ErrorCode::kValidationError:
    case ErrorCode::kMismatch:
      return HCCL_E_PARA;
    case ErrorCode::kNotInitialized:
    case ErrorCode::kInvalidDevice:
    case ErrorCode::kInvalidMemcpyKind:
    case ErrorCode::kTaskFailed:
    case ErrorCode::kInvalidHandle:
      return HCCL_E_RUNTIME;
    case ErrorCode::kOutOfMemory:
      return HCCL_E_OOM;
    case ErrorCode::kDoubleFree:
      return HCCL_E_MEMORY;
    case ErrorCode::kTimeout:
      return HCCL_E_TIMEOUT;
    case ErrorCode::kNotReady:
      return HCCL_E_AGAIN;
    case ErrorCode::kSystemError:
      return HCCL_E_SYSCALL;
    case ErrorCode::kInternal:
    case ErrorCode::kAborted:
      return HCCL_E_INTERNAL;
    case ErrorCode::kRemoteError:
      return HCCL_E_REMOTE;
    case ErrorCode::kUnavailable:
      return HCCL_E_UNAVAIL;
    case ErrorCode::kConnectionError:
      return HCCL_E_TCP_CONNECT;
    case ErrorCode::kNotSupported:
    case ErrorCode::kCaptured:
      return HCCL_E_NOT_SUPPORT;
    case ErrorCode::kKernelFault:
      return HCCL_E_RUNTIME;
  }
  return HCCL_E_INTERNAL;
}

namespace {

struct ResultText {
  HcclResult result;
  const char* name;
  const char* text;
};

// HCCL's own texts (HcclGetErrorString), in HcclResult order.
constexpr ResultText kResults[] = {
    {HCCL_SUCCESS, "HCCL_SUCCESS", "no error"},
    {HCCL_E_PARA, "HCCL_E_PARA", "parameter error"},
    {HCCL_E_PTR, "HCCL_E_PTR", "empty pointer"},
    {HCCL_E_MEMORY, "HCCL_E_MEMORY", "memory error"},
    {HCCL_E_INTERNAL, "HCCL_E_INTERNAL", "internal error"},
    {HCCL_E_NOT_SUPPORT, "HCCL_E_NOT_SUPPORT", "not support feature"},
    {HCCL_E_NOT_FOUND, "HCCL_E_NOT_FOUND", "not found specific resource"},
    {HCCL_E_UNAVAIL, "HCCL_E_UNAVAIL", "resource unavailable"},
    {HCCL_E_SYSCALL, "HCCL_E_SYSCALL", "call system interface error"},
    {HCCL_E_TIMEOUT, "HCCL_E_TIMEOUT", "timeout"},
    {HCCL_E_OPEN_FILE_FAILURE, "HCCL_E_OPEN_FILE_FAILURE", "open file fail"},
    {HCCL_E_TCP_CONNECT, "HCCL_E_TCP_CONNECT", "tcp connect fail"},
    {HCCL_E_ROCE_CONNECT, "HCCL_E_ROCE_CONNECT", "roce connect fail"},
    {HCCL_E_TCP_TRANSFER, "HCCL_E_TCP_TRANSFER", "tcp transfer fail"},
    {HCCL_E_ROCE_TRANSFER, "HCCL_E_ROCE_TRANSFER", "roce transfer fail"},
    {HCCL_E_RUNTIME, "HCCL_E_RUNTIME", "call runtime api fail"},
    {HCCL_E_DRV, "HCCL_E_DRV", "call driver api fail"},
    {HCCL_E_PROFILING, "HCCL_E_PROFILING", "call profiling api fail"},
    {HCCL_E_CCE, "HCCL_E_CCE", "call cce api fail"},
    {HCCL_E_NETWORK, "HCCL_E_NETWORK", "call network api fail"},
    {HCCL_E_AGAIN, "HCCL_E_AGAIN", "try again"},
    {HCCL_E_REMOTE, "HCCL_E_REMOTE", "error cqe"},
    {HCCL_E_SUSPENDING, "HCCL_E_SUSPENDING", "error communicator suspending"},
    {HCCL_E_OPRETRY_FAIL, "HCCL_E_OPRETRY_FAIL", "retry constraint"},
    {HCCL_E_OOM, "HCCL_E_OOM", "out of memory"},
    // HCCL documents no text for this one (and Cohort never returns it).
    {HCCL_E_IN_STATUS, "HCCL_E_IN_STATUS", "unknown error"},
};

const ResultText* find(HcclResult result) {
  for (const auto& r : kResults) {
    if (r.result == result) return &r;
  }
  return nullptr;
}

}  // namespace

const char* resultString(HcclResult result) {
  const ResultText* r = find(result);
  return r != nullptr ? r->text : "unknown error";
}

const char* resultName(HcclResult result) {
  const ResultText* r = find(result);
  return r != nullptr ? r->name : "HCCL_E_RESERVED";
}

}  // namespace cohort::hccl
