// The shm transport's primitives for direct algorithms: every local peer's shared
// region mapped here (zero-filled, the size every rank asked for), and the one
// liveness check (process gone, departure reason).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>

#include "conformance_util.h"
#include "transport/shm/shm_transport.h"

namespace cohort::transport::testing {
namespace {

constexpr std::size_t kRegion = 3 * 4096 + 64;  // more than a page, not a whole number of them

struct Pair {
  End ends[2];
  Status status[2];
  shm::ShmTransport* transport(int r) {
    return static_cast<shm::ShmTransport*>(ends[r].transport.get());
  }
};

void connectPair(Pair* p, std::size_t region0, std::size_t region1) {
  auto store = std::make_shared<MemoryStore>();
  std::thread t(
      [&] { p->status[1] = connectEnd("shm", store, 1, 1, &p->ends[1], 10000, region1); });
  p->status[0] = connectEnd("shm", store, 0, 0, &p->ends[0], 10000, region0);
  t.join();
}

TEST(ShmRegion, EachRankSeesTheOthersRegionZeroFilledThenWhatItWrites) {
  Pair p;
  connectPair(&p, kRegion, kRegion);
  ASSERT_TRUE(p.status[0].ok()) << p.status[0].toString();
  ASSERT_TRUE(p.status[1].ok()) << p.status[1].toString();
  for (int r = 0; r < 2; ++r) {
    const shm::ShmPeer* other = p.transport(r)->peer(1 - r);
    ASSERT_NE(other, nullptr);
    ASSERT_NE(other->region, nullptr);
    EXPECT_EQ(other->block->regionBytes, kRegion);
    const auto* bytes = static_cast<const unsigned char*>(other->region);
    std::size_t nonZero = 0;
    for (std::size_t i = 0; i < kRegion; ++i) nonZero += bytes[i] != 0;
    EXPECT_EQ(nonZero, 0u) << "rank " << r << " found rank " << 1 - r << "'s region written";
  }
  // Words at both ends of rank 0's region, through rank 1's mapping of it.
  auto* mine = static_cast<std::atomic<std::uint64_t>*>(p.transport(0)->self().region);
  auto* last = reinterpret_cast<std::atomic<std::uint64_t>*>(
      static_cast<char*>(p.transport(0)->self().region) + kRegion - 8);
  mine->store(0x1122334455667788ull, std::memory_order_release);
  last->store(42, std::memory_order_release);
  const shm::ShmPeer* zero = p.transport(1)->peer(0);
  EXPECT_EQ(static_cast<std::atomic<std::uint64_t>*>(zero->region)->load(), 0x1122334455667788ull);
  EXPECT_EQ(
      reinterpret_cast<std::atomic<std::uint64_t>*>(static_cast<char*>(zero->region) + kRegion - 8)
          ->load(),
      42u);
  // The region lies apart from the transport's own state: the rings still carry a message.
  Buffer out(-1, 256), in(-1, 256);
  for (std::size_t i = 0; i < 256; ++i) out.data()[i] = static_cast<std::uint8_t>(i * 7 + 1);
  ASSERT_TRUE(p.ends[0].conn->postSend(out.data(), 256).ok());
  ASSERT_TRUE(p.ends[1].conn->postRecv(in.data(), 256).ok());
  ASSERT_TRUE(drain(*p.ends[1].conn).ok());
  ASSERT_TRUE(drain(*p.ends[0].conn).ok());
  EXPECT_EQ(std::memcmp(out.data(), in.data(), 256), 0);
}

TEST(ShmRegion, RanksThatAskForDifferentRegionsFailToConnectNamingTheSizes) {
  Pair p;
  connectPair(&p, kRegion, kRegion + 64);
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(p.status[r].ok()) << "rank " << r;
    EXPECT_EQ(p.status[r].code(), ErrorCode::kConnectionError) << p.status[r].toString();
    const std::string text = p.status[r].message();
    EXPECT_NE(text.find("shared region"), std::string::npos) << text;
    EXPECT_NE(text.find(std::to_string(kRegion)), std::string::npos) << text;
    EXPECT_NE(text.find(std::to_string(kRegion + 64)), std::string::npos) << text;
  }
}

TEST(ShmRegion, APeersDepartureKeepsTheFirstReasonAndItsProcessIsNotGone) {
  Pair p;
  connectPair(&p, 0, 0);
  ASSERT_TRUE(p.status[0].ok() && p.status[1].ok());
  const shm::ShmPeer* zero = p.transport(1)->peer(0);
  EXPECT_EQ(zero->departure(), shm::Departure::kNone);
  EXPECT_FALSE(zero->processGone());  // this very process
  p.transport(0)->self().markDeparted(shm::Departure::kAborted);
  p.transport(0)->self().markDeparted(shm::Departure::kDestroyed);
  EXPECT_EQ(zero->departure(), shm::Departure::kAborted);
  EXPECT_EQ(p.transport(0)->peer(1)->departure(), shm::Departure::kNone);
}

}  // namespace
}  // namespace cohort::transport::testing
