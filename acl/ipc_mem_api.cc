// Device memory shared between the processes of a node by key (aclrtIpcMem*).
//
// A key names a small record in shared memory that the exporter owns: the exported
// buffer's runtime handle, the range within it, whether importers must be whitelisted,
// and the whitelist. The key is the record's handle as text plus a random nonce, so a
// stale key (its record freed, its descriptor number reused) is told apart. An importer
// maps the record, checks its own pid against the whitelist, and maps the buffer: both
// processes then address the same memory.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <random>
#include <string>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/memory_util.h"
#include "acl/unsupported.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

constexpr std::size_t kKeyLength = 65;  // what CANN asks for: 64 characters and a NUL
constexpr std::size_t kMaxPids = 1000;
constexpr std::uint64_t kRecordMagic = 0xC0401EC0ABD5EED1ull;

// Lives in shared memory, written by the exporter and read by importers; the atomics
// are lock-free, so they work across processes.
struct KeyRecord {
  std::uint64_t magic;
  std::uint64_t nonce;
  std::atomic<std::uint32_t> open;  // 1 while exported
  std::uint32_t checkPid;           // importers must be on the whitelist
  rt::MemHandle buffer;             // the allocation the range lies in
  std::uint64_t offset;             // of the range in the allocation
  std::uint64_t size;
  std::int32_t physicalDevice;      // of the exporter's device, on the node
  std::atomic<std::uint32_t> link;  // aclrtIpcMemSetAttr: recorded only
  std::atomic<std::uint32_t> pidCount;
  std::int32_t pids[kMaxPids];
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "shared atomics");

struct Exported {
  KeyRecord* record;
};
struct Imported {
  char* user;  // what the program got
  void* base;  // the mapping, for memClose
  int count;   // imports of the key not yet closed
};

// This process's keys. Guarded by gIpcMu; used until exit.
std::mutex gIpcMu;
std::map<std::string, Exported>& exported() {
  static auto* table = new std::map<std::string, Exported>();
  return *table;
}
std::map<std::string, Imported>& imported() {
  static auto* table = new std::map<std::string, Imported>();
  return *table;
}

Outcome badKey(const char* fn, const char* key, const char* why) {
  return cohort::makeError(ErrorCode::kInvalidArgument, "{}: key '{}' {}", fn, key, why);
}

// The record handle and nonce a key names.
bool parseKey(const std::string& key, rt::MemHandle* handle, std::uint64_t* nonce) {
  const std::size_t slash = key.rfind('/');
  if (slash == std::string::npos || slash + 17 != key.size()) return false;
  char* end = nullptr;
  *nonce = std::strtoull(key.c_str() + slash + 1, &end, 16);
  if (end != key.c_str() + key.size()) return false;
  return rt::memHandleFromText(key.substr(0, slash), handle).ok();
}

// Maps the record a key names if it is open; the caller memClose()s it.
Outcome openRecord(const char* fn, const char* key, KeyRecord** out) {
  rt::MemHandle handle;
  std::uint64_t nonce = 0;
  if (!parseKey(key, &handle, &nonce))
    return badKey(fn, key, "is not a key of aclrtIpcMemGetExportKey");
  void* p = nullptr;
  if (!rt::memImport(handle, &p).ok()) {
    return badKey(fn, key, "is not exported (closed, or its process has exited)");
  }
  auto* record = static_cast<KeyRecord*>(p);
  if (record->magic != kRecordMagic || record->nonce != nonce ||
      record->open.load(std::memory_order_acquire) != 1) {
    (void)rt::memClose(p);
    return badKey(fn, key, "is not exported (closed by its exporter)");
  }
  *out = record;
  return Status::Ok();
}

bool whitelisted(const KeyRecord& record, std::int32_t pid) {
  const std::uint32_t n = std::min<std::uint32_t>(record.pidCount.load(std::memory_order_acquire),
                                                  static_cast<std::uint32_t>(kMaxPids));
  return std::find(record.pids, record.pids + n, pid) != record.pids + n;
}

// The logical device of this process with the given physical id, or -1.
int logicalDevice(int physical) {
  int count = 0;
  if (!rt::getDeviceCount(&count).ok()) return -1;
  for (int d = 0; d < count; ++d) {
    rt::DeviceInfo info;
    if (rt::getDeviceInfo(d, &info).ok() && info.physicalId == physical) return d;
  }
  return -1;
}

// A key of this process's exports (gIpcMu held).
Outcome exportedLocked(const char* fn, const char* key, KeyRecord** record) {
  if (key == nullptr) return cohort::makeError(ErrorCode::kInvalidArgument, "{}: key is null", fn);
  auto it = exported().find(key);
  if (it == exported().end()) return badKey(fn, key, "was not exported by this process");
  *record = it->second.record;
  return Status::Ok();
}

}  // namespace

aclError aclrtIpcMemGetExportKey(void* devPtr, size_t size, char* key, size_t len, uint64_t flags) {
  return apiCall("aclrtIpcMemGetExportKey", [&]() -> Outcome {
    const char* fn = "aclrtIpcMemGetExportKey";
    if (devPtr == nullptr || key == nullptr || size == 0 || len < kKeyLength ||
        flags > ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: needs devPtr, size > 0, key with len >= {} (got {}) and flags "
                               "0 or 1 (got {})",
                               fn, kKeyLength, len, flags);
    }
    rt::PointerAttributes a;
    COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(devPtr, &a));
    if (!a.isDevice || a.device < 0 || a.isMapped || a.isManaged || a.allocationBase == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: {} is not memory of a live aclrtMalloc allocation of this "
                               "process",
                               fn, devPtr);
    }
    const std::size_t offset =
        static_cast<std::size_t>(static_cast<char*>(devPtr) - static_cast<char*>(a.allocationBase));
    if (size > a.allocationSize - offset) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: {} bytes at {} overrun its allocation ({} bytes at {})", fn,
                               size, devPtr, a.allocationSize, a.allocationBase);
    }
    rt::MemHandle buffer;
    COHORT_RETURN_IF_ERROR(rt::memExport(a.allocationBase, &buffer));
    rt::DeviceInfo device;
    COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(a.device, &device));
    void* p = nullptr;
    rt::MemHandle handle;
    COHORT_RETURN_IF_ERROR(rt::sharedAlloc(sizeof(KeyRecord), &p, &handle));
    std::string text;
    Status s = rt::memHandleToText(handle, &text);
    const std::uint64_t nonce =
        (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
    char nonceText[20];
    std::snprintf(nonceText, sizeof(nonceText), "/%016" PRIx64, nonce);
    text += nonceText;
    if (s.ok() && text.size() >= kKeyLength) {
      s = cohort::makeError(ErrorCode::kInternal, "{}: the key '{}' is too long", fn, text);
    }
    if (!s.ok()) {
      (void)rt::sharedFree(p);
      return s;
    }
    auto* record = new (p) KeyRecord();  // zeroed memory: every other field starts at 0
    record->magic = kRecordMagic;
    record->nonce = nonce;
    record->checkPid = flags == ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT ? 1 : 0;
    record->buffer = buffer;
    record->offset = offset;
    record->size = size;
    record->physicalDevice = device.physicalId;
    record->open.store(1, std::memory_order_release);
    {
      std::lock_guard<std::mutex> lock(gIpcMu);
      exported()[text] = Exported{record};
    }
    std::memcpy(key, text.c_str(), text.size() + 1);
    return Status::Ok();
  });
}

aclError aclrtIpcMemSetImportPid(const char* key, int32_t* pid, size_t num) {
  return apiCall("aclrtIpcMemSetImportPid", [&]() -> Outcome {
    const char* fn = "aclrtIpcMemSetImportPid";
    if (pid == nullptr || num == 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: pid is null or num is 0", fn);
    }
    for (std::size_t i = 0; i < num; ++i) {
      if (pid[i] <= 0) {
        return cohort::makeError(ErrorCode::kInvalidArgument, "{}: pid[{}] = {} is not a process",
                                 fn, i, pid[i]);
      }
    }
    std::lock_guard<std::mutex> lock(gIpcMu);
    KeyRecord* record = nullptr;
    ACL_RETURN_IF_FAILED(exportedLocked(fn, key, &record));
    std::uint32_t n = record->pidCount.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < num; ++i) {
      if (whitelisted(*record, pid[i])) continue;
      if (n == kMaxPids) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: the whitelist of '{}' is full ({} processes)", fn, key,
                                 kMaxPids);
      }
      record->pids[n++] = pid[i];
      record->pidCount.store(n, std::memory_order_release);  // the id is written first
    }
    return Status::Ok();
  });
}

aclError aclrtIpcMemImportPidInterServer(const char* /*key*/, aclrtServerPid* /*serverPids*/,
                                         size_t /*num*/) {
  return cohort::acl::notSupported("aclrtIpcMemImportPidInterServer",
                                   "memory is shared between the processes of one node only "
                                   "(there are no super-node servers)");
}

aclError aclrtIpcMemSetAttr(const char* key, aclrtIpcMemAttrType type, uint64_t attr) {
  return apiCall("aclrtIpcMemSetAttr", [&]() -> Outcome {
    const char* fn = "aclrtIpcMemSetAttr";
    if (type != ACL_RT_IPC_MEM_ATTR_ACCESS_LINK ||
        attr > ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: type {} must be ACL_RT_IPC_MEM_ATTR_ACCESS_LINK with a link "
                               "0..3 (got {})",
                               fn, static_cast<int>(type), attr);
    }
    std::lock_guard<std::mutex> lock(gIpcMu);
    KeyRecord* record = nullptr;
    ACL_RETURN_IF_FAILED(exportedLocked(fn, key, &record));
    record->link.store(static_cast<std::uint32_t>(attr), std::memory_order_relaxed);
    return Status::Ok();
  });
}

aclError aclrtIpcMemImportByKey(void** devPtr, const char* key, uint64_t flags) {
  return apiCall("aclrtIpcMemImportByKey", [&]() -> Outcome {
    const char* fn = "aclrtIpcMemImportByKey";
    if (devPtr == nullptr || key == nullptr ||
        flags > ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: needs devPtr, key and flags 0 or 1 (got {})", fn, flags);
    }
    std::lock_guard<std::mutex> lock(gIpcMu);
    auto again = imported().find(key);
    if (again != imported().end()) {
      ++again->second.count;
      *devPtr = again->second.user;
      return Status::Ok();
    }
    KeyRecord* record = nullptr;
    ACL_RETURN_IF_FAILED(openRecord(fn, key, &record));
    const std::int32_t self = static_cast<std::int32_t>(getpid());
    if (record->checkPid != 0 && !whitelisted(*record, self)) {
      (void)rt::memClose(record);
      return Outcome(ACL_ERROR_RT_NO_PERMISSION,
                     cohort::makeError(ErrorCode::kInvalidUsage,
                                       "{}: process {} is not on the whitelist of key '{}' "
                                       "(aclrtIpcMemSetImportPid)",
                                       fn, self, key));
    }
    const rt::MemHandle buffer = record->buffer;
    const std::uint64_t offset = record->offset;
    const int owner = logicalDevice(record->physicalDevice);
    (void)rt::memClose(record);  // what was needed is copied out
    void* base = nullptr;
    Status s = rt::memImport(buffer, &base);
    if (!s.ok()) return cohort::makeError(s.code(), "{}: key '{}': {}", fn, key, s.message());
    char* user = static_cast<char*>(base) + offset;
    int current = -1;
    if (flags == ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS && rt::getDevice(&current).ok() &&
        owner >= 0 && owner != current) {
      cohort::acl::enablePeerAccess(current, owner);
    }
    imported()[key] = Imported{user, base, 1};
    *devPtr = user;
    return Status::Ok();
  });
}

aclError aclrtIpcMemClose(const char* key) {
  return apiCall("aclrtIpcMemClose", [&]() -> Outcome {
    const char* fn = "aclrtIpcMemClose";
    if (key == nullptr)
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: key is null", fn);
    std::lock_guard<std::mutex> lock(gIpcMu);
    auto in = imported().find(key);
    if (in != imported().end()) {  // importers close first, so an import goes first here
      if (--in->second.count == 0) {
        COHORT_RETURN_IF_ERROR(rt::memClose(in->second.base));
        imported().erase(in);
      }
      return Status::Ok();
    }
    auto out = exported().find(key);
    if (out == exported().end()) {
      return badKey(fn, key, "was neither exported nor imported by this process");
    }
    out->second.record->open.store(0, std::memory_order_release);
    COHORT_RETURN_IF_ERROR(rt::sharedFree(out->second.record));
    exported().erase(out);
    return Status::Ok();
  });
}
