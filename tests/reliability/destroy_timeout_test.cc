// A destroy that waits for a peer which never finishes the calls made with it gives up
// at COHORT_EXEC_TIMEOUT (2 s here) with kTimeout naming that peer, and the peer's own
// destroy then returns at once. Ranks as threads over shm.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cohort/communicator.h"
#include "test_util.h"

namespace cohort {
namespace {

TEST(DestroyTimeout, PeerThatNeverComesIsNamed) {
  std::vector<std::unique_ptr<Communicator>> comms;
  ASSERT_OK(Communicator::initAll({0, 1}, &comms));
  std::vector<float> data(7, 1.5f);
  Status destroyed;
  double took = 0;
  std::thread root([&] {
    ASSERT_OK(runtime::setDevice(0));
    void* buf = nullptr;
    ASSERT_OK(runtime::deviceMalloc(&buf, data.size() * 4));
    for (int call = 0; call < 2; ++call) {  // the second one rank 1 never makes
      ASSERT_OK(comms[0]->broadcast(buf, data.size(), DataType::kFloat32, 0, nullptr));
      ASSERT_OK(runtime::streamSynchronize(nullptr));
    }
    const auto start = std::chrono::steady_clock::now();
    destroyed = Communicator::destroy(std::move(comms[0]), /*abortPending=*/false);
    took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    (void)runtime::deviceFree(buf);
  });
  std::thread other([&] {
    ASSERT_OK(runtime::setDevice(1));
    void* buf = nullptr;
    ASSERT_OK(runtime::deviceMalloc(&buf, data.size() * 4));
    ASSERT_OK(comms[1]->broadcast(buf, data.size(), DataType::kFloat32, 0, nullptr));
    ASSERT_OK(runtime::streamSynchronize(nullptr));
    (void)runtime::deviceFree(buf);
  });
  other.join();
  root.join();
  EXPECT_ERROR(destroyed, kTimeout, "rank(s) 1");
  EXPECT_GE(took, 1.0) << "the wait is the exec timeout's (2 s), less its margin";
  EXPECT_LT(took, 30.0) << "bounded";
  // Rank 0 is gone now: rank 1's destroy waits for nobody.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_OK(Communicator::destroy(std::move(comms[1]), /*abortPending=*/false));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
}

}  // namespace
}  // namespace cohort
