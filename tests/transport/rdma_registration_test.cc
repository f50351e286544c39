// The registration cache: hits on covered ranges, registers whole allocations on
// a miss, never evicts what is in use, evicts the least recently used beyond
// its capacity. A counting registrar stands in for ibv_reg_mr.
#include "transport/rdma/rdma_registration.h"

#include <set>
#include <vector>

#include "test_util.h"

namespace cohort::transport::rdma {
namespace {

class CountingRegistrar : public Registrar {
 public:
  Status registerMemory(void* addr, std::size_t length, int access, MemoryRegion* out) override {
    if (failNext) {
      failNext = false;
      return Status(ErrorCode::kSystemError, "ibv_reg_mr: Cannot allocate memory");
    }
    *out = MemoryRegion{addr, length, nextKey, nextKey + 1000, addr};
    ++nextKey;
    live.insert(addr);
    ++registered;
    return Status::Ok();
  }
  void deregister(const MemoryRegion& region) override {
    live.erase(region.addr);
    ++deregistered;
  }
  std::uint32_t nextKey = 1;
  int registered = 0;
  int deregistered = 0;
  bool failNext = false;
  std::multiset<void*> live;
};

struct RdmaCacheTest : ::testing::Test {
  std::shared_ptr<CountingRegistrar> registrar = std::make_shared<CountingRegistrar>();
  std::vector<std::uint8_t> a = std::vector<std::uint8_t>(1 << 16);
  std::vector<std::uint8_t> b = std::vector<std::uint8_t>(1 << 16);
  std::vector<std::uint8_t> c = std::vector<std::uint8_t>(1 << 16);
};

TEST_F(RdmaCacheTest, CoveredRangesHitTheCache) {
  RegistrationCache cache(registrar, 8);
  RegistrationCache::Lease l1, l2, l3;
  ASSERT_OK(cache.acquire(a.data() + 100, 500, a.data(), a.size(), &l1));
  ASSERT_OK(cache.acquire(a.data() + 4000, 60000, a.data(), a.size(), &l2));
  ASSERT_OK(cache.acquire(a.data(), a.size(), a.data(), a.size(), &l3));
  EXPECT_EQ(registrar->registered, 1);
  EXPECT_EQ(cache.registrations(), 1u);
  EXPECT_EQ(l1.lkey, 1u);
  EXPECT_EQ(l2.lkey, 1u);
  EXPECT_EQ(l1.id, l3.id);
  ASSERT_OK(cache.acquire(b.data(), 10, b.data(), b.size(), &l2));
  EXPECT_EQ(l2.lkey, 2u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST_F(RdmaCacheTest, RangesOutsideTheAllocationAreRefused) {
  RegistrationCache cache(registrar, 8);
  RegistrationCache::Lease l;
  EXPECT_ERROR(cache.acquire(a.data() + a.size() - 10, 20, a.data(), a.size(), &l),
               kInvalidArgument, "outside its allocation");
  EXPECT_ERROR(cache.acquire(a.data(), 20, a.data() + 1, a.size(), &l), kInvalidArgument,
               "outside its allocation");
  EXPECT_EQ(registrar->registered, 0);
}

TEST_F(RdmaCacheTest, RegistrationFailuresPropagate) {
  RegistrationCache cache(registrar, 8);
  RegistrationCache::Lease l;
  registrar->failNext = true;
  EXPECT_ERROR(cache.acquire(a.data(), 10, a.data(), a.size(), &l), kSystemError, "ibv_reg_mr");
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_OK(cache.acquire(a.data(), 10, a.data(), a.size(), &l));  // retried next time
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(RdmaCacheTest, EvictsLeastRecentlyUsedIdleEntries) {
  RegistrationCache cache(registrar, 2);
  RegistrationCache::Lease la, lb, lc;
  ASSERT_OK(cache.acquire(a.data(), 1, a.data(), a.size(), &la));
  ASSERT_OK(cache.acquire(b.data(), 1, b.data(), b.size(), &lb));
  cache.release(la);
  cache.release(lb);
  ASSERT_OK(cache.acquire(a.data(), 1, a.data(), a.size(), &la));  // a is now the newest
  cache.release(la);
  ASSERT_OK(cache.acquire(c.data(), 1, c.data(), c.size(), &lc));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(registrar->live.count(b.data()), 0u);  // b was the least recently used
  EXPECT_EQ(registrar->live.count(a.data()), 1u);
  EXPECT_EQ(registrar->deregistered, 1);
}

TEST_F(RdmaCacheTest, EntriesInUseAreNeverEvicted) {
  RegistrationCache cache(registrar, 1);
  RegistrationCache::Lease la, lb;
  ASSERT_OK(cache.acquire(a.data(), 1, a.data(), a.size(), &la));
  ASSERT_OK(cache.acquire(b.data(), 1, b.data(), b.size(), &lb));
  EXPECT_EQ(cache.size(), 2u);  // over capacity while both are in use
  EXPECT_EQ(registrar->deregistered, 0);
  cache.release(la);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(registrar->live.count(a.data()), 0u);
  cache.release(lb);
  cache.release(RegistrationCache::Lease{});  // no lease: nothing happens
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(RdmaCacheTest, DestructionDeregistersEverything) {
  {
    RegistrationCache cache(registrar, 8);
    RegistrationCache::Lease l;
    ASSERT_OK(cache.acquire(a.data(), 1, a.data(), a.size(), &l));
    ASSERT_OK(cache.acquire(b.data(), 1, b.data(), b.size(), &l));
  }
  EXPECT_TRUE(registrar->live.empty());
  EXPECT_EQ(registrar->deregistered, 2);
}

TEST_F(RdmaCacheTest, RegisteredBufferOwnsZeroedMemory) {
  std::unique_ptr<RegisteredBuffer> buf;
  ASSERT_OK(RegisteredBuffer::create(registrar, 100000, 3, &buf));
  ASSERT_NE(buf->data(), nullptr);
  EXPECT_EQ(buf->length(), 100000u);
  EXPECT_EQ(buf->data()[99999], 0);
  EXPECT_EQ(registrar->live.count(buf->data()), 1u);
  void* addr = buf->data();
  buf.reset();
  EXPECT_EQ(registrar->live.count(addr), 0u);
  registrar->failNext = true;
  EXPECT_ERROR(RegisteredBuffer::create(registrar, 4096, 3, &buf), kSystemError, "ibv_reg_mr");
  EXPECT_EQ(buf, nullptr);
}

}  // namespace
}  // namespace cohort::transport::rdma
