// The wrapper every HCCL entry point runs in: the body, then its result turned
// into an HcclResult, logged with HCCL's errNo and recorded as Cohort's
// lastError() when it failed. Also the two argument errors every entry point
// reports the same way (null pointer, invalid value in EI0003's words).
#pragma once

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "cohort/status.h"
#include "hccl/hccl_types.h"

namespace cohort::hccl {

/// What an entry point's body returns: a Status mapped through the error table,
/// or a result of this layer's own together with the Status explaining it.
struct Outcome {
  Outcome(Status s) : status(std::move(s)) {}  // NOLINT: implicit on purpose
  Outcome(HcclResult r, Status s) : code(static_cast<int>(r)), status(std::move(s)) {}
  bool ok() const { return code < 0 && status.ok(); }

  int code = -1;  ///< -1: use the table
  Status status;
};

/// HCCL_E_PTR: "<function>: parameter <name> is a null pointer".
Outcome nullPointer(const char* function, const char* parameter);

/// HCCL_E_PARA (or `result`, where HCCL answers another code) with HCCL's EI0003 text:
/// "EI0003: Failed to verify parameters of operator <function>. Value <value> for
/// parameter <parameter> is invalid. The expected value is <expected>."
Outcome invalidParameter(const char* function, const std::string& value, const char* parameter,
                         const std::string& expected, HcclResult result = HCCL_E_PARA);

/// Success for a call that moves nothing, before any other check, as HCCL answers a
/// count of 0 (with a warning, as HCCL logs one).
Outcome nothingToDo(const char* function, const char* what);

/// HCCL_E_PARA when an environment variable is invalid (its EI0001 message).
Outcome requireValidEnvironment();

/// Turns an outcome into the result to return; a failure is logged (subsystem
/// "hccl", with errNo[0x00000000050000NN] as HCCL prints it) and recorded.
HcclResult finish(const char* function, const Outcome& outcome);

template <typename Body>
HcclResult apiCall(const char* function, Body&& body) {
  try {
    return finish(function, body());
  } catch (const std::bad_alloc&) {
    return finish(function,
                  Outcome(HCCL_E_MEMORY, Status(ErrorCode::kOutOfMemory, "host memory exhausted")));
  } catch (const std::exception& e) {
    return finish(function, Outcome(HCCL_E_INTERNAL, Status(ErrorCode::kInternal, e.what())));
  }
}

}  // namespace cohort::hccl

#define HCCL_RETURN_IF_FAILED(expr)                 \
  do {                                              \
    ::cohort::hccl::Outcome hccl_outcome_ = (expr); \
    if (!hccl_outcome_.ok()) return hccl_outcome_;  \
  } while (0)
