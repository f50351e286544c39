// GID choice for RoCE: which entry of a port's GID table a queue pair uses as
// its source address. A pure function over a table, so it is tested without a
// device: RoCE v2 beats v1 beats InfiniBand; within RoCE, an IPv4-mapped GID
// (::ffff:a.b.c.d) beats a global IPv6 one, which beats link-local (fe80::/10);
// a GID on the interface the bootstrap uses beats every other; ties go to the
// lowest index. All-zero entries are empty slots and never chosen.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cohort/status.h"

namespace cohort::transport::rdma {

using Gid = std::array<std::uint8_t, 16>;

enum class GidType { kIb, kRoceV1, kRoceV2 };

struct GidEntry {
  int index = -1;
  Gid gid{};
  GidType type = GidType::kIb;
};

/// "::ffff:10.0.0.2", "fe80::1" (inet_ntop).
std::string gidToString(const Gid& gid);
const char* gidTypeName(GidType type);
bool isIpv4Mapped(const Gid& gid);

/// Picks the best entry of `table` (see the file comment). `preferredIpv4`, when
/// a dotted IPv4 address, promotes the GID mapped from it. kUnavailable naming
/// the table size when every entry is empty.
Status chooseGid(const std::vector<GidEntry>& table, const std::string& preferredIpv4,
                 GidEntry* out);

}  // namespace cohort::transport::rdma
