#include "ranktable/ip_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>

namespace cohort::ranktable {

bool parseIp(std::string_view text, IpAddress* out) {
  // inet_pton stops at a NUL: "10.0.0.1\0junk" must not pass.
  if (text.empty() || text.size() > INET6_ADDRSTRLEN || text.find('\0') != text.npos) {
    return false;
  }
  const std::string s(text);
  unsigned char buffer[sizeof(in6_addr)];
  if (inet_pton(AF_INET, s.c_str(), buffer) == 1) {
    out->family = IpFamily::kV4;
    out->bytes.assign(reinterpret_cast<const char*>(buffer), sizeof(in_addr));
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), buffer) == 1) {
    out->family = IpFamily::kV6;
    out->bytes.assign(reinterpret_cast<const char*>(buffer), sizeof(in6_addr));
    return true;
  }
  return false;
}

const char* familyName(IpFamily family) {
  switch (family) {
    case IpFamily::kV4:
      return "IPv4";
    case IpFamily::kV6:
      return "IPv6";
    case IpFamily::kNone:
      return "no address";
  }
  return "no address";
}

bool parseIpv4(std::string_view text, std::uint32_t* out) {
  if (text.empty() || text.size() >= INET_ADDRSTRLEN || text.find('\0') != text.npos) {
    return false;
  }
  const std::string s(text);
  in_addr address{};
  if (inet_pton(AF_INET, s.c_str(), &address) != 1) return false;
  *out = ntohl(address.s_addr);
  return true;
}

std::string formatIpv4(std::uint32_t address) {
  return fmt::format("{}.{}.{}.{}", address >> 24, (address >> 16) & 0xff, (address >> 8) & 0xff,
                     address & 0xff);
}

}  // namespace cohort::ranktable
