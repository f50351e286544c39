// Failures that need short timeouts and small devices (set for this binary):
// link setup and execution timeouts (HCCL_E_TIMEOUT), device memory exhausted
// during an operation (HCCL_E_OOM), an aborted communicator (HCCL_E_INTERNAL), and
// the survivors of a rank that left shrinking past it (hccl/hccl_cohort.h).
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "hccl/comm_registry.h"
#include "hccl/hccl_cohort.h"
#include "hccl_test_util.h"

namespace {

using hccl_test::DeviceBuffer;
using hccl_test::freePort;
using hccl_test::rankTableJson;
using hccl_test::runRanks;
using hccl_test::writeTempFile;

[[maybe_unused]] auto* const gAcl =
    ::testing::AddGlobalTestEnvironment(new hccl_test::AclEnvironment());

TEST(HcclFault, ARankThatNeverComesIsALinkSetupTimeout) {
  HcclRootInfo root;
  ASSERT_HCCL_OK(HcclGetRootInfo(&root));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  HcclComm comm = nullptr;
  EXPECT_HCCL(HcclCommInitRootInfo(2, &root, 0, &comm), HCCL_E_TIMEOUT, "rank 0 of 2");
  // Rank 1 of a table whose rank 0 never serves the store.
  const std::string table = writeTempFile("lonely.json", rankTableJson(2, freePort()));
  ASSERT_ACL_OK(aclrtSetDevice(1));
  EXPECT_HCCL(HcclCommInitClusterInfo(table.c_str(), 1, &comm), HCCL_E_TIMEOUT,
              "could not connect");
}

// Rank 0 allreduces alone: after COHORT_EXEC_TIMEOUT the operation fails, the
// communicator reports HCCL_E_TIMEOUT, and later calls are refused with it.
TEST(HcclFault, AnUnmatchedOperationIsAnExecutionTimeout) {
  HcclComm comms[2] = {};
  int32_t devices[2] = {0, 1};
  ASSERT_HCCL_OK(HcclCommInitAll(2, devices, comms));
  runRanks(1, [&](int) {
    aclrtStream s = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    DeviceBuffer buf(64);
    ASSERT_HCCL_OK(
        HcclAllReduce(buf.get(), buf.get(), 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[0], s));
    EXPECT_NE(aclrtSynchronizeStream(s), ACL_SUCCESS);
    HcclResult async = HCCL_SUCCESS;
    ASSERT_HCCL_OK(HcclGetCommAsyncError(comms[0], &async));
    EXPECT_EQ(async, HCCL_E_TIMEOUT);
    EXPECT_HCCL(
        HcclAllReduce(buf.get(), buf.get(), 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[0], s),
        HCCL_E_TIMEOUT, "the communicator failed earlier");
    (void)aclrtDestroyStream(s);
  });
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

// Host buffers larger than the (8 MiB) devices: the operation needs device
// scratch space it cannot get. HcclAllReduce refuses plain host memory at the call,
// so the C++ API (which stages it) queues the operation on the HCCL communicator.
TEST(HcclFault, DeviceMemoryExhaustedDuringAnOperationIsOutOfMemory) {
  HcclComm comms[2] = {};
  int32_t devices[2] = {0, 1};
  ASSERT_HCCL_OK(HcclCommInitAll(2, devices, comms));
  const std::size_t count = (16u << 20) / 4;
  runRanks(2, [&](int r) {
    aclrtStream s = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    std::vector<float> host(count, 1.0f);
    cohort::Communicator& comm = *cohort::hccl::CommRegistry::get().find(comms[r])->comm;
    ASSERT_TRUE(comm.allReduce(host.data(), host.data(), count, cohort::DataType::kFloat32,
                               cohort::ReduceOp::kSum, static_cast<cohort::runtime::Stream*>(s))
                    .ok());
    EXPECT_NE(aclrtSynchronizeStream(s), ACL_SUCCESS);
    HcclResult async = HCCL_SUCCESS;
    ASSERT_HCCL_OK(HcclGetCommAsyncError(comms[r], &async));
    EXPECT_EQ(async, HCCL_E_OOM) << "rank " << r;
    (void)aclrtDestroyStream(s);
  });
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

// C++ code holding the same communicator aborts it: HCCL has no "aborted"
// number, so the C API reports an internal error naming the abort.
TEST(HcclFault, AnAbortedCommunicatorIsAnInternalError) {
  HcclComm comm[1] = {};
  int32_t device = 0;
  ASSERT_HCCL_OK(HcclCommInitAll(1, &device, comm));
  cohort::hccl::CommRegistry::get().find(comm[0])->comm->abort();
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream s = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&s));
  EXPECT_HCCL(HcclBarrier(comm[0], s), HCCL_E_INTERNAL, "aborted");
  EXPECT_EQ(HcclCommDestroy(comm[0]), HCCL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// Rank 2 of 3 aborts (HcclCommAbort) instead of calling the allreduce, while its
// process (these threads') lives on: ranks 0 and 1 see their allreduce fail, agree
// on rank 2 without being told, shrink to two ranks in their old order and
// allreduce every element of an odd count.
TEST(HcclFault, SurvivorsShrinkPastARankThatAborted) {
  constexpr int kRanks = 3;
  constexpr std::size_t n = 1001;
  HcclComm comms[kRanks] = {};
  int32_t devices[kRanks] = {0, 1, 2};
  ASSERT_HCCL_OK(HcclCommInitAll(kRanks, devices, comms));
  runRanks(kRanks, [&](int r) {
    ASSERT_ACL_OK(aclrtSetDevice(r));
    if (r == 2) {
      EXPECT_EQ(HcclCommAbort(comms[2]), HCCL_SUCCESS);
      EXPECT_EQ(HcclCommAbort(nullptr), HCCL_SUCCESS);  // nothing to abort
      return;
    }
    aclrtStream s = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    DeviceBuffer buf(n * 4);
    HcclResult sent =
        HcclAllReduce(buf.get(), buf.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comms[r], s);
    EXPECT_TRUE(sent != HCCL_SUCCESS || aclrtSynchronizeStream(s) != ACL_SUCCESS) << "rank " << r;
    // The error names the rank that aborted (HcclGetCommAsyncError's text is logged).
    HcclResult async = HCCL_SUCCESS;
    EXPECT_EQ(HcclGetCommAsyncError(comms[r], &async), HCCL_SUCCESS);
    EXPECT_NE(async, HCCL_SUCCESS) << "rank " << r;
    uint32_t failed[4] = {9, 9, 9, 9};
    uint32_t count = 0;
    ASSERT_HCCL_OK(CohortCommGetFailedRanks(comms[r], nullptr, 0, &count));
    EXPECT_EQ(count, 1u);
    ASSERT_HCCL_OK(CohortCommGetFailedRanks(comms[r], failed, 4, &count));
    EXPECT_EQ(failed[0], 2u);
    EXPECT_EQ(failed[1], 9u);
    HcclComm shrunk = nullptr;
    ASSERT_HCCL_OK(CohortCommShrink(comms[r], &shrunk));
    uint32_t size = 0, rank = 9;
    ASSERT_HCCL_OK(HcclGetRankSize(shrunk, &size));
    ASSERT_HCCL_OK(HcclGetRankId(shrunk, &rank));
    EXPECT_EQ(size, 2u);
    EXPECT_EQ(rank, static_cast<uint32_t>(r));
    aclrtStream fresh = nullptr;  // s keeps the failure it reported
    ASSERT_ACL_OK(aclrtCreateStream(&fresh));
    std::vector<int32_t> mine(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = (r + 1) * 100000 + static_cast<int32_t>(i);
    buf.upload(mine);
    ASSERT_HCCL_OK(HcclAllReduce(buf.get(), buf.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM,
                                 shrunk, fresh));
    ASSERT_ACL_OK(aclrtSynchronizeStream(fresh));
    const std::vector<int32_t> got = buf.download<int32_t>(n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], 300000 + 2 * static_cast<int32_t>(i)) << "rank " << r << " [" << i << "]";
    }
    EXPECT_HCCL(CohortCommShrink(comms[r], nullptr), HCCL_E_PTR, "newComm");
    EXPECT_EQ(HcclCommDestroy(shrunk), HCCL_SUCCESS);
    (void)HcclCommDestroy(comms[r]);  // failed: its finalize reports the failure
    (void)aclrtSynchronizeStream(s);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(fresh), ACL_SUCCESS);
  });
}

// Rank 2 lives but stays away (it makes no call) past the exec timeout (1 s here):
// ranks 0 and 1 time out, yet it is no failed rank (its process, this one, lives
// and it did not abort), so they agree on none at once, without waiting for it;
// their shrink waits for it, and the three go on together.
TEST(HcclFault, ARankThatComesLateIsNoFailedRank) {
  constexpr int kRanks = 3;
  constexpr std::size_t n = 257;
  HcclComm comms[kRanks] = {};
  int32_t devices[kRanks] = {0, 1, 2};
  ASSERT_HCCL_OK(HcclCommInitAll(kRanks, devices, comms));
  std::atomic<int> decided{0};
  runRanks(kRanks, [&](int r) {
    ASSERT_ACL_OK(aclrtSetDevice(r));
    uint32_t failed[kRanks] = {};
    uint32_t count = 9;
    aclrtStream s = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    DeviceBuffer buf(n * 4);
    if (r == 2) {
      while (decided.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } else {
      const HcclResult sent = HcclAllReduce(buf.get(), buf.get(), n, HCCL_DATA_TYPE_INT32,
                                            HCCL_REDUCE_SUM, comms[r], s);
      EXPECT_TRUE(sent != HCCL_SUCCESS || aclrtSynchronizeStream(s) != ACL_SUCCESS) << "rank " << r;
    }
    ASSERT_HCCL_OK(CohortCommGetFailedRanks(comms[r], failed, kRanks, &count));
    EXPECT_EQ(count, 0u) << "rank " << r;
    ++decided;
    HcclComm again = nullptr;
    ASSERT_HCCL_OK(CohortCommShrink(comms[r], &again));
    uint32_t size = 0;
    ASSERT_HCCL_OK(HcclGetRankSize(again, &size));
    EXPECT_EQ(size, 3u);
    aclrtStream fresh = nullptr;  // s may keep the failure it reported
    ASSERT_ACL_OK(aclrtCreateStream(&fresh));
    std::vector<int32_t> mine(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = (r + 1) * 1000 + static_cast<int32_t>(i);
    buf.upload(mine);
    ASSERT_HCCL_OK(HcclAllReduce(buf.get(), buf.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM,
                                 again, fresh));
    ASSERT_ACL_OK(aclrtSynchronizeStream(fresh));
    const std::vector<int32_t> got = buf.download<int32_t>(n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], 6000 + 3 * static_cast<int32_t>(i)) << "rank " << r << " [" << i << "]";
    }
    EXPECT_EQ(HcclCommDestroy(again), HCCL_SUCCESS);
    (void)aclrtSynchronizeStream(s);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(fresh), ACL_SUCCESS);
  });
  for (HcclComm c : comms) (void)HcclCommDestroy(c);
}

// The same past an aborting rank of a sub-communicator (HcclCreateSubCommConfig of
// world ranks 1, 2 and 3): its survivors, world ranks 1 and 3, agree on its rank 1
// and shrink to ranks 0 and 1 of their own; world rank 0 takes no part.
TEST(HcclFault, SurvivorsOfASubCommunicatorShrinkPastARankThatAborted) {
  constexpr int kRanks = 4;
  constexpr std::size_t n = 333;
  HcclComm comms[kRanks] = {};
  int32_t devices[kRanks] = {0, 1, 2, 3};
  ASSERT_HCCL_OK(HcclCommInitAll(kRanks, devices, comms));
  runRanks(kRanks, [&](int r) {
    ASSERT_ACL_OK(aclrtSetDevice(r));
    uint32_t ids[3] = {1, 2, 3};
    HcclComm sub = nullptr;
    const bool member = r > 0;
    ASSERT_HCCL_OK(HcclCreateSubCommConfig(
        &comms[r], member ? 3 : 0, member ? ids : nullptr, member ? 5 : 0xFFFFFFFF,
        member ? static_cast<uint32_t>(r - 1) : 0, nullptr, &sub));
    if (!member) return;
    if (r == 2) {
      cohort::hccl::CommRegistry::get().find(sub)->comm->abort();
      EXPECT_EQ(HcclCommDestroy(sub), HCCL_SUCCESS);
      return;
    }
    aclrtStream s = nullptr, fresh = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    ASSERT_ACL_OK(aclrtCreateStream(&fresh));
    DeviceBuffer buf(n * 4);
    const HcclResult sent =
        HcclAllReduce(buf.get(), buf.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, sub, s);
    EXPECT_TRUE(sent != HCCL_SUCCESS || aclrtSynchronizeStream(s) != ACL_SUCCESS) << "rank " << r;
    uint32_t failed[3] = {};
    uint32_t count = 0;
    ASSERT_HCCL_OK(CohortCommGetFailedRanks(sub, failed, 3, &count));
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(failed[0], 1u);  // world rank 2, rank 1 of the sub-communicator
    HcclComm shrunk = nullptr;
    ASSERT_HCCL_OK(CohortCommShrink(sub, &shrunk));
    uint32_t size = 0, rank = 9;
    ASSERT_HCCL_OK(HcclGetRankSize(shrunk, &size));
    ASSERT_HCCL_OK(HcclGetRankId(shrunk, &rank));
    EXPECT_EQ(size, 2u);
    EXPECT_EQ(rank, r == 1 ? 0u : 1u);
    std::vector<int32_t> mine(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = r * 1000 + static_cast<int32_t>(i);
    buf.upload(mine);
    ASSERT_HCCL_OK(HcclAllReduce(buf.get(), buf.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM,
                                 shrunk, fresh));
    ASSERT_ACL_OK(aclrtSynchronizeStream(fresh));
    const std::vector<int32_t> got = buf.download<int32_t>(n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], 4000 + 2 * static_cast<int32_t>(i)) << "rank " << r << " [" << i << "]";
    }
    EXPECT_EQ(HcclCommDestroy(shrunk), HCCL_SUCCESS);
    (void)HcclCommDestroy(sub);
    (void)aclrtSynchronizeStream(s);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(fresh), ACL_SUCCESS);
  });
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

}  // namespace
