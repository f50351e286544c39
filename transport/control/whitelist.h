// COHORT_WHITELIST_FILE (like HCCL_WHITELIST_FILE): the host addresses allowed
// to join. One IP address per line; '#' starts a comment; blank lines are
// ignored. Addresses are compared in canonical form, and an IPv4-mapped IPv6
// peer ("::ffff:10.0.0.2") matches its IPv4 entry.
#pragma once

#include <set>
#include <string>

#include "cohort/status.h"

namespace cohort::transport::control {

/// Immutable once loaded; safe to share between threads for reading.
class Whitelist {
 public:
  /// An empty whitelist allows everyone (no file configured).
  Whitelist() = default;
  /// Reads `path`; kConfigError naming the file (and line) when it cannot be read
  /// or holds something other than addresses, or when it lists no address.
  static Status load(const std::string& path, Whitelist* out);
  /// Parses file text; `name` is used in errors.
  static Status parse(const std::string& text, const std::string& name, Whitelist* out);

  bool enabled() const { return !addresses_.empty(); }
  /// Whether `address` (any textual IP form) may connect; true when not enabled.
  bool allows(const std::string& address) const;
  const std::string& source() const { return source_; }

 private:
  std::set<std::string> addresses_;  // canonical text
  std::string source_;
};

/// Canonical text of an IP address (IPv4-mapped IPv6 as IPv4); empty if invalid.
std::string canonicalAddress(const std::string& address);

}  // namespace cohort::transport::control
