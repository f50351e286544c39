// GID choice from a table: RoCE v2 and IPv4-mapped first, the bootstrap
// interface's address above all, empty slots never.
#include "transport/rdma/rdma_gid.h"

#include "test_util.h"

namespace cohort::transport::rdma {
namespace {

Gid ipv4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}
Gid linkLocal() { return Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0, 0, 1}; }
Gid globalV6() { return Gid{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}; }

int chosenIndex(const std::vector<GidEntry>& table, const std::string& preferred = "") {
  GidEntry e;
  const Status s = chooseGid(table, preferred, &e);
  return s.ok() ? e.index : -1;
}

// A typical mlx5 RoCE port: link-local v1/v2, then IPv4 v1/v2.
std::vector<GidEntry> typicalPort() {
  return {{0, linkLocal(), GidType::kRoceV1},
          {1, linkLocal(), GidType::kRoceV2},
          {2, ipv4(10, 0, 0, 1), GidType::kRoceV1},
          {3, ipv4(10, 0, 0, 1), GidType::kRoceV2}};
}

TEST(RdmaGidTest, PrefersRoceV2Ipv4Mapped) {
  EXPECT_EQ(chosenIndex(typicalPort()), 3);
  GidEntry e;
  ASSERT_OK(chooseGid(typicalPort(), "", &e));
  EXPECT_EQ(e.type, GidType::kRoceV2);
  EXPECT_EQ(e.gid, ipv4(10, 0, 0, 1));
  EXPECT_EQ(gidToString(e.gid), "::ffff:10.0.0.1");
}

TEST(RdmaGidTest, PrefersTheBootstrapInterfaceAddress) {
  auto table = typicalPort();
  table.push_back({4, ipv4(192, 168, 1, 5), GidType::kRoceV2});
  EXPECT_EQ(chosenIndex(table), 3);  // lowest index among equals
  EXPECT_EQ(chosenIndex(table, "192.168.1.5"), 4);
  EXPECT_EQ(chosenIndex(table, "10.0.0.1"), 3);
  EXPECT_EQ(chosenIndex(table, "172.16.0.9"), 3);  // not on this port: no effect
  EXPECT_EQ(chosenIndex(table, "not an address"), 3);
}

TEST(RdmaGidTest, RoceV2BeatsV1EvenWithoutIpv4) {
  std::vector<GidEntry> table = {{0, ipv4(10, 0, 0, 1), GidType::kRoceV1},
                                 {1, linkLocal(), GidType::kRoceV2}};
  EXPECT_EQ(chosenIndex(table), 1);
}

TEST(RdmaGidTest, GlobalIpv6BeatsLinkLocal) {
  std::vector<GidEntry> table = {{0, linkLocal(), GidType::kRoceV2},
                                 {5, globalV6(), GidType::kRoceV2}};
  EXPECT_EQ(chosenIndex(table), 5);
  EXPECT_EQ(gidToString(globalV6()), "2001:db8::7");
}

TEST(RdmaGidTest, FallsBackToV1ThenInfiniBand) {
  EXPECT_EQ(chosenIndex({{0, linkLocal(), GidType::kIb}, {1, linkLocal(), GidType::kRoceV1}}), 1);
  EXPECT_EQ(chosenIndex({{7, linkLocal(), GidType::kIb}}), 7);
}

TEST(RdmaGidTest, EmptyEntriesAreNeverChosen) {
  std::vector<GidEntry> table = {{0, Gid{}, GidType::kRoceV2}, {1, linkLocal(), GidType::kRoceV1}};
  EXPECT_EQ(chosenIndex(table), 1);
  GidEntry e;
  EXPECT_ERROR(chooseGid({{0, Gid{}, GidType::kRoceV2}, {1, Gid{}, GidType::kRoceV2}}, "", &e),
               kUnavailable, "all 2 entries of the table are empty");
  EXPECT_ERROR(chooseGid({}, "", &e), kUnavailable, "all 0 entries");
}

TEST(RdmaGidTest, OrderOfTheTableDoesNotMatter) {
  auto table = typicalPort();
  std::reverse(table.begin(), table.end());
  EXPECT_EQ(chosenIndex(table), 3);
}

TEST(RdmaGidTest, Ipv4MappedDetection) {
  EXPECT_TRUE(isIpv4Mapped(ipv4(1, 2, 3, 4)));
  EXPECT_FALSE(isIpv4Mapped(linkLocal()));
  EXPECT_FALSE(isIpv4Mapped(Gid{}));
  EXPECT_STREQ(gidTypeName(GidType::kRoceV2), "RoCE v2");
}

}  // namespace
}  // namespace cohort::transport::rdma
