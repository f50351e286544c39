// Notifies and count notifies within one process: ordering across streams, resets,
// timeouts, export keys and whitelists (tests/acl/acl_ipc_test.cc crosses processes).
#include <unistd.h>

#include <cstring>
#include <set>
#include <vector>

#include "acl_stream_family_util.h"

namespace cohort::acltest {
namespace {

using AclNotifyTest = AclDevice0StreamPairTest;

TEST_F(AclNotifyTest, RecordReleasesAWaitOnAnotherStreamAndTheWaitResets) {
  aclrtNotify notify = nullptr;
  ASSERT_ACL_OK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
  OrderLog log;
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(notify, consumer_, 5));
  log.mark(consumer_, 2);
  Gate gate;
  gate.hold(producer_);
  log.mark(producer_, 1);
  ASSERT_ACL_OK(aclrtRecordNotify(notify, producer_));
  sleepMs(30);
  EXPECT_TRUE(log.marks().empty());  // the consumer waits for the record
  gate.open();
  ASSERT_ACL_OK(aclrtSynchronizeStream(consumer_));
  EXPECT_EQ(log.marks(), (std::vector<int>{1, 2}));
  // The wait lowered it: another wait needs another record (COHORT_EXEC_TIMEOUT is 1 s).
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(notify, consumer_, 0));
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(consumer_), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                   "did not complete within the task wait timeout (1000 ms");
  ASSERT_ACL_OK(aclrtDestroyNotify(notify));
}

TEST_F(AclNotifyTest, RecordBeforeWaitAndBatchReset) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  aclrtNotify notifies[3] = {};
  for (auto& n : notifies) ASSERT_ACL_OK(aclrtCreateNotify(&n, ACL_NOTIFY_DEVICE_USE_ONLY));
  for (auto n : notifies) ASSERT_ACL_OK(aclrtRecordNotify(n, stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  // Raised already: the wait passes at once.
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(notifies[0], stream, 1));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  // Lowered by the batch: a wait times out after its own 1 s.
  ASSERT_ACL_OK(aclrtNotifyBatchReset(notifies + 1, 2));
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(notifies[2], stream, 1));
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                   "within its timeout of 1000 ms");
  std::set<uint32_t> ids;
  for (auto n : notifies) {
    uint32_t id = 0;
    ASSERT_ACL_OK(aclrtGetNotifyId(n, &id));
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 3u);
  aclrtNotify withDead[2] = {notifies[0], notifies[1]};
  ASSERT_ACL_OK(aclrtDestroyNotify(notifies[1]));
  EXPECT_ACL_ERROR(aclrtNotifyBatchReset(withDead, 2), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live notify");
  EXPECT_ACL_ERROR(aclrtNotifyBatchReset(nullptr, 2), ACL_ERROR_INVALID_PARAM, "notifies is null");
  EXPECT_ACL_ERROR(aclrtNotifyBatchReset(withDead, 0), ACL_ERROR_INVALID_PARAM, "num is 0");
  ASSERT_ACL_OK(aclrtDestroyNotify(notifies[0]));
  ASSERT_ACL_OK(aclrtDestroyNotify(notifies[2]));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclNotifyTest, BadArgumentsAndDeadHandles) {
  aclrtNotify notify = nullptr;
  EXPECT_ACL_ERROR(aclrtCreateNotify(nullptr, 0), ACL_ERROR_INVALID_PARAM, "notify is null");
  EXPECT_ACL_ERROR(aclrtCreateNotify(&notify, 2), ACL_ERROR_INVALID_PARAM, "flag 2 is neither");
  ASSERT_ACL_OK(aclrtCreateNotify(&notify, 0));
  ASSERT_ACL_OK(aclrtDestroyNotify(notify));
  uint32_t id = 0;
  EXPECT_ACL_ERROR(aclrtDestroyNotify(notify), ACL_ERROR_RT_INVALID_HANDLE, "is not a live notify");
  EXPECT_ACL_ERROR(aclrtRecordNotify(notify, nullptr), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live notify");
  EXPECT_ACL_ERROR(aclrtWaitAndResetNotify(nullptr, nullptr, 0), ACL_ERROR_INVALID_PARAM,
                   "notify is null");
  EXPECT_ACL_ERROR(aclrtGetNotifyId(notify, &id), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live notify");
  ASSERT_ACL_OK(aclrtResetDevice(0));
  producer_ = consumer_ = nullptr;  // the reset destroyed them
  EXPECT_ACL_ERROR(aclrtCreateNotify(&notify, 0), ACL_ERROR_RT_CONTEXT_NULL, "no current device");
}

TEST_F(AclNotifyTest, ExportKeysAndWhitelists) {
  aclrtNotify notify = nullptr;
  ASSERT_ACL_OK(aclrtCreateNotify(&notify, 0));
  char key[65] = {};
  char shortKey[64] = {};
  int32_t self = static_cast<int32_t>(getpid());
  EXPECT_ACL_ERROR(aclrtNotifySetImportPid(notify, &self, 1), ACL_ERROR_INVALID_PARAM,
                   "the notify is not exported");
  EXPECT_ACL_ERROR(aclrtNotifyGetExportKey(notify, shortKey, sizeof(shortKey), 0),
                   ACL_ERROR_INVALID_PARAM, "len 64 is below the minimum of 65");
  EXPECT_ACL_ERROR(aclrtNotifyGetExportKey(notify, key, sizeof(key), 1), ACL_ERROR_INVALID_PARAM,
                   "flags 0x1 is neither");
  ASSERT_ACL_OK(
      aclrtNotifyGetExportKey(notify, key, sizeof(key), ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT));
  EXPECT_GT(std::strlen(key), 0u);
  EXPECT_LE(std::strlen(key), 64u);
  // Whitelisted processes only: this one is not, yet.
  aclrtNotify imported = nullptr;
  EXPECT_ACL_ERROR(aclrtNotifyImportByKey(&imported, key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT),
                   ACL_ERROR_INVALID_PARAM, "may not import the notify");
  ASSERT_ACL_OK(aclrtNotifySetImportPid(notify, &self, 1));
  ASSERT_ACL_OK(
      aclrtNotifyImportByKey(&imported, key, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS));
  uint32_t id = 0, importedId = 1;
  ASSERT_ACL_OK(aclrtGetNotifyId(notify, &id));
  ASSERT_ACL_OK(aclrtGetNotifyId(imported, &importedId));
  EXPECT_EQ(id, importedId);
  // The imported handle shares the state: a record on it releases a wait on the
  // exported one, and the other way round.
  aclrtStream a = nullptr, b = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&a));
  ASSERT_ACL_OK(aclrtCreateStream(&b));
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(notify, b, 2));
  ASSERT_ACL_OK(aclrtRecordNotify(imported, a));
  ASSERT_ACL_OK(aclrtSynchronizeStream(b));
  ASSERT_ACL_OK(aclrtRecordNotify(notify, a));
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(imported, b, 2));
  ASSERT_ACL_OK(aclrtSynchronizeStream(b));
  // The pid list is bounded.
  std::vector<int32_t> many(64, 1);
  EXPECT_ACL_ERROR(aclrtNotifySetImportPid(notify, many.data(), many.size()),
                   ACL_ERROR_INVALID_PARAM, "would exceed the 64 a notify admits");
  EXPECT_ACL_ERROR(aclrtNotifySetImportPid(imported, &self, 1), ACL_ERROR_INVALID_PARAM,
                   "the notify is not exported");
  aclrtServerPid serverPid = {0, &self, 1};
  EXPECT_ACL_ERROR(aclrtNotifySetImportPidInterServer(notify, &serverPid, 1),
                   ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "one node only");
  EXPECT_ACL_ERROR(aclrtNotifyImportByKey(&imported, "not a key", 0), ACL_ERROR_INVALID_PARAM,
                   "is not a notify key");
  EXPECT_ACL_ERROR(aclrtNotifyImportByKey(&imported, key, 5), ACL_ERROR_INVALID_PARAM,
                   "flags 0x5 is neither");
  ASSERT_ACL_OK(aclrtDestroyNotify(imported));
  ASSERT_ACL_OK(aclrtDestroyNotify(notify));
  ASSERT_ACL_OK(aclrtDestroyStream(a));
  ASSERT_ACL_OK(aclrtDestroyStream(b));
}

TEST_F(AclNotifyTest, DisabledValidationAdmitsAnyProcess) {
  aclrtNotify notify = nullptr, imported = nullptr;
  ASSERT_ACL_OK(aclrtCreateNotify(&notify, 0));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  ASSERT_ACL_OK(aclrtRecordNotify(notify, stream));  // raised before export: kept
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  char key[65] = {};
  ASSERT_ACL_OK(aclrtNotifyGetExportKey(notify, key, sizeof(key),
                                        ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION));
  ASSERT_ACL_OK(aclrtNotifyImportByKey(&imported, key, 0));
  ASSERT_ACL_OK(aclrtWaitAndResetNotify(imported, stream, 1));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  ASSERT_ACL_OK(aclrtDestroyNotify(imported));
  ASSERT_ACL_OK(aclrtDestroyNotify(notify));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

using AclCntNotifyTest = AclDevice0StreamPairTest;

// Records `mode value` on one stream, then a wait that must pass on the next.
void recordThenWait(aclrtCntNotify n, aclrtStream stream, aclrtCntNotifyRecordMode mode,
                    uint32_t value, aclrtCntNotifyWaitMode waitMode, uint32_t waitValue) {
  aclrtCntNotifyRecordInfo record = {mode, value};
  ASSERT_ACL_OK(aclrtCntNotifyRecord(n, stream, &record));
  aclrtCntNotifyWaitInfo wait = {waitMode, waitValue, 1, 0, {0, 0, 0}};
  ASSERT_ACL_OK(aclrtCntNotifyWaitWithTimeout(n, stream, &wait));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
}

TEST_F(AclCntNotifyTest, RecordModesChangeTheCountThatWaitsTest) {
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  aclrtCntNotify n = nullptr;
  ASSERT_ACL_OK(aclrtCntNotifyCreate(&n, 0));
  recordThenWait(n, stream, ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 5,
                 ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 5);
  recordThenWait(n, stream, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 3, ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE,
                 8);
  recordThenWait(n, stream, ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE, 0x30,
                 ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE, 0x38);  // 0x38
  recordThenWait(n, stream, ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE, 0x18,
                 ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE, 0x18);
  recordThenWait(n, stream, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 0,
                 ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 0x17);
  recordThenWait(n, stream, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 0,
                 ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 0x18);
  recordThenWait(n, stream, ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 0, ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE,
                 0x19);
  // A condition that does not hold times out after the wait's own second.
  aclrtCntNotifyWaitInfo wait = {ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE, 0x18, 1, 0, {0, 0, 0}};
  ASSERT_ACL_OK(aclrtCntNotifyWaitWithTimeout(n, stream, &wait));
  EXPECT_ACL_ERROR(aclrtSynchronizeStream(stream), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                   "a wait for count notify");
  ASSERT_ACL_OK(aclrtCntNotifyDestroy(n));
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
}

TEST_F(AclCntNotifyTest, WaitOnAnotherStreamClearsAndResetZeroes) {
  aclrtCntNotify n = nullptr;
  ASSERT_ACL_OK(aclrtCntNotifyCreate(&n, 0));
  OrderLog log;
  // Three producers' worth of adds: the consumer waits for all three, then clears.
  aclrtCntNotifyWaitInfo wait = {ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE, 3, 0, 1, {0, 0, 0}};
  ASSERT_ACL_OK(aclrtCntNotifyWaitWithTimeout(n, consumer_, &wait));
  log.mark(consumer_, 100);
  aclrtCntNotifyRecordInfo add = {ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE, 1};
  for (int i = 0; i < 3; ++i) {
    log.mark(producer_, i);
    ASSERT_ACL_OK(aclrtCntNotifyRecord(n, producer_, &add));
  }
  ASSERT_ACL_OK(aclrtSynchronizeStream(consumer_));
  EXPECT_EQ(log.marks(), (std::vector<int>{0, 1, 2, 100}));
  // Cleared: count 0 satisfies LESS 1.
  aclrtCntNotifyWaitInfo zero = {ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 1, 1, 0, {0, 0, 0}};
  ASSERT_ACL_OK(aclrtCntNotifyWaitWithTimeout(n, consumer_, &zero));
  ASSERT_ACL_OK(aclrtSynchronizeStream(consumer_));
  // Reset in stream order.
  aclrtCntNotifyRecordInfo set = {ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE, 42};
  ASSERT_ACL_OK(aclrtCntNotifyRecord(n, producer_, &set));
  ASSERT_ACL_OK(aclrtCntNotifyReset(n, producer_));
  ASSERT_ACL_OK(aclrtCntNotifyWaitWithTimeout(n, producer_, &zero));
  ASSERT_ACL_OK(aclrtSynchronizeStream(producer_));
  uint32_t id = 99;
  ASSERT_ACL_OK(aclrtCntNotifyGetId(n, &id));
  aclrtCntNotify other = nullptr;
  ASSERT_ACL_OK(aclrtCntNotifyCreate(&other, 0));
  uint32_t otherId = id;
  ASSERT_ACL_OK(aclrtCntNotifyGetId(other, &otherId));
  EXPECT_NE(id, otherId);
  ASSERT_ACL_OK(aclrtCntNotifyDestroy(other));
  ASSERT_ACL_OK(aclrtCntNotifyDestroy(n));
}

TEST_F(AclCntNotifyTest, BadArgumentsAndDeadHandles) {
  aclrtCntNotify n = nullptr;
  EXPECT_ACL_ERROR(aclrtCntNotifyCreate(&n, 1), ACL_ERROR_INVALID_PARAM, "flag 1 is reserved");
  EXPECT_ACL_ERROR(aclrtCntNotifyCreate(nullptr, 0), ACL_ERROR_INVALID_PARAM, "cntNotify is null");
  ASSERT_ACL_OK(aclrtCntNotifyCreate(&n, 0));
  aclrtCntNotifyRecordInfo badRecord = {static_cast<aclrtCntNotifyRecordMode>(3), 1};
  EXPECT_ACL_ERROR(aclrtCntNotifyRecord(n, nullptr, &badRecord), ACL_ERROR_INVALID_PARAM,
                   "mode 3 is not an aclrtCntNotifyRecordMode");
  EXPECT_ACL_ERROR(aclrtCntNotifyRecord(n, nullptr, nullptr), ACL_ERROR_INVALID_PARAM,
                   "info is null");
  aclrtCntNotifyWaitInfo badWait = {static_cast<aclrtCntNotifyWaitMode>(5), 1, 0, 0, {0, 0, 0}};
  EXPECT_ACL_ERROR(aclrtCntNotifyWaitWithTimeout(n, nullptr, &badWait), ACL_ERROR_INVALID_PARAM,
                   "mode 5 is not an aclrtCntNotifyWaitMode");
  aclrtCntNotifyWaitInfo badClear = {ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE, 1, 0, 2, {0, 0, 0}};
  EXPECT_ACL_ERROR(aclrtCntNotifyWaitWithTimeout(n, nullptr, &badClear), ACL_ERROR_INVALID_PARAM,
                   "isClear 2 is neither");
  ASSERT_ACL_OK(aclrtCntNotifyDestroy(n));
  uint32_t id = 0;
  EXPECT_ACL_ERROR(aclrtCntNotifyGetId(n, &id), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live count notify");
  EXPECT_ACL_ERROR(aclrtCntNotifyReset(n, nullptr), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live count notify");
  EXPECT_ACL_ERROR(aclrtCntNotifyDestroy(n), ACL_ERROR_RT_INVALID_HANDLE,
                   "is not a live count notify");
}

}  // namespace
}  // namespace cohort::acltest
