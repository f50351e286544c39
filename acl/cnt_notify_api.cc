// Count notifies (aclrtCntNotifyCreate ... aclrtCntNotifyGetId): a 32-bit count that
// records on one stream change and waits on another test, within the process.
#include <atomic>
#include <chrono>

#include "acl/entry_names.h"
#include "common/wait.h"

namespace {

using cohort::Deadline;
using cohort::WaitWord;
using cohort::acl::HandleTable;

// Shared by the handle table and the tasks that use it; thread-safe (atomics).
struct CntNotify {
  explicit CntNotify(std::uint32_t i) : id(i) {}
  const std::uint32_t id;
  std::atomic<std::uint32_t> count{0};
  WaitWord word;  // notified at every change
};

HandleTable<CntNotify>& cntNotifies() {
  static auto* table = new HandleTable<CntNotify>();  // never destroyed: tasks may outlive it
  return *table;
}

std::atomic<std::uint32_t> gNextCntNotifyId{0};

Outcome find(const char* fn, aclrtCntNotify cntNotify, std::shared_ptr<CntNotify>* out) {
  return cntNotifies().lookup(fn, "cntNotify", cntNotify, "count notify", out);
}

bool satisfies(aclrtCntNotifyWaitMode mode, std::uint32_t count, std::uint32_t value) {
  switch (mode) {
    case ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE:
      return count < value;
    case ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE:
      return count == value;
    case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE:
      return count > value;
    case ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE:
      return count >= value;
    case ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE:
      return (count & value) == value;
  }
  return false;
}

}  // namespace

aclError aclrtCntNotifyCreate(aclrtCntNotify* cntNotify, uint64_t flag) {
  const char* fn = "aclrtCntNotifyCreate";
  return apiCall(fn, [&]() -> Outcome {
    if (cntNotify == nullptr) return nullArgument(fn, "cntNotify");
    if (flag != 0) return invalidArgument(fn, "flag {} is reserved and must be 0", flag);
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    *cntNotify = cntNotifies().add(std::make_shared<CntNotify>(gNextCntNotifyId.fetch_add(1)));
    return Status::Ok();
  });
}

aclError aclrtCntNotifyDestroy(aclrtCntNotify cntNotify) {
  const char* fn = "aclrtCntNotifyDestroy";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CntNotify> n;
    ACL_RETURN_IF_FAILED(find(fn, cntNotify, &n));
    cntNotifies().remove(cntNotify);  // queued tasks keep theirs
    return Status::Ok();
  });
}

aclError aclrtCntNotifyRecord(aclrtCntNotify cntNotify, aclrtStream stream,
                              aclrtCntNotifyRecordInfo* info) {
  const char* fn = "aclrtCntNotifyRecord";
  return apiCall(fn, [&]() -> Outcome {
    if (info == nullptr) return nullArgument(fn, "info");
    const aclrtCntNotifyRecordMode mode = info->mode;
    if (mode != ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE &&
        mode != ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE && mode != ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE &&
        mode != ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE) {
      return invalidArgument(fn, "mode {} is not an aclrtCntNotifyRecordMode (0, 1, 2 or 4)",
                             static_cast<int>(mode));
    }
    std::shared_ptr<CntNotify> n;
    ACL_RETURN_IF_FAILED(find(fn, cntNotify, &n));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    const std::uint32_t value = info->value;
    return rt::launchKernel(toStream(stream), [n, mode, value](rt::Stream*) {
      switch (mode) {
        case ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE:
          n->count.store(value);
          break;
        case ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE:
          n->count.fetch_add(value);
          break;
        case ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE:
          n->count.fetch_or(value);
          break;
        case ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE:
          n->count.fetch_and(value);
          break;
      }
      n->word.notifyAll();
      return Status::Ok();
    });
  });
}

aclError aclrtCntNotifyWaitWithTimeout(aclrtCntNotify cntNotify, aclrtStream stream,
                                       aclrtCntNotifyWaitInfo* info) {
  const char* fn = "aclrtCntNotifyWaitWithTimeout";
  return apiCall(fn, [&]() -> Outcome {
    if (info == nullptr) return nullArgument(fn, "info");
    const aclrtCntNotifyWaitMode mode = info->mode;
    if (static_cast<int>(mode) < ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE ||
        static_cast<int>(mode) > ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE) {
      return invalidArgument(fn, "mode {} is not an aclrtCntNotifyWaitMode (0..4)",
                             static_cast<int>(mode));
    }
    if (info->isClear > 1)
      return invalidArgument(fn, "isClear {} is neither 0 nor 1", info->isClear);
    std::shared_ptr<CntNotify> n;
    ACL_RETURN_IF_FAILED(find(fn, cntNotify, &n));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    const std::uint32_t value = info->value;
    const bool clear = info->isClear == 1;
    rt::WaitTask task;
    task.ready = [n, mode, value, clear](long sleepUs) {
      const std::uint32_t seen = n->word.snapshot();
      std::uint32_t count = n->count.load(std::memory_order_acquire);
      while (satisfies(mode, count, value)) {
        // Clear only the count that satisfied it: a record in between is not lost.
        if (!clear || n->count.compare_exchange_weak(count, 0, std::memory_order_acq_rel)) {
          return true;
        }
      }
      if (sleepUs > 0) n->word.sleep(seen, Deadline::after(std::chrono::microseconds(sleepUs)));
      return false;
    };
    task.what = fmt::format("a wait for count notify {}", n->id);
    task.timeoutMs = info->timeout > 0 ? static_cast<long>(info->timeout) * 1000 : -1;
    return rt::launchWait(toStream(stream), std::move(task));
  });
}

aclError aclrtCntNotifyReset(aclrtCntNotify cntNotify, aclrtStream stream) {
  const char* fn = "aclrtCntNotifyReset";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<CntNotify> n;
    ACL_RETURN_IF_FAILED(find(fn, cntNotify, &n));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return rt::launchKernel(toStream(stream), [n](rt::Stream*) {
      n->count.store(0);
      n->word.notifyAll();
      return Status::Ok();
    });
  });
}

aclError aclrtCntNotifyGetId(aclrtCntNotify cntNotify, uint32_t* notifyId) {
  const char* fn = "aclrtCntNotifyGetId";
  return apiCall(fn, [&]() -> Outcome {
    if (notifyId == nullptr) return nullArgument(fn, "notifyId");
    std::shared_ptr<CntNotify> n;
    ACL_RETURN_IF_FAILED(find(fn, cntNotify, &n));
    *notifyId = n->id;
    return Status::Ok();
  });
}
