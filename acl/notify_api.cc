// Notifies (aclrtCreateNotify ... aclrtNotifyImportByKey): a flag a stream raises
// (record) and another stream waits for and lowers. Its state lives in process memory
// until it is exported; then in a shared segment that importers on this node map.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "acl/entry_names.h"
#include "common/wait.h"

namespace {

using cohort::Deadline;
using cohort::WaitWord;
using cohort::acl::HandleTable;

constexpr std::uint32_t kNotifyMagic = 0xC0A0F1EDu;
constexpr std::uint32_t kNotifyVersion = 1;
constexpr std::size_t kMaxImportPids = 64;
constexpr std::size_t kMinKeyLength = 65;  // CANN's minimum key buffer

// The state of one notify. Holds no pointers: once exported it lives in a segment that
// every process maps at its own address.
struct NotifyBlock {
  std::uint32_t magic;
  std::uint32_t version;
  std::uint32_t id;
  std::atomic<std::uint32_t> raised;     // 1 after a record, 0 after a wait or reset
  WaitWord word;                         // notified when raised
  std::atomic<std::uint32_t> checkPids;  // importers must be in pids (export flag)
  std::atomic<std::uint32_t> pidCount;
  std::atomic<std::int32_t> pids[kMaxImportPids];
};

// One handle: the block in use (its own, the exported copy, or an imported one) and
// what to release with it. Shared by the handle table and the tasks that use it.
class Notify {
 public:
  explicit Notify(std::uint32_t id) : block_(&local_) {
    local_.magic = kNotifyMagic;
    local_.version = kNotifyVersion;
    local_.id = id;
  }
  Notify(NotifyBlock* imported, const rt::MemHandle& handle)
      : block_(imported), shared_(imported), handle_(handle), imported_(true) {}
  ~Notify() {
    if (shared_ == nullptr) return;
    (void)(imported_ ? rt::memClose(shared_) : rt::sharedFree(shared_));
  }

  // A record: raise, then wake whoever sleeps on the block in use.
  void raise() {
    NotifyBlock* b = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      b = block_;
      b->raised.store(1, std::memory_order_release);
    }
    b->word.notifyAll();
  }
  void lower() {
    std::lock_guard<std::mutex> lock(mu_);
    block_->raised.store(0, std::memory_order_release);
  }
  // A wait's look: lowers and answers true if raised; else sleeps up to sleepUs.
  bool takeOrSleep(long sleepUs) {
    NotifyBlock* b = nullptr;
    std::uint32_t seen = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      b = block_;
      std::uint32_t one = 1;
      if (b->raised.compare_exchange_strong(one, 0, std::memory_order_acq_rel)) return true;
      seen = b->word.snapshot();
    }
    if (sleepUs > 0) b->word.sleep(seen, Deadline::after(std::chrono::microseconds(sleepUs)));
    return false;
  }
  std::uint32_t id() {
    std::lock_guard<std::mutex> lock(mu_);
    return block_->id;
  }

  // Moves the state into a shared segment (once) and says who may import it.
  Status exportIt(bool checkPids, rt::MemHandle* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    if (imported_) {
      return Status(ErrorCode::kInvalidArgument,
                    "the notify was imported; only its exporter "
                    "makes keys for it");
    }
    if (shared_ == nullptr) {
      void* memory = nullptr;
      COHORT_RETURN_IF_ERROR(rt::sharedAlloc(sizeof(NotifyBlock), &memory, &handle_));
      auto* b = new (memory) NotifyBlock{};
      b->magic = kNotifyMagic;
      b->version = kNotifyVersion;
      b->id = local_.id;
      b->raised.store(local_.raised.load());
      shared_ = b;
      block_ = b;
      local_.word.notifyAll();  // waits asleep on the old block look again
    }
    block_->checkPids.store(checkPids ? 1 : 0, std::memory_order_release);
    *handle = handle_;
    return Status::Ok();
  }
  Status allowPids(const int32_t* pid, size_t num) {
    std::lock_guard<std::mutex> lock(mu_);
    if (shared_ == nullptr || imported_) {
      return Status(ErrorCode::kInvalidUsage,
                    "the notify is not exported (call aclrtNotifyGetExportKey first)");
    }
    const std::uint32_t have = block_->pidCount.load(std::memory_order_acquire);
    if (have + num > kMaxImportPids) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{} more process ids would exceed the {} a notify admits "
                               "({} already)",
                               num, kMaxImportPids, have);
    }
    for (size_t i = 0; i < num; ++i) block_->pids[have + i].store(pid[i]);
    block_->pidCount.store(have + static_cast<std::uint32_t>(num), std::memory_order_release);
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  NotifyBlock local_{};
  NotifyBlock* block_;  // guarded by mu_
  NotifyBlock* shared_ = nullptr;
  rt::MemHandle handle_{};
  const bool imported_ = false;
};

HandleTable<Notify>& notifies() {
  static auto* table = new HandleTable<Notify>();  // never destroyed: tasks may outlive statics
  return *table;
}

std::atomic<std::uint32_t> gNextNotifyId{0};

Outcome find(const char* fn, aclrtNotify notify, std::shared_ptr<Notify>* out) {
  return notifies().lookup(fn, "notify", notify, "notify", out);
}

bool pidAllowed(const NotifyBlock& b, std::int32_t pid) {
  if (b.checkPids.load(std::memory_order_acquire) == 0) return true;
  const std::uint32_t n =
      std::min<std::uint32_t>(b.pidCount.load(std::memory_order_acquire), kMaxImportPids);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (b.pids[i].load() == pid) return true;
  }
  return false;
}

}  // namespace

aclError aclrtCreateNotify(aclrtNotify* notify, uint64_t flag) {
  const char* fn = "aclrtCreateNotify";
  return apiCall(fn, [&]() -> Outcome {
    if (notify == nullptr) return nullArgument(fn, "notify");
    if (flag != ACL_NOTIFY_DEFAULT && flag != ACL_NOTIFY_DEVICE_USE_ONLY) {
      return invalidArgument(fn,
                             "flag {} is neither ACL_NOTIFY_DEFAULT (0) nor "
                             "ACL_NOTIFY_DEVICE_USE_ONLY (1)",
                             flag);
    }
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    *notify = notifies().add(std::make_shared<Notify>(gNextNotifyId.fetch_add(1)));
    return Status::Ok();
  });
}

aclError aclrtDestroyNotify(aclrtNotify notify) {
  const char* fn = "aclrtDestroyNotify";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Notify> n;
    ACL_RETURN_IF_FAILED(find(fn, notify, &n));
    notifies().remove(notify);  // queued tasks keep theirs
    return Status::Ok();
  });
}

aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream) {
  const char* fn = "aclrtRecordNotify";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Notify> n;
    ACL_RETURN_IF_FAILED(find(fn, notify, &n));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    return rt::launchKernel(toStream(stream), [n](rt::Stream*) {
      n->raise();
      return Status::Ok();
    });
  });
}

aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout) {
  const char* fn = "aclrtWaitAndResetNotify";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Notify> n;
    ACL_RETURN_IF_FAILED(find(fn, notify, &n));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    rt::WaitTask task;
    task.ready = [n](long sleepUs) { return n->takeOrSleep(sleepUs); };
    task.what = fmt::format("a wait for notify {}", n->id());
    task.timeoutMs = timeout > 0 ? static_cast<long>(timeout) * 1000 : -1;
    return rt::launchWait(toStream(stream), std::move(task));
  });
}

aclError aclrtGetNotifyId(aclrtNotify notify, uint32_t* notifyId) {
  const char* fn = "aclrtGetNotifyId";
  return apiCall(fn, [&]() -> Outcome {
    if (notifyId == nullptr) return nullArgument(fn, "notifyId");
    std::shared_ptr<Notify> n;
    ACL_RETURN_IF_FAILED(find(fn, notify, &n));
    *notifyId = n->id();
    return Status::Ok();
  });
}

aclError aclrtNotifyBatchReset(aclrtNotify* list, size_t num) {
  const char* fn = "aclrtNotifyBatchReset";
  return apiCall(fn, [&]() -> Outcome {
    if (list == nullptr) return nullArgument(fn, "notifies");
    if (num == 0) return invalidArgument(fn, "num is 0");
    std::vector<std::shared_ptr<Notify>> found(num);
    for (size_t i = 0; i < num; ++i) {  // all checked before any is reset
      ACL_RETURN_IF_FAILED(find(fn, list[i], &found[i]));
    }
    for (const auto& n : found) n->lower();
    return Status::Ok();
  });
}

aclError aclrtNotifyGetExportKey(aclrtNotify notify, char* key, size_t len, uint64_t flags) {
  const char* fn = "aclrtNotifyGetExportKey";
  return apiCall(fn, [&]() -> Outcome {
    if (key == nullptr) return nullArgument(fn, "key");
    if (len < kMinKeyLength) {
      return invalidArgument(fn, "len {} is below the minimum of {}", len, kMinKeyLength);
    }
    if (flags != ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT &&
        flags != ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION) {
      return invalidArgument(fn,
                             "flags {:#x} is neither ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT nor "
                             "ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION",
                             flags);
    }
    std::shared_ptr<Notify> n;
    ACL_RETURN_IF_FAILED(find(fn, notify, &n));
    rt::MemHandle handle;
    COHORT_RETURN_IF_ERROR(withName(fn, n->exportIt(flags == ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT, &handle)));
    std::string text;
    COHORT_RETURN_IF_ERROR(rt::memHandleToText(handle, &text));
    std::memcpy(key, text.c_str(), text.size() + 1);  // at most 64 characters and the NUL
    return Status::Ok();
  });
}

aclError aclrtNotifySetImportPid(aclrtNotify notify, int32_t* pid, size_t num) {
  const char* fn = "aclrtNotifySetImportPid";
  return apiCall(fn, [&]() -> Outcome {
    if (pid == nullptr) return nullArgument(fn, "pid");
    if (num == 0) return invalidArgument(fn, "num is 0");
    std::shared_ptr<Notify> n;
    ACL_RETURN_IF_FAILED(find(fn, notify, &n));
    COHORT_RETURN_IF_ERROR(withName(fn, n->allowPids(pid, num)));
    return Status::Ok();
  });
}

aclError aclrtNotifySetImportPidInterServer(aclrtNotify notify, aclrtServerPid* serverPids,
                                            size_t num) {
  (void)notify, (void)serverPids, (void)num;
  return apiCall("aclrtNotifySetImportPidInterServer", [&]() -> Outcome {
    return unsupportedCase("aclrtNotifySetImportPidInterServer",
                        "notifies are shared between the processes of one node only");
  });
}

aclError aclrtNotifyImportByKey(aclrtNotify* notify, const char* key, uint64_t flags) {
  const char* fn = "aclrtNotifyImportByKey";
  return apiCall(fn, [&]() -> Outcome {
    if (notify == nullptr) return nullArgument(fn, "notify");
    if (key == nullptr) return nullArgument(fn, "key");
    if (flags != ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT &&
        flags != ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS) {
      return invalidArgument(fn,
                             "flags {:#x} is neither ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT nor "
                             "ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS",
                             flags);
    }
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    rt::MemHandle handle;
    Status st = rt::memHandleFromText(key, &handle);
    if (!st.ok()) return invalidArgument(fn, "\"{}\" is not a notify key", key);
    void* memory = nullptr;
    st = rt::memImport(handle, &memory);
    if (!st.ok()) {
      return cohort::makeError(st.code(),
                               "{}: key \"{}\" does not open a notify (its exporter "
                               "gone?): {}",
                               fn, key, st.message());
    }
    rt::PointerAttributes attributes;
    auto* block = static_cast<NotifyBlock*>(memory);
    const bool fits = rt::pointerGetAttributes(memory, &attributes).ok() &&
                      attributes.allocationSize >= sizeof(NotifyBlock);
    if (!fits || block->magic != kNotifyMagic || block->version != kNotifyVersion) {
      (void)rt::memClose(memory);
      return invalidArgument(fn, "key \"{}\" is not a notify's (of this version)", key);
    }
    const auto self = static_cast<std::int32_t>(getpid());
    if (!pidAllowed(*block, self)) {
      (void)rt::memClose(memory);
      return invalidArgument(fn,
                             "process {} may not import the notify: its exporter did not "
                             "name it with aclrtNotifySetImportPid (nor export with "
                             "ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)",
                             self);
    }
    *notify = notifies().add(std::make_shared<Notify>(block, handle));
    return Status::Ok();
  });
}
