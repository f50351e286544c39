// Nothing lost at destroy, ranks as threads (the stream's worker runs every
// operation): for every destroy case, a fresh communicator split from a pool's,
// one rank destroying it right after its sync while the others lag, every
// element of every rank's result checked. Built once per transport (the
// transport is read from the environment once per process).
#include <gtest/gtest.h>

#include "collective/rank_pool.h"
#include "reliability/destroy_cases.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

using std::chrono::milliseconds;

constexpr int kRanks = 3;

TEST(DESTROY_SUITE, LeaverNeverBreaksItsPeers) {
  RankPool pool(kRanks);
  ASSERT_OK(pool.initStatus());
  // 7 elements: the staged paths (eager broadcast, posted); 12345: direct;
  // 150001: several pieces of the ring schedules over tcp.
  const auto cases = destroyCases(kRanks, {7, 12345, 150001});
  std::vector<std::unique_ptr<Communicator>> fresh(kRanks);
  std::string failures;
  int failed = 0;
  for (const DestroyCase& c : cases) {
    const auto made = pool.run([&](int r) {
      const Status s = pool.comm(r).split(0, r, &fresh[static_cast<std::size_t>(r)]);
      return s.ok() ? std::string() : "split: " + s.toString();
    });
    ASSERT_EQ(joinFailures(made), "") << c.describe();
    const auto results = pool.run([&](int r) {
      return runDestroyCase(c, std::move(fresh[static_cast<std::size_t>(r)]), milliseconds(20));
    });
    const std::string f = joinFailures(results);
    if (!f.empty() && ++failed <= 5) failures += "\n" + c.describe() + ":" + f;
  }
  EXPECT_EQ(failed, 0) << "of " << cases.size() << " cases; the first ones:" << failures;
}

}  // namespace
}  // namespace cohort::testing
