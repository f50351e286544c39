// IP addresses as rank tables write them: IPv4 dotted quads or IPv6 text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cohort::ranktable {

enum class IpFamily { kNone, kV4, kV6 };

struct IpAddress {
  IpFamily family = IpFamily::kNone;
  std::string bytes;  ///< network order; equal addresses have equal bytes
};

/// Parses strict IPv4 ("10.0.0.1", no leading zeros) or IPv6 (no zone).
bool parseIp(std::string_view text, IpAddress* out);

/// "IPv4" / "IPv6".
const char* familyName(IpFamily family);

/// IPv4 as a host-order integer and back (for generating tables).
bool parseIpv4(std::string_view text, std::uint32_t* out);
std::string formatIpv4(std::uint32_t address);

}  // namespace cohort::ranktable
