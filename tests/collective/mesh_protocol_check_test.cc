// The mesh's invariants on its shared regions (COHORT_PROTOCOL_CHECK, in Debug
// and sanitizer builds): once the node-wide count says every member reached a
// barrier, each member's own count says so too; a posted call's slots still
// hold that call after a rank read them. The members' regions are made here,
// as they would look, and one is set wrong.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "collective/mesh_layout.h"
#include "common/error.h"

namespace cohort::collective {
namespace {

// Members ranked 10, 11, ... with zeroed regions.
struct Members {
  explicit Members(int n)
      : regions(new MeshRegion[static_cast<std::size_t>(n)]()), peers(static_cast<std::size_t>(n)) {
    for (int j = 0; j < n; ++j) {
      const auto k = static_cast<std::size_t>(j);
      peers[k].rank = 10 + j;
      peers[k].localIndex = j;
      peers[k].region = &regions[k];
      views.push_back(&peers[k]);
    }
  }
  MeshRegion& region(int j) { return regions[static_cast<std::size_t>(j)]; }
  std::unique_ptr<MeshRegion[]> regions;
  std::vector<transport::shm::ShmPeer> peers;
  std::vector<const transport::shm::ShmPeer*> views;
};

constexpr const char* kSkip =
    "built without COHORT_PROTOCOL_CHECKS (Debug and sanitizer builds have them)";

TEST(MeshProtocolCheck, MembersAtOrPastTheBarrierOrGonePass) {
  Members m(3);
  m.region(0).arrive = 7;
  m.region(1).arrive = 8;                                          // ran on to its next call
  m.region(2).arrive = std::numeric_limits<std::uint64_t>::max();  // left the group
  checkBarrierReached(m.views, 7, 10);
  SUCCEED();
}

TEST(MeshProtocolCheck, AMemberBehindTheBarrierCountAbortsNamingIt) {
  if (!kProtocolChecks) GTEST_SKIP() << kSkip;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Members m(3);
  m.region(0).arrive = 7;
  m.region(1).arrive = 6;  // the node-wide count reached 21 without its 7th arrival
  m.region(2).arrive = 7;
  EXPECT_DEATH(checkBarrierReached(m.views, 7, 10),
               "protocol invariant .*rank 10 passed barrier 7 of its node, but rank 11 arrived "
               "at barrier 6 only");
}

TEST(MeshProtocolCheck, PostSlotsThatStillHoldTheCallPass) {
  Members m(2);
  m.region(0).post[3].call = 12;
  m.region(1).post[3].call = 12;
  checkPostSlotKept(m.views, 3, 12, 10);
  SUCCEED();
}

TEST(MeshProtocolCheck, APostSlotReusedBeforeItWasReadAbortsNamingIt) {
  if (!kProtocolChecks) GTEST_SKIP() << kSkip;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Members m(2);
  m.region(0).post[3].call = 12;
  m.region(1).post[3].call = 12 + kPostSlots;  // the next call of that slot, too early
  EXPECT_DEATH(checkPostSlotKept(m.views, 3, 12, 10),
               "protocol invariant .*rank 11's post slot 3 holds call 20 while rank 10 read "
               "call 12 there");
}

}  // namespace
}  // namespace cohort::collective
