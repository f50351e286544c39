#include <cstdio>
#include <cstring>

#include "common/error.h"

namespace cohort {

const char* errorString(ErrorCode code) {
  switch (code) {
    case ErrorCode::kSuccess: return "success";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotInitialized: return "not initialized";
    case ErrorCode::kInvalidDevice: return "invalid device";
    case ErrorCode::kOutOfMemory: return "out of memory";
    case ErrorCode::kInvalidPointer: return "invalid pointer";
    case ErrorCode::kDoubleFree: return "double free";
    case ErrorCode::kInvalidMemcpyKind: return "invalid memcpy kind";
    case ErrorCode::kSizeOverflow: return "size overflow";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kTaskFailed: return "task failed";
    case ErrorCode::kInvalidHandle: return "invalid handle";
    case ErrorCode::kNotReady: return "not ready";
    case ErrorCode::kVersionMismatch: return "version mismatch";
    case ErrorCode::kSystemError: return "system error";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kAborted: return "aborted";
    case ErrorCode::kRemoteError: return "remote error";
    case ErrorCode::kInvalidUsage: return "invalid usage";
    case ErrorCode::kConfigError: return "configuration error";
    case ErrorCode::kParseError: return "parse error";
    case ErrorCode::kValidationError: return "validation error";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kConnectionError: return "connection error";
    case ErrorCode::kMismatch: return "mismatched operation";
    case ErrorCode::kNotSupported: return "not supported";
    case ErrorCode::kCaptured: return "not allowed during a stream capture";
    case ErrorCode::kKernelFault: return "kernel fault";
  }
  return "unknown error";
}

std::string Status::toString() const {
  if (ok()) return "success";
  if (message_.empty()) return errorString(code_);
  return std::string(errorString(code_)) + ": " + message_;
}

namespace {
thread_local Status tLastError;
}  // namespace

const Status& lastError() { return tLastError; }

Status takeLastError() {
  Status s = std::move(tLastError);
  tLastError = Status();
  return s;
}

namespace detail {
Status recordFailure(Status status) {
  tLastError = status;
  return status;
}
}  // namespace detail

Status systemError(int err, const std::string& what) {
  return makeError(ErrorCode::kSystemError, "{}: {} (errno {})", what, std::strerror(err), err);
}

namespace detail {
void checkFailed(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "cohort: %s [%s:%d]\n", what.c_str(), file, line);
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

}  // namespace cohort
