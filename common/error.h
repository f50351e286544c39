// Helpers to build and propagate cohort::Status, and to abort on programmer bugs
// with both values and [file:line] (as Gloo's ENFORCE_EQ does).
#pragma once

#include <fmt/format.h>

#include <cstdlib>
#include <utility>

#include "cohort/status.h"

namespace cohort {

/// Builds an error Status with a formatted message.
template <typename... Args>
Status makeError(ErrorCode code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

/// Builds a kSystemError Status from errno: "<what>: <strerror> (errno N)".
Status systemError(int err, const std::string& what);

namespace detail {
Status recordFailure(Status status);
}  // namespace detail

/// Stores a failing status as this thread's last error; returns it unchanged.
/// Every public entry point passes its result through this (inline: a call
/// that succeeds costs a test).
inline Status recordError(Status status) {
  return status.ok() ? status : detail::recordFailure(std::move(status));
}

namespace detail {
[[noreturn]] void checkFailed(const char* file, int line, const std::string& what);
}  // namespace detail

}  // namespace cohort

#define COHORT_RETURN_IF_ERROR(expr)               \
  do {                                             \
    ::cohort::Status cohort_status_ = (expr);      \
    if (!cohort_status_.ok()) return cohort_status_; \
  } while (0)

// Programmer bugs: abort with the condition and [file:line].
#define COHORT_CHECK(cond)                                                       \
  do {                                                                           \
    if (!(cond)) ::cohort::detail::checkFailed(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define COHORT_CHECK_OP(a, op, b)                                                 \
  do {                                                                            \
    const auto& cohort_a_ = (a);                                                  \
    const auto& cohort_b_ = (b);                                                  \
    if (!(cohort_a_ op cohort_b_))                                                \
      ::cohort::detail::checkFailed(                                              \
          __FILE__, __LINE__,                                                     \
          fmt::format("CHECK({} " #op " {}): {} vs {}", #a, #b, cohort_a_, cohort_b_)); \
  } while (0)

// An invariant of a protocol that ranks share through memory (the shm transport's
// message rings, the mesh's post slots), checked where its values are read anyway,
// in builds with COHORT_PROTOCOL_CHECKS (Debug and sanitizer builds; nothing
// otherwise). A broken one is a bug of Cohort's, not a peer's error: it aborts,
// naming the invariant and, in the fmt arguments, the ranks and values.
#ifdef COHORT_PROTOCOL_CHECKS
namespace cohort {
inline constexpr bool kProtocolChecks = true;
}  // namespace cohort
#define COHORT_PROTOCOL_CHECK(cond, ...)                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      ::cohort::detail::checkFailed(                                                          \
          __FILE__, __LINE__, "protocol invariant (" #cond "): " + fmt::format(__VA_ARGS__)); \
    }                                                                                         \
  } while (0)
#else
namespace cohort {
inline constexpr bool kProtocolChecks = false;
}  // namespace cohort
#define COHORT_PROTOCOL_CHECK(cond, ...) \
  do {                                   \
    if (false) (void)(cond);             \
  } while (0)
#endif

#define COHORT_CHECK_EQ(a, b) COHORT_CHECK_OP(a, ==, b)
#define COHORT_CHECK_LE(a, b) COHORT_CHECK_OP(a, <=, b)
#define COHORT_CHECK_LT(a, b) COHORT_CHECK_OP(a, <, b)
