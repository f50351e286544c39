// Interface selection as HCCL/NCCL do it (HCCL_SOCKET_IFNAME syntax). Within
// any rule's matches a non-loopback IPv4 address is preferred, then IPv6, then
// loopback, since the address is advertised to other machines.
#include "transport/netif.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/control/whitelist.h"

namespace cohort::transport {

namespace {

struct IfnameSpec {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;

  bool matches(const std::string& name) const {
    bool hit = false;
    for (const auto& n : names) hit = hit || (exact ? name == n : name.rfind(n, 0) == 0);
    return hit != exclude;
  }
};

Status parseIfname(const std::string& text, IfnameSpec* spec) {
  std::string rest = text;
  if (!rest.empty() && rest[0] == '^') spec->exclude = true, rest.erase(0, 1);
  if (!rest.empty() && rest[0] == '=') spec->exact = true, rest.erase(0, 1);
  std::size_t at = 0;
  while (at <= rest.size()) {
    const std::size_t comma = std::min(rest.find(',', at), rest.size());
    std::string name = rest.substr(at, comma - at);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) spec->names.push_back(name);
    at = comma + 1;
  }
  if (spec->names.empty()) {
    return makeError(ErrorCode::kConfigError,
                     "COHORT_SOCKET_IFNAME='{}' names no interface (expected e.g. 'eth,enp', "
                     "'^docker', '=eth0' or '^=eth0')",
                     text);
  }
  return Status::Ok();
}

std::string describe(const std::vector<NetInterface>& list) {
  std::string out;
  for (const auto& i : list) out += (out.empty() ? "" : ", ") + i.name + " " + i.address;
  return out.empty() ? "none" : out;
}

// Non-loopback IPv4, non-loopback IPv6, loopback IPv4, loopback IPv6.
const NetInterface* best(const std::vector<const NetInterface*>& list) {
  for (int rank = 0; rank < 4; ++rank) {
    for (const NetInterface* i : list) {
      if (i->loopback == (rank >= 2) && i->ipv6 == (rank % 2 == 1)) return i;
    }
  }
  return nullptr;
}

bool isLinkLocalV6(const in6_addr& a) {
  return a.s6_addr[0] == 0xfe && (a.s6_addr[1] & 0xc0) == 0x80;
}

}  // namespace

Status listInterfaces(std::vector<NetInterface>* out) {
  ifaddrs* head = nullptr;
  if (getifaddrs(&head) != 0) return systemError(errno, "getifaddrs");
  out->clear();
  for (ifaddrs* p = head; p != nullptr; p = p->ifa_next) {
    if (p->ifa_addr == nullptr || (p->ifa_flags & IFF_UP) == 0) continue;
    const int family = p->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* addr = nullptr;
    if (family == AF_INET) {
      addr = &reinterpret_cast<const sockaddr_in*>(p->ifa_addr)->sin_addr;
    } else {
      const in6_addr& a6 = reinterpret_cast<const sockaddr_in6*>(p->ifa_addr)->sin6_addr;
      if (isLinkLocalV6(a6)) continue;  // unusable without a scope id
      addr = &a6;
    }
    if (inet_ntop(family, addr, text, sizeof(text)) == nullptr) continue;
    out->push_back({p->ifa_name, text, family == AF_INET6, (p->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(head);
  return Status::Ok();
}

Status chooseInterface(const std::vector<NetInterface>& candidates, const std::string& ifIp,
                       const std::string& ifname, NetInterface* out) {
  if (!ifIp.empty()) {
    const std::string wanted = control::canonicalAddress(ifIp);
    if (wanted.empty()) {
      return makeError(ErrorCode::kConfigError, "COHORT_IF_IP={} is not an IP address", ifIp);
    }
    for (const auto& c : candidates) {
      if (control::canonicalAddress(c.address) == wanted) {
        *out = c;
        return Status::Ok();
      }
    }
    return makeError(ErrorCode::kConfigError,
                     "COHORT_IF_IP={} is not an address of any interface of this host "
                     "(interfaces: {})",
                     ifIp, describe(candidates));
  }
  IfnameSpec spec;
  if (!ifname.empty()) COHORT_RETURN_IF_ERROR(parseIfname(ifname, &spec));
  std::vector<const NetInterface*> matches;
  for (const auto& c : candidates) {
    if (ifname.empty() || spec.matches(c.name)) matches.push_back(&c);
  }
  const NetInterface* chosen = best(matches);
  if (chosen != nullptr) {
    *out = *chosen;
    return Status::Ok();
  }
  if (!ifname.empty()) {
    return makeError(ErrorCode::kConfigError,
                     "COHORT_SOCKET_IFNAME={} matches no interface (interfaces: {})", ifname,
                     describe(candidates));
  }
  return makeError(ErrorCode::kUnavailable, "no network interface is up with an address");
}

Status selectInterface(NetInterface* out) {
  const Config& config = Config::global();
  COHORT_RETURN_IF_ERROR(config.status());
  std::vector<NetInterface> all;
  COHORT_RETURN_IF_ERROR(listInterfaces(&all));
  COHORT_RETURN_IF_ERROR(chooseInterface(all, config.ifIp, config.socketIfname, out));
  COHORT_LOG(kInfo, "bootstrap", "interface {} {} chosen ({})", out->name, out->address,
             !config.ifIp.empty()           ? "COHORT_IF_IP"
             : !config.socketIfname.empty() ? "COHORT_SOCKET_IFNAME=" + config.socketIfname
                                            : std::string("first usable"));
  return Status::Ok();
}

}  // namespace cohort::transport
