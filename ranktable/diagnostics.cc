// Diagnostics: the list of problems of one table and the Status that sums it up.
#include <fmt/format.h>

#include "cohort/ranktable.h"

namespace cohort::ranktable {

// clang-format off
const char* ruleName(Rule rule) {
  switch (rule) {
    case Rule::kUnreadable: return "unreadable";
    case Rule::kSyntax: return "syntax";
    case Rule::kMissingKey: return "missing-key";
    case Rule::kWrongType: return "wrong-type";
    case Rule::kNumberValue: return "number-value";
    case Rule::kUnknownKey: return "unknown-key";
    case Rule::kIgnoredKey: return "ignored-key";
    case Rule::kUnknownVersion: return "unknown-version";
    case Rule::kBadStatus: return "bad-status";
    case Rule::kStatusInitializing: return "status-initializing";
    case Rule::kBadCount: return "bad-count";
    case Rule::kCountMismatch: return "count-mismatch";
    case Rule::kEmptyServerList: return "empty-server-list";
    case Rule::kEmptyDeviceList: return "empty-device-list";
    case Rule::kEmptyServerId: return "empty-server-id";
    case Rule::kServerIdTooLong: return "server-id-too-long";
    case Rule::kBadCharacters: return "bad-characters";
    case Rule::kDuplicateServerId: return "duplicate-server-id";
    case Rule::kDuplicatePodName: return "duplicate-pod-name";
    case Rule::kBadDeviceId: return "bad-device-id";
    case Rule::kDuplicateDeviceId: return "duplicate-device-id";
    case Rule::kBadRankId: return "bad-rank-id";
    case Rule::kDuplicateRankId: return "duplicate-rank-id";
    case Rule::kRankIdOutOfRange: return "rank-id-out-of-range";
    case Rule::kRanksNotContiguous: return "ranks-not-contiguous";
    case Rule::kBadIp: return "bad-ip";
    case Rule::kDuplicateIp: return "duplicate-ip";
    case Rule::kMixedIpFamily: return "mixed-ip-family";
    case Rule::kBadPort: return "bad-port";
    case Rule::kDuplicatePort: return "duplicate-port";
    case Rule::kBadTransport: return "bad-transport";
    case Rule::kEmptySuperPodId: return "empty-super-pod-id";
    case Rule::kDuplicateSuperPodId: return "duplicate-super-pod-id";
    case Rule::kUnknownSuperPodServer: return "unknown-super-pod-server";
    case Rule::kDuplicateSuperPodServer: return "duplicate-super-pod-server";
    case Rule::kSuperPodNotContiguous: return "super-pod-not-contiguous";
    case Rule::kBadSuperDeviceId: return "bad-super-device-id";
    case Rule::kDuplicateSuperDeviceId: return "duplicate-super-device-id";
    case Rule::kUnevenDevices: return "uneven-devices";
    case Rule::kBadDevicesPerServer: return "bad-devices-per-server";
    case Rule::kRankNotInTable: return "rank-not-in-table";
  }
  return "unknown-rule";
}
// clang-format on

std::string Location::toString() const {
  if (line > 0) {
    if (pointer.empty()) return fmt::format("{}:{}", line, column);
    return fmt::format("{}:{} {}", line, column, pointer);
  }
  return pointer.empty() ? "(document)" : pointer;
}

std::string Diagnostic::toString() const {
  return fmt::format("{}{}: {}: found {}, expected {}",
                     severity == Severity::kWarning ? "warning: " : "", location.toString(),
                     ruleName(rule), found, expected);
}

void Diagnostics::add(Severity severity, Rule rule, Location location, std::string found,
                      std::string expected) {
  items_.push_back(
      Diagnostic{severity, rule, std::move(location), std::move(found), std::move(expected)});
}

std::vector<Diagnostic> Diagnostics::errors() const {
  std::vector<Diagnostic> out;
  for (const auto& d : items_) {
    if (d.severity == Severity::kError) out.push_back(d);
  }
  return out;
}

std::vector<Diagnostic> Diagnostics::warnings() const {
  std::vector<Diagnostic> out;
  for (const auto& d : items_) {
    if (d.severity == Severity::kWarning) out.push_back(d);
  }
  return out;
}

bool Diagnostics::hasErrors() const {
  for (const auto& d : items_) {
    if (d.severity == Severity::kError) return true;
  }
  return false;
}

const Diagnostic* Diagnostics::findError(Rule rule) const {
  for (const auto& d : items_) {
    if (d.severity == Severity::kError && d.rule == rule) return &d;
  }
  return nullptr;
}

Status Diagnostics::status(const std::string& source) const {
  const std::vector<Diagnostic> list = errors();
  if (list.empty()) return Status::Ok();
  ErrorCode code = ErrorCode::kValidationError;
  if (findError(Rule::kUnreadable) != nullptr) {
    code = ErrorCode::kInvalidArgument;
  } else if (findError(Rule::kSyntax) != nullptr) {
    code = ErrorCode::kParseError;
  } else if (findError(Rule::kStatusInitializing) != nullptr) {
    code = ErrorCode::kNotReady;
  }
  std::string message = fmt::format("rank table {}: {} {}", source, list.size(),
                                    list.size() == 1 ? "error" : "errors");
  for (const auto& d : list) message += "\n  " + d.toString();
  return Status(code, std::move(message));
}

bool parseProfile(std::string_view name, Profile* profile) {
  if (name == "default") {
    *profile = Profile::kDefault;
  } else if (name == "910") {
    *profile = Profile::k910;
  } else {
    return false;
  }
  return true;
}

}  // namespace cohort::ranktable
