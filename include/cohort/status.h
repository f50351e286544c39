// Cohort's one error type: a stable numeric code plus a message that says what
// went wrong and where. Every layer returns it the same way; the HCCL/ACL C API
// maps the codes onto their numbers.
#pragma once

#include <string>
#include <utility>

namespace cohort {

/// Stable error numbers: never renumber, only append.
enum class ErrorCode : int {
  kSuccess = 0,
  kInvalidArgument = 1,   ///< a parameter is out of range or null
  kNotInitialized = 2,    ///< called before init / after finalize
  kInvalidDevice = 3,     ///< device id not visible or not set
  kOutOfMemory = 4,       ///< device capacity exhausted
  kInvalidPointer = 5,    ///< pointer not owned by the runtime (never allocated)
  kDoubleFree = 6,        ///< pointer already freed
  kInvalidMemcpyKind = 7, ///< memcpy kind contradicts the pointers
  kSizeOverflow = 8,      ///< size exceeds destMax or the allocation
  kTimeout = 9,           ///< a wait ran out of time
  kTaskFailed = 10,       ///< a stream task failed (sticky on the stream)
  kInvalidHandle = 11,    ///< stream/event/communicator handle invalid or destroyed
  kNotReady = 12,         ///< query: work still pending
  kVersionMismatch = 13,  ///< program/library or rank/rank versions differ
  kSystemError = 14,      ///< an OS call failed (errno in the message)
  kInternal = 15,         ///< a bug in Cohort
  kAborted = 16,          ///< the operation was aborted on this rank
  kRemoteError = 17,      ///< a peer failed or died
  kInvalidUsage = 18,     ///< call order or state wrong (e.g. event never recorded)
  kConfigError = 19,      ///< a COHORT_* (or HCCL_*) variable has an invalid value
  kParseError = 20,       ///< a file could not be parsed
  kValidationError = 21,  ///< a file parsed but breaks a rule
  kUnavailable = 22,      ///< a resource (transport, device, port) is not available
  kConnectionError = 23,  ///< connect/handshake/transfer failed
  kMismatch = 24,         ///< ranks called mismatched operations
  kNotSupported = 25,     ///< feature not supported here
  kCaptured = 26,         ///< not allowed while a stream captures, or the capture broke
  kKernelFault = 27,      ///< a device kernel trapped or overran its core's local memory
};

/// The highest code: a number read from a peer or a file above it is not a code.
constexpr ErrorCode kLastErrorCode = ErrorCode::kKernelFault;

/// Short fixed text for a code, e.g. "out of memory".
const char* errorString(ErrorCode code);

/// The result of an operation: ok, or a code with a message.
/// Cheap to copy when ok (empty message). Not thread-safe to mutate; safe to share
/// copies between threads.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kSuccess; }
  explicit operator bool() const { return ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "out of memory: device 2: 1.0 GiB requested, 0.5 GiB free".
  std::string toString() const;

 private:
  ErrorCode code_ = ErrorCode::kSuccess;
  std::string message_;
};

/// The last error returned to this thread by any public Cohort call (cleared by
/// nothing but the next failing call; like cudaPeekAtLastError).
const Status& lastError();
/// Returns the last error and resets it to ok (like aclrtGetLastError).
Status takeLastError();

}  // namespace cohort
