// HCCL calls queued on a stream that captures a model (aclmdlRICaptureBegin) are
// recorded, and every aclmdlRIExecuteAsync runs them again with the buffers they
// were captured with, also inside the branch of a conditional task. Ranks as threads
// (HcclCommInitAll).
#include <cstdint>
#include <vector>

#include "cohort/runtime.h"
#include "hccl_test_util.h"

namespace {

using hccl_test::DeviceBuffer;

constexpr int kCaptureRanks = 3;
using HcclCaptureTest = hccl_test::RanksTest<kCaptureRanks>;

// Rank r's input element i before execution k.
int32_t inputOf(int r, std::size_t i, int k) {
  return static_cast<int32_t>(1000 * k + 10 * r + static_cast<int>(i % 9));
}

// The capture holds an allreduce, an allgather, a broadcast of a copy of the
// input, and a batch of sends and receives with both other ranks. Before each
// execution the host's new input is copied in, after it the results are copied
// out, all on the stream: every element of every execution is checked.
TEST_F(HcclCaptureTest, CapturedCallsRunAtEveryExecution) {
  constexpr std::size_t n = 257;
  constexpr int kExecutions = 3;
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    DeviceBuffer in(n * 4), sum(n * 4), gathered(n * 4 * kCaptureRanks), bcast(n * 4),
        recvd(n * 4 * kCaptureRanks);
    auto* recvBase = static_cast<int32_t*>(recvd.get());
    std::vector<HcclSendRecvItem> items;
    for (uint32_t q = 0; q < kCaptureRanks; ++q) {
      if (q == static_cast<uint32_t>(r)) continue;
      items.push_back({HCCL_SEND, in.get(), n, HCCL_DATA_TYPE_INT32, q});
      items.push_back({HCCL_RECV, recvBase + q * n, n, HCCL_DATA_TYPE_INT32, q});
    }
    ASSERT_ACL_OK(aclrtMemset(recvd.get(), n * 4 * kCaptureRanks, 0, n * 4 * kCaptureRanks));

    ASSERT_ACL_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    ASSERT_HCCL_OK(
        HcclAllReduce(in.get(), sum.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
    ASSERT_HCCL_OK(HcclAllGather(in.get(), gathered.get(), n, HCCL_DATA_TYPE_INT32, comm, s));
    ASSERT_ACL_OK(
        aclrtMemcpyAsync(bcast.get(), n * 4, in.get(), n * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    ASSERT_HCCL_OK(HcclBroadcast(bcast.get(), n, HCCL_DATA_TYPE_INT32, 2, comm, s));
    ASSERT_HCCL_OK(HcclBatchSendRecv(items.data(), static_cast<uint32_t>(items.size()), comm, s));
    aclmdlRI model = nullptr;
    ASSERT_ACL_OK(aclmdlRICaptureEnd(s, &model));
    // Recorded, not run: the outputs are as they were.
    EXPECT_EQ(recvd.download<int32_t>(1)[0], 0);

    std::vector<std::vector<int32_t>> inputs(kExecutions, std::vector<int32_t>(n));
    std::vector<std::vector<int32_t>> sums(kExecutions, std::vector<int32_t>(n)),
        gathers(kExecutions, std::vector<int32_t>(n * kCaptureRanks)),
        bcasts(kExecutions, std::vector<int32_t>(n)),
        recvs(kExecutions, std::vector<int32_t>(n * kCaptureRanks));
    for (int k = 0; k < kExecutions; ++k) {
      for (std::size_t i = 0; i < n; ++i) inputs[k][i] = inputOf(r, i, k);
      ASSERT_ACL_OK(
          aclrtMemcpyAsync(in.get(), n * 4, inputs[k].data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE, s));
      ASSERT_ACL_OK(aclmdlRIExecuteAsync(model, s));
      ASSERT_ACL_OK(
          aclrtMemcpyAsync(sums[k].data(), n * 4, sum.get(), n * 4, ACL_MEMCPY_DEVICE_TO_HOST, s));
      ASSERT_ACL_OK(aclrtMemcpyAsync(gathers[k].data(), n * 4 * kCaptureRanks, gathered.get(),
                                     n * 4 * kCaptureRanks, ACL_MEMCPY_DEVICE_TO_HOST, s));
      ASSERT_ACL_OK(aclrtMemcpyAsync(bcasts[k].data(), n * 4, bcast.get(), n * 4,
                                     ACL_MEMCPY_DEVICE_TO_HOST, s));
      ASSERT_ACL_OK(aclrtMemcpyAsync(recvs[k].data(), n * 4 * kCaptureRanks, recvd.get(),
                                     n * 4 * kCaptureRanks, ACL_MEMCPY_DEVICE_TO_HOST, s));
    }
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    EXPECT_EQ(aclmdlRIDestroy(model), ACL_SUCCESS);
    for (int k = 0; k < kExecutions; ++k) {
      for (std::size_t i = 0; i < n; ++i) {
        int32_t total = 0;
        for (int q = 0; q < kCaptureRanks; ++q) total += inputOf(q, i, k);
        ASSERT_EQ(sums[k][i], total) << "rank " << r << " execution " << k << " sum[" << i << "]";
        ASSERT_EQ(bcasts[k][i], inputOf(2, i, k)) << "rank " << r << " broadcast[" << i << "]";
        for (int q = 0; q < kCaptureRanks; ++q) {
          const std::size_t at = static_cast<std::size_t>(q) * n + i;
          ASSERT_EQ(gathers[k][at], inputOf(q, i, k)) << "rank " << r << " gather[" << at << "]";
          ASSERT_EQ(recvs[k][at], q == r ? 0 : inputOf(q, i, k))
              << "rank " << r << " execution " << k << " from rank " << q << "[" << i << "]";
        }
      }
    }
  });
}

// A while task whose branch holds an allreduce runs it once a round on every rank
// (each round's collective is issued from the stream's worker when the round starts):
// the branch feeds the sum back as the next input and counts the rounds down.
TEST_F(HcclCaptureTest, ACollectiveInAWhileBranchRunsOnceARound) {
  constexpr std::size_t n = 129;
  constexpr uint32_t kRounds = 3;
  onEveryRank([&](int r, HcclComm comm, aclrtStream s) {
    DeviceBuffer in(n * 4), sum(n * 4);
    std::vector<int32_t> input(n);
    for (std::size_t i = 0; i < n; ++i) input[i] = inputOf(r, i, 0);
    in.upload(input);
    aclrtStream body = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&body));
    ASSERT_ACL_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    aclmdlRICaptureStatus status;
    aclmdlRI model = nullptr;
    ASSERT_ACL_OK(aclmdlRICaptureGetInfo(s, &status, &model));
    aclmdlRICondHandle handle = nullptr;
    ASSERT_ACL_OK(
        aclmdlRICondHandleCreate(model, kRounds, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &handle));
    uint64_t* rounds = nullptr;
    ASSERT_ACL_OK(aclmdlRICondHandleGetCondPtr(handle, &rounds));
    aclmdlRI branch = nullptr;
    aclmdlRICondTaskParams params{handle, ACL_MODEL_RI_COND_TYPE_WHILE, 1, &branch};
    ASSERT_ACL_OK(aclmdlRIAddCondTask(params, s, 0));
    ASSERT_ACL_OK(
        aclmdlRICaptureToModelRIBegin(body, branch, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    ASSERT_HCCL_OK(
        HcclAllReduce(in.get(), sum.get(), n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, body));
    ASSERT_ACL_OK(
        aclrtMemcpyAsync(in.get(), n * 4, sum.get(), n * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, body));
    ASSERT_TRUE(cohort::runtime::launchKernel(static_cast<cohort::runtime::Stream*>(body),
                                              [rounds](cohort::runtime::Stream*) {
                                                *rounds -= 1;
                                                return cohort::Status::Ok();
                                              })
                    .ok());
    ASSERT_ACL_OK(aclmdlRICaptureEnd(body, &branch));
    ASSERT_ACL_OK(aclmdlRICaptureEnd(s, &model));

    // Each round multiplies by the number of ranks what the first made the sum of all.
    int32_t factor = 1;
    for (int execution = 0; execution < 2; ++execution) {
      ASSERT_ACL_OK(aclmdlRIExecuteAsync(model, s));
      ASSERT_ACL_OK(aclrtSynchronizeStream(s));
      factor *= execution == 0 ? kCaptureRanks * kCaptureRanks
                               : kCaptureRanks * kCaptureRanks * kCaptureRanks;
      const std::vector<int32_t> got = sum.download<int32_t>(n);
      for (std::size_t i = 0; i < n; ++i) {
        int32_t total = 0;
        for (int q = 0; q < kCaptureRanks; ++q) total += inputOf(q, i, 0);
        ASSERT_EQ(got[i], total * factor)
            << "rank " << r << " execution " << execution << "[" << i << "]";
      }
    }
    EXPECT_EQ(aclmdlRIDestroy(model), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(body), ACL_SUCCESS);
  });
}

}  // namespace
