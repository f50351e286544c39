// The soak test: a long random mix of collectives (every kind, type, reduce op,
// sizes from 0 to 128 Ki elements, every algorithm that can run each kind) on 4
// ranks as threads, every result checked. Registered twice by CMake:
//   reliability.soak_short   --operations=500     default suite
//   reliability.soak         --operations=10000   label soak, needs -DCOHORT_SOAK=ON
// --seed=N replays another mix (the default is fixed, so failures reproduce).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "collective/rank_pool.h"
#include "reliability/soak_ops.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

std::size_t gOperations = 500;
std::uint32_t gSeed = 20240611;

TEST(SoakTest, RandomMixOfCollectivesOnFourRanksIsAlwaysRight) {
  RankPool pool(4);
  ASSERT_OK(pool.initStatus());
  const std::vector<SoakOp> ops = makeSoakOps(gOperations, gSeed, pool.size());
  std::map<std::string, int> perKind;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const SoakOp& op = ops[i];
    const auto results =
        pool.run([&](int r) { return runSoakOp(op, pool.comm(r), pool.stream(r)); });
    std::string failures;
    for (std::size_t r = 0; r < results.size(); ++r) {
      if (!results[r].empty()) failures += "\n rank " + std::to_string(r) + ": " + results[r];
    }
    ASSERT_EQ(failures, "") << "operation " << i << " of " << ops.size() << " (seed " << gSeed
                            << "): " << op.describe();
    ++perKind[op.algorithm.empty() ? std::string(soakKindName(op.kind)) + "=auto" : op.algorithm];
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string mix;
  for (const auto& [name, n] : perKind) mix += " " + name + ":" + std::to_string(n);
  std::printf("%zu operations in %.1f s (seed %u):%s\n", ops.size(), secs, gSeed, mix.c_str());
  if (ops.size() >= 500) {
    EXPECT_EQ(perKind.size(), 34u) << mix;  // every kind x algorithm ran
  }
}

}  // namespace
}  // namespace cohort::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--operations=", 13) == 0) {
      cohort::testing::gOperations = std::strtoull(argv[i] + 13, nullptr, 10);
    } else if (std::strncmp(argv[i], "--seed=", 7) == 0) {
      cohort::testing::gSeed = static_cast<std::uint32_t>(std::strtoul(argv[i] + 7, nullptr, 10));
    }
  }
  return RUN_ALL_TESTS();
}
