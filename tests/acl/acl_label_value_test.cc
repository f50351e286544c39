// Labels (made, listed, checked; their jumps: acl_build_test.cc) and values written
// and awaited in device memory by streams.
#include <cstdint>
#include <thread>
#include <vector>

#include "acl_stream_family_util.h"

namespace cohort::acltest {
namespace {

using AclLabelTest = AclDevice0Test;

TEST_F(AclLabelTest, LabelsAndListsAreMadeAndChecked) {
  aclrtLabel labels[3] = {};
  for (auto& l : labels) ASSERT_ACL_OK(aclrtCreateLabel(&l));
  EXPECT_NE(labels[0], labels[1]);
  aclrtLabelList list = nullptr;
  ASSERT_ACL_OK(aclrtCreateLabelList(labels, 3, &list));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  // Only on a stream bound to a model being built.
  EXPECT_ACL_ERROR(aclrtSetLabel(labels[0], stream), ACL_ERROR_INVALID_PARAM,
                   "is not bound to a model being built");
  void* index = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&index, 4, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_ACL_ERROR(aclrtSwitchLabelByIndex(index, 3, list, stream), ACL_ERROR_INVALID_PARAM,
                   "is not bound to a model being built");
  EXPECT_ACL_ERROR(aclrtSwitchLabelByIndex(index, 4, list, stream), ACL_ERROR_INVALID_PARAM,
                   "maxValue 4 is not in [1, 3]");
  EXPECT_ACL_ERROR(aclrtSwitchLabelByIndex(nullptr, 3, list, stream), ACL_ERROR_INVALID_PARAM,
                   "ptr is null");
  ASSERT_ACL_OK(aclrtDestroyLabelList(list));
  EXPECT_ACL_ERROR(aclrtDestroyLabelList(list), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live label list");
  EXPECT_ACL_ERROR(aclrtSwitchLabelByIndex(index, 3, list, stream), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live label list");
  ASSERT_ACL_OK(aclrtDestroyLabel(labels[1]));
  EXPECT_ACL_ERROR(aclrtCreateLabelList(labels, 3, &list), ACL_ERROR_RT_INVALID_HANDLE,
                   "labels[1]");
  EXPECT_ACL_ERROR(aclrtDestroyLabel(labels[1]), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live label");
  EXPECT_ACL_ERROR(aclrtSetLabel(labels[1], stream), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live label");
  EXPECT_ACL_ERROR(aclrtCreateLabelList(labels, 0, &list), ACL_ERROR_INVALID_PARAM,
                   "num 0 is out of range (0, 65535]");
  EXPECT_ACL_ERROR(aclrtCreateLabelList(labels, 65536, &list), ACL_ERROR_INVALID_PARAM,
                   "num 65536 is out of range");
  EXPECT_ACL_ERROR(aclrtCreateLabelList(nullptr, 1, &list), ACL_ERROR_INVALID_PARAM,
                   "labels is null");
  EXPECT_ACL_ERROR(aclrtCreateLabelList(labels, 1, nullptr), ACL_ERROR_INVALID_PARAM,
                   "labelList is null");
  EXPECT_ACL_ERROR(aclrtCreateLabel(nullptr), ACL_ERROR_INVALID_PARAM, "label is null");
  ASSERT_ACL_OK(aclrtDestroyLabel(labels[0]));
  ASSERT_ACL_OK(aclrtDestroyLabel(labels[2]));
  ASSERT_ACL_OK(aclrtFree(index));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

class AclValueTest : public AclDevice0Test {
 protected:
  void SetUp() override {
    AclDevice0Test::SetUp();
    ASSERT_ACL_OK(aclrtMalloc(&word_, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    ASSERT_ACL_OK(aclrtMemset(word_, 64, 0, 64));
    ASSERT_ACL_OK(aclrtCreateStream(&a_));
    ASSERT_ACL_OK(aclrtCreateStream(&b_));
  }
  uint64_t read() {
    uint64_t v = 0;
    EXPECT_EQ(aclrtMemcpy(&v, 8, word_, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return v;
  }
  void* word_ = nullptr;
  aclrtStream a_ = nullptr, b_ = nullptr;
};

TEST_F(AclValueTest, WriteStoresTheValueInStreamOrder) {
  Gate gate;
  gate.hold(a_);
  ASSERT_ACL_OK(aclrtValueWrite(word_, 0x1122334455667788ull, 0, a_));
  sleepMs(10);
  EXPECT_EQ(read(), 0u);  // not yet: behind the held task
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(a_));
  EXPECT_EQ(read(), 0x1122334455667788ull);
}

TEST_F(AclValueTest, WaitIsReleasedByAWriteOnAnotherStream) {
  OrderLog log;
  ASSERT_ACL_OK(aclrtValueWait(word_, 7, ACL_STREAM_WAIT_VALUE_EQ, b_));
  log.mark(b_, 2);
  Gate gate;
  gate.hold(a_);
  log.mark(a_, 1);
  ASSERT_ACL_OK(aclrtValueWrite(word_, 7, 0, a_));
  sleepMs(30);
  EXPECT_TRUE(log.marks().empty());
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(b_));
  EXPECT_EQ(log.marks(), (std::vector<int>{1, 2}));
}

TEST_F(AclValueTest, EveryConditionHoldsAndFailsAsDocumented) {
  struct Case {
    uint32_t flag;
    uint64_t stored, value;
    bool holds;
  };
  const Case cases[] = {
      {ACL_STREAM_WAIT_VALUE_GEQ, 10, 10, true},
      {ACL_STREAM_WAIT_VALUE_GEQ, 11, 10, true},
      {ACL_STREAM_WAIT_VALUE_GEQ, 9, 10, false},
      {ACL_STREAM_WAIT_VALUE_GEQ, 1, ~0ull, true},  // signed difference: 1 - (-1) >= 0
      {ACL_STREAM_WAIT_VALUE_EQ, 5, 5, true},
      {ACL_STREAM_WAIT_VALUE_EQ, 5, 6, false},
      {ACL_STREAM_WAIT_VALUE_AND, 0b1010, 0b0010, true},
      {ACL_STREAM_WAIT_VALUE_AND, 0b1010, 0b0101, false},
      {ACL_STREAM_WAIT_VALUE_NOR, 0b1010, 0b0101, true},
      {ACL_STREAM_WAIT_VALUE_NOR, ~0ull, 0, false},
  };
  for (const Case& c : cases) {
    ASSERT_ACL_OK(aclrtValueWrite(word_, c.stored, 0, a_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(a_));
    ASSERT_ACL_OK(aclrtValueWait(word_, c.value, c.flag, b_));
    if (c.holds) {
      EXPECT_EQ(aclrtSynchronizeStream(b_), ACL_SUCCESS) << c.flag << " " << c.stored;
    } else {
      // COHORT_EXEC_TIMEOUT (1 s) bounds it; the error names it.
      EXPECT_ACL_ERROR(aclrtSynchronizeStream(b_), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                       "COHORT_EXEC_TIMEOUT");
      ASSERT_ACL_OK(aclrtStreamAbort(b_));  // clears the stream's error
    }
  }
}

TEST_F(AclValueTest, TheTaskWaitTimeoutBoundsAWait) {
  // What aclrtSetOpExecuteTimeOut sets; -1 restores COHORT_EXEC_TIMEOUT.
  runtime::setTaskWaitTimeout(200);
  ASSERT_ACL_OK(aclrtValueWait(word_, 1, ACL_STREAM_WAIT_VALUE_EQ, b_));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(b_), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                   "the task wait timeout (200 ms");
  runtime::setTaskWaitTimeout(-1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
}

TEST_F(AclValueTest, HostWritesReleaseAWait) {
  ASSERT_ACL_OK(aclrtValueWait(word_, 3, ACL_STREAM_WAIT_VALUE_GEQ, b_));
  std::thread writer([this] {
    sleepMs(20);
    __atomic_store_n(static_cast<uint64_t*>(word_), 3, __ATOMIC_SEQ_CST);
  });
  ASSERT_ACL_OK(aclrtSynchronizeStream(b_));
  writer.join();
}

TEST_F(AclValueTest, AddressesFlagsAndStreamsAreChecked) {
  uint64_t host = 0;
  char* misaligned = static_cast<char*>(word_) + 4;
  EXPECT_ACL_ERROR(aclrtValueWrite(&host, 1, 0, a_), ACL_ERROR_INVALID_PARAM,
                   "is not device memory");
  EXPECT_ACL_ERROR(aclrtValueWait(&host, 1, 0, a_), ACL_ERROR_INVALID_PARAM,
                   "is not device memory");
  EXPECT_ACL_ERROR(aclrtValueWrite(misaligned, 1, 0, a_), ACL_ERROR_INVALID_PARAM,
                   "is not 8-byte aligned");
  EXPECT_ACL_ERROR(aclrtValueWrite(static_cast<char*>(word_) + 64, 1, 0, a_),
                   ACL_ERROR_INVALID_PARAM, "");
  EXPECT_ACL_ERROR(aclrtValueWrite(nullptr, 1, 0, a_), ACL_ERROR_INVALID_PARAM, "devAddr is null");
  EXPECT_ACL_ERROR(aclrtValueWrite(word_, 1, 1, a_), ACL_ERROR_INVALID_PARAM, "flag 1 is reserved");
  EXPECT_ACL_ERROR(aclrtValueWait(word_, 1, 4, a_), ACL_ERROR_INVALID_PARAM,
                   "flag 4 is not an ACL_STREAM_WAIT_VALUE_* condition");
  int dead = 0;
  EXPECT_ACL_ERROR(aclrtValueWrite(word_, 1, 0, &dead), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live stream");
  // The default stream.
  ASSERT_ACL_OK(aclrtValueWrite(word_, 9, 0, nullptr));
  ASSERT_ACL_OK(aclrtValueWait(word_, 9, ACL_STREAM_WAIT_VALUE_EQ, nullptr));
  ASSERT_ACL_OK(aclrtSynchronizeStream(nullptr));
  EXPECT_EQ(read(), 9u);
}

}  // namespace
}  // namespace cohort::acltest
