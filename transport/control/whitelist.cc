#include "transport/control/whitelist.h"

#include <boost/asio/ip/address.hpp>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace cohort::transport::control {

namespace ip = boost::asio::ip;

std::string canonicalAddress(const std::string& address) {
  boost::system::error_code ec;
  ip::address a = ip::make_address(address, ec);
  if (ec) return std::string();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = ip::make_address_v4(ip::v4_mapped, a.to_v6());
  }
  return a.to_string();
}

Status Whitelist::load(const std::string& path, Whitelist* out) {
  std::ifstream in(path);
  if (!in) {
    return makeError(ErrorCode::kConfigError, "COHORT_WHITELIST_FILE={}: cannot read the file",
                     path);
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, out);
}

Status Whitelist::parse(const std::string& text, const std::string& name, Whitelist* out) {
  Whitelist w;
  w.source_ = name;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string entry = line.substr(first, last - first + 1);
    const std::string canonical = canonicalAddress(entry);
    if (canonical.empty()) {
      return makeError(ErrorCode::kConfigError,
                       "COHORT_WHITELIST_FILE={}:{}: '{}' is not an IP address", name, number,
                       entry);
    }
    w.addresses_.insert(canonical);
  }
  if (w.addresses_.empty()) {
    return makeError(ErrorCode::kConfigError,
                     "COHORT_WHITELIST_FILE={}: lists no address (it would refuse everyone)", name);
  }
  *out = std::move(w);
  return Status::Ok();
}

bool Whitelist::allows(const std::string& address) const {
  if (!enabled()) return true;
  return addresses_.count(canonicalAddress(address)) != 0;
}

}  // namespace cohort::transport::control
