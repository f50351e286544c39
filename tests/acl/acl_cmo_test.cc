// Cache maintenance: argument checks, tasks in stream order that leave the data as it
// is, and barriers that make one stream wait for another's INVALID tasks.
#include <cstdint>
#include <cstring>
#include <vector>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

class AclCmoTest : public AclDevice0StreamTest {
 protected:
  void SetUp() override {
    AclDevice0StreamTest::SetUp();
    ASSERT_ACL_OK(aclrtMalloc(&dev_, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_ACL_OK(aclrtMemset(dev_, 4096, 0x6c, 4096));
  }
  uint64_t queued() {
    uint64_t enqueued = 0, completed = 0;
    EXPECT_TRUE(
        runtime::streamProgress(static_cast<runtime::Stream*>(stream_), &enqueued, &completed)
            .ok());
    return enqueued;
  }
  void expectUntouched() {
    std::vector<unsigned char> out(4096);
    ASSERT_ACL_OK(aclrtMemcpy(out.data(), 4096, dev_, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT_EQ(out, std::vector<unsigned char>(4096, 0x6c));
  }
  void* dev_ = nullptr;
};

TEST_F(AclCmoTest, PrefetchIsATaskThatChangesNothing) {
  const uint64_t before = queued();
  ASSERT_ACL_OK(aclrtCmoAsync(dev_, 4096, ACL_RT_CMO_TYPE_PREFETCH, stream_));
  EXPECT_EQ(queued(), before + 1);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  expectUntouched();
  EXPECT_ACL_ERROR(aclrtCmoAsync(dev_, 4096, ACL_RT_CMO_TYPE_FLUSH, stream_),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "only ACL_RT_CMO_TYPE_PREFETCH");
  EXPECT_ACL_ERROR(aclrtCmoAsync(dev_, 4096, static_cast<aclrtCmoType>(4), stream_),
                   ACL_ERROR_INVALID_PARAM, "cmoType 4");
  EXPECT_ACL_ERROR(aclrtCmoAsync(dev_, 4097, ACL_RT_CMO_TYPE_PREFETCH, stream_),
                   ACL_ERROR_INVALID_PARAM, "overrun its allocation");
  EXPECT_ACL_ERROR(aclrtCmoAsync(dev_, 0, ACL_RT_CMO_TYPE_PREFETCH, stream_),
                   ACL_ERROR_INVALID_PARAM, "size is 0");
  std::vector<char> host(64);
  EXPECT_ACL_ERROR(aclrtCmoAsync(host.data(), 64, ACL_RT_CMO_TYPE_PREFETCH, stream_),
                   ACL_ERROR_INVALID_PARAM, "is not device memory");
  // Only memory of the stream's device.
  ASSERT_ACL_OK(aclrtSetDevice(1));
  void* other = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&other, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_ACL_ERROR(aclrtCmoAsync(other, 64, ACL_RT_CMO_TYPE_PREFETCH, stream_),
                   ACL_ERROR_INVALID_PARAM, "the stream's device is 0");
}

TEST_F(AclCmoTest, BarrierMakesAnotherStreamWait) {
  aclrtStream waiter = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&waiter));
  Gate gate;
  gate.hold(stream_);
  ASSERT_ACL_OK(aclrtCmoAsyncWithBarrier(dev_, 4096, ACL_RT_CMO_TYPE_INVALID, 3, stream_));
  aclrtBarrierTaskInfo info;
  std::memset(&info, 0, sizeof(info));
  info.barrierNum = 1;
  info.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_INVALID;
  info.cmoInfo[0].barrierId = 3;
  ASSERT_ACL_OK(aclrtCmoWaitBarrier(&info, waiter, 0));
  // The waiter's later work waits for the invalidate held behind the gate.
  std::atomic<bool> ran{false};
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(waiter), [&](runtime::Stream*) {
    ran = true;
    return Status::Ok();
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(ran.load());
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(waiter));
  EXPECT_TRUE(ran.load());
  expectUntouched();
  // Other types with barrier id 0; an id only with INVALID.
  ASSERT_ACL_OK(aclrtCmoAsyncWithBarrier(dev_, 64, ACL_RT_CMO_TYPE_WRITEBACK, 0, stream_));
  ASSERT_ACL_OK(aclrtCmoAsyncWithBarrier(dev_, 64, ACL_RT_CMO_TYPE_FLUSH, 0, stream_));
  EXPECT_ACL_ERROR(aclrtCmoAsyncWithBarrier(dev_, 64, ACL_RT_CMO_TYPE_FLUSH, 2, stream_),
                   ACL_ERROR_INVALID_PARAM, "barrierId 2 is for ACL_RT_CMO_TYPE_INVALID only");
  info.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_PREFETCH;
  EXPECT_ACL_ERROR(aclrtCmoWaitBarrier(&info, waiter, 0), ACL_ERROR_INVALID_PARAM,
                   "must be ACL_RT_CMO_TYPE_INVALID");
  info.cmoInfo[0].cmoType = ACL_RT_CMO_TYPE_INVALID;
  info.barrierNum = 7;
  EXPECT_ACL_ERROR(aclrtCmoWaitBarrier(&info, waiter, 0), ACL_ERROR_INVALID_PARAM,
                   "barrierNum 7 is not in 1..6");
  info.barrierNum = 1;
  EXPECT_ACL_ERROR(aclrtCmoWaitBarrier(&info, waiter, 1), ACL_ERROR_INVALID_PARAM, "flag 0");
  EXPECT_ACL_ERROR(aclrtCmoWaitBarrier(nullptr, waiter, 0), ACL_ERROR_INVALID_PARAM,
                   "taskInfo must be non-null");
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  ASSERT_ACL_OK(aclrtDestroyStream(waiter));
}

TEST_F(AclCmoTest, Descriptors) {
  size_t size = 0;
  ASSERT_ACL_OK(aclrtCmoGetDescSize(&size));
  EXPECT_GE(size, 16u);
  void* desc = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&desc, size, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemset(desc, size, 0, size));
  EXPECT_ACL_ERROR(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, stream_, nullptr),
                   ACL_ERROR_INVALID_PARAM, "holds no descriptor");
  ASSERT_ACL_OK(aclrtCmoSetDesc(desc, dev_, 4096));
  const uint64_t before = queued();
  ASSERT_ACL_OK(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, stream_, nullptr));
  EXPECT_EQ(queued(), before + 1);
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  expectUntouched();
  int reserve = 0;
  EXPECT_ACL_ERROR(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_PREFETCH, stream_, &reserve),
                   ACL_ERROR_INVALID_PARAM, "reserve must be NULL");
  EXPECT_ACL_ERROR(aclrtCmoAsyncWithDesc(desc, ACL_RT_CMO_TYPE_INVALID, stream_, nullptr),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "only ACL_RT_CMO_TYPE_PREFETCH");
  EXPECT_ACL_ERROR(aclrtCmoSetDesc(desc, dev_, 4097), ACL_ERROR_INVALID_PARAM,
                   "overrun its allocation");
  std::vector<char> host(64);
  EXPECT_ACL_ERROR(aclrtCmoSetDesc(host.data(), dev_, 64), ACL_ERROR_INVALID_PARAM, "cmoDesc");
  EXPECT_ACL_ERROR(aclrtCmoGetDescSize(nullptr), ACL_ERROR_INVALID_PARAM, "size is null");
  ASSERT_ACL_OK(aclrtFree(desc));
}

}  // namespace
}  // namespace cohort::acltest
