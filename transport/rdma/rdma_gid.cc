#include "transport/rdma/rdma_gid.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "common/error.h"

namespace cohort::transport::rdma {

namespace {

bool isZero(const Gid& gid) {
  return std::all_of(gid.begin(), gid.end(), [](std::uint8_t b) { return b == 0; });
}

bool isLinkLocal(const Gid& gid) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }

// Lower is better; -1 = unusable.
int rank(const GidEntry& e, const std::uint8_t* preferred) {
  if (isZero(e.gid)) return -1;
  int address;  // 0 bound to the bootstrap interface, 1 IPv4, 2 global IPv6, 3 link-local
  if (isIpv4Mapped(e.gid)) {
    address = preferred && std::memcmp(e.gid.data() + 12, preferred, 4) == 0 ? 0 : 1;
  } else {
    address = isLinkLocal(e.gid) ? 3 : 2;
  }
  switch (e.type) {
    case GidType::kRoceV2:
      return address;
    case GidType::kRoceV1:
      return 10 + address;
    case GidType::kIb:
      return 20 + address;
  }
  return -1;
}

}  // namespace

bool isIpv4Mapped(const Gid& gid) {
  for (int i = 0; i < 10; ++i) {
    if (gid[i] != 0) return false;
  }
  return gid[10] == 0xff && gid[11] == 0xff;
}

std::string gidToString(const Gid& gid) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (inet_ntop(AF_INET6, gid.data(), text, sizeof(text)) == nullptr) return "?";
  return text;
}

const char* gidTypeName(GidType type) {
  switch (type) {
    case GidType::kIb:
      return "IB";
    case GidType::kRoceV1:
      return "RoCE v1";
    case GidType::kRoceV2:
      return "RoCE v2";
  }
  return "?";
}

Status chooseGid(const std::vector<GidEntry>& table, const std::string& preferredIpv4,
                 GidEntry* out) {
  std::uint8_t preferred[4];
  const bool havePreferred = inet_pton(AF_INET, preferredIpv4.c_str(), preferred) == 1;
  const GidEntry* best = nullptr;
  int bestRank = -1;
  for (const GidEntry& e : table) {
    const int r = rank(e, havePreferred ? preferred : nullptr);
    if (r < 0) continue;
    if (!best || r < bestRank || (r == bestRank && e.index < best->index)) {
      best = &e;
      bestRank = r;
    }
  }
  if (!best) {
    return makeError(ErrorCode::kUnavailable,
                     "no usable GID: all {} entries of the table are empty", table.size());
  }
  *out = *best;
  return Status::Ok();
}

}  // namespace cohort::transport::rdma
