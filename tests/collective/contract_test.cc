// The asynchronous contract with ranks as threads of one process (contract.h has
// the scenarios): every collective, send/recv and batch, at 8 B ... 16 MiB, with 2
// and 4 ranks, over the transport the environment chooses (ctest runs it over shm
// and over tcp).
#include <gtest/gtest.h>

#include <cctype>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collective/contract.h"
#include "collective/rank_pool.h"

namespace cohort::testing {
namespace {

// The meeting on the host: returns when all `n` threads have entered it.
class HostBarrier {
 public:
  explicit HostBarrier(int n) : n_(n) {}
  void arrive() {
    std::unique_lock<std::mutex> lock(mu_);
    const std::uint64_t gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != gen; });
  }

 private:
  const int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
};

// The pool's communicators are A; B is a second set over the same devices, and
// every rank has a second stream.
struct Job {
  RankPool* pool = nullptr;
  std::vector<std::unique_ptr<Communicator>> b;
  std::vector<runtime::Stream*> sb;
  std::unique_ptr<HostBarrier> barrier;
  Status init;
};

Job& job(int n) {
  static std::map<int, std::unique_ptr<Job>>* jobs = new std::map<int, std::unique_ptr<Job>>();
  auto& j = (*jobs)[n];
  if (j) return *j;
  j = std::make_unique<Job>();
  j->pool = &RankPool::shared(n);
  j->init = j->pool->initStatus();
  if (!j->init.ok()) return *j;
  std::vector<int> devices;
  for (int r = 0; r < n; ++r) devices.push_back(r);
  j->init = Communicator::initAll(devices, &j->b);
  if (!j->init.ok()) return *j;
  j->sb.resize(static_cast<std::size_t>(n));
  j->barrier = std::make_unique<HostBarrier>(n);
  const std::string made = joinFailures(j->pool->run([&](int r) {
    Status s = runtime::streamCreate(&j->sb[static_cast<std::size_t>(r)]);
    return s.ok() ? std::string() : s.toString();
  }));
  if (!made.empty()) j->init = Status(ErrorCode::kInternal, made);
  return *j;
}

Watchdog& watchdog() {
  static Watchdog* w = new Watchdog();
  return *w;
}

// One test per call (each ctest entry is a process that makes its communicators):
// every scenario, size and rank count.
class ContractTest : public ::testing::TestWithParam<ContractCall> {};

TEST_P(ContractTest, NoCallWaitsForAPeerAndEveryElementIsRight) {
  const ContractCall call = GetParam();
  for (int n : {2, 4}) {
    Job& j = job(n);
    ASSERT_TRUE(j.init.ok()) << j.init.toString();
    for (ContractScenario scenario : {ContractScenario::kBarrierAfter,
                                      ContractScenario::kWorkBehind,
                                      ContractScenario::kOppositeOrder}) {
      for (std::size_t bytes : contractSizes()) {
        const std::string failures = joinFailures(j.pool->run([&](int r) {
          const auto i = static_cast<std::size_t>(r);
          ContractRank me{&j.pool->comm(r), j.b[i].get(), j.pool->stream(r), j.sb[i],
                          [&] { j.barrier->arrive(); }};
          return runContract(me, scenario, call, bytes, watchdog());
        }));
        EXPECT_EQ(failures, "") << n << " ranks, " << bytes << " bytes, "
                                << contractScenarioName(scenario);
        if (!failures.empty()) return;  // the communicators may be gone
      }
    }
  }
}

std::string caseName(const ::testing::TestParamInfo<ContractCall>& info) {
  std::string name = contractCallName(info.param);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// The transport in the test names (ctest lists both binaries' tests together).
#ifndef CONTRACT_TRANSPORT
#define CONTRACT_TRANSPORT Shm
#endif
INSTANTIATE_TEST_SUITE_P(CONTRACT_TRANSPORT, ContractTest,
                         ::testing::ValuesIn(allContractCalls()), caseName);

}  // namespace
}  // namespace cohort::testing
